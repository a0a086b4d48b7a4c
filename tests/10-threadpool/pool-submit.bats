#!/usr/bin/env bats
# Exercise 10-threadpool/pool-submit: pool_submit() queues a job for the
# pool's threads under the pool's lock, refuses it when the queue is full
# (-EAGAIN) or the pool is stopping (-ESHUTDOWN), and wakes one thread. The
# loop thread calls it, so it never waits. Runs against $IMPL (solutions by
# default; `make ex` uses exercises).

load ../helpers/common
load files

setup_file() {
    export ROOT="$BATS_FILE_TMPDIR/root"
    make_root "$ROOT"
    # pool-check runs once; each test below looks at the checks it cares about.
    local bin="$BUILD/$IMPL/10-threadpool/pool-submit/pool-check" status=0
    if [ -x "$bin" ]; then
        timeout 30 "$bin" >"$BATS_FILE_TMPDIR/pool-check.out" 2>&1 || status=$?
        echo "$status" >"$BATS_FILE_TMPDIR/pool-check.status"
    fi
}

export FETCH_TIMEOUT=10

setup() {
    SERVER=("$(impl_bin pool-submit file-server)" -r "$ROOT")
}

# pool_check_ok CHECK...: pool-check built with this pool.c passed each named check.
pool_check_ok() {
    local c out status
    impl_bin pool-submit pool-check >/dev/null
    out="$(cat "$BATS_FILE_TMPDIR/pool-check.out")"
    status="$(cat "$BATS_FILE_TMPDIR/pool-check.status")"
    for c in "$@"; do
        grep -qF "ok - $c" <<<"$out" || fail "pool-check (status $status): expected 'ok - $c'
$out"
    done
}

@test "pool-submit: every submitted job runs, and its done callback runs exactly once" {
    pool_check_ok "every job's done callback runs exactly once" \
        "a done callback can submit the next job (100 in a chain)"
}

@test "pool-submit: a full queue refuses a job with -EAGAIN at once, and the counters say so" {
    pool_check_ok "a full queue refuses a job with -EAGAIN" \
        "the counters show 1 busy, 0 idle, 2 queued, the oldest waiting >= 50 ms"
}

@test "pool-submit: file-server with a full queue answers ERR BUSY instead of queueing without bound" {
    local a b
    server_start "${SERVER[@]}" -p 0 -w 1 -q 1 -s 1000
    timeout --foreground 30 "$FILE_CLIENT" -p "$PORT" -o /dev/null slow.bin &
    a=$!
    wait_stat busy 1
    timeout --foreground 30 "$FILE_CLIENT" -p "$PORT" -o /dev/null slow.bin &
    b=$!
    wait_stat queued 1
    fetch f1.bin
    assert_failure 1
    assert_output --regexp "^f1.bin: ERR BUSY "
    [ "$(stat_of rejected)" -eq 1 ] || fail "expected STATS rejected 1, got $(stat_of rejected)"
    stop_within 10
    wait "$a" "$b" 2>/dev/null || true
}

@test "pool-submit: 30 clients at once on 3 threads each get their file" {
    local i pids=() failed=0 files=(f1.bin f4096.bin f65536.bin)
    server_start "${SERVER[@]}" -p 0 -w 3
    for ((i = 0; i < 30; i++)); do
        timeout --foreground 30 "$FILE_CLIENT" -p "$PORT" -t 10 -o "$BATS_TEST_TMPDIR/c$i" "${files[$((i % 3))]}" &
        pids+=($!)
    done
    for ((i = 0; i < 30; i++)); do
        wait "${pids[$i]}" || failed=1
        cmp -s "$ROOT/${files[$((i % 3))]}" "$BATS_TEST_TMPDIR/c$i" || failed=1
    done
    [ "$failed" -eq 0 ] || server_gone "some of 30 clients did not get their file"
    stop_within 5
}
