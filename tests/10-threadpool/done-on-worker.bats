#!/usr/bin/env bats
# Exercise 10-threadpool/done-on-worker: a pool thread runs a job's work;
# the job's done callback must run on the loop thread, which owns the
# connections (pool.c hands the job over through handoff.c). Runs against
# $IMPL (solutions by default; `make ex` uses exercises).

load ../helpers/common
load files

setup_file() {
    export ROOT="$BATS_FILE_TMPDIR/root"
    make_root "$ROOT"
    local bin="$BUILD/$IMPL/10-threadpool/done-on-worker/pool-check" status=0
    if [ -x "$bin" ]; then
        timeout 30 "$bin" >"$BATS_FILE_TMPDIR/pool-check.out" 2>&1 || status=$?
        echo "$status" >"$BATS_FILE_TMPDIR/pool-check.status"
    fi
}

export FETCH_TIMEOUT=10

setup() {
    SERVER=("$(impl_bin done-on-worker file-server)" -r "$ROOT")
}

pool_check_ok() {
    local c out status
    impl_bin done-on-worker pool-check >/dev/null
    out="$(cat "$BATS_FILE_TMPDIR/pool-check.out")"
    status="$(cat "$BATS_FILE_TMPDIR/pool-check.status")"
    for c in "$@"; do
        grep -qF "ok - $c" <<<"$out" || fail "pool-check (status $status): expected 'ok - $c'
$out"
    done
}

@test "done-on-worker: every done callback runs on the loop thread, exactly once" {
    pool_check_ok "every job's done callback runs exactly once" \
        "every done callback runs on the loop thread"
}

@test "done-on-worker: shutdown runs the last callbacks on the loop thread too" {
    pool_check_ok "POOL_CANCEL: the running job finishes, the queued one gets -ECANCELED, on the loop thread" \
        "POOL_FINISH: every queued job runs before shutdown returns"
}

@test "done-on-worker: 8 slow reads that finish together all reach their clients intact" {
    local i pids=() failed=0
    server_start "${SERVER[@]}" -p 0 -w 4 -s 200
    for ((i = 0; i < 8; i++)); do
        timeout --foreground 30 "$FILE_CLIENT" -p "$PORT" -t 10 -o "$BATS_TEST_TMPDIR/s$i" slow.bin &
        pids+=($!)
    done
    for ((i = 0; i < 8; i++)); do
        wait "${pids[$i]}" || failed=1
        cmp -s "$ROOT/slow.bin" "$BATS_TEST_TMPDIR/s$i" || failed=1
    done
    [ "$failed" -eq 0 ] || server_gone "some of 8 slow reads never reached their client"
    stop_within 5
}
