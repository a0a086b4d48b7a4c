#!/usr/bin/env bats
# Exercise 10-threadpool/handoff: finished jobs go back to the loop thread
# (a done list and an eventfd wake-up). Runs against $IMPL (solutions by
# default; `make ex` uses exercises).

load ../helpers/common
load files

setup_file() {
    export ROOT="$BATS_FILE_TMPDIR/root"
    make_root "$ROOT"
    # pool-check runs once; each test below looks at the checks it cares about.
    local bin="$BUILD/$IMPL/10-threadpool/handoff/pool-check" status=0
    if [ -x "$bin" ]; then
        timeout 60 "$bin" >"$BATS_FILE_TMPDIR/pool-check.out" 2>&1 || status=$?
        echo "$status" >"$BATS_FILE_TMPDIR/pool-check.status"
    fi
}

# A reply that has not come after 10 s will not come: fail then, not after 50.
export FETCH_TIMEOUT=10

setup() {
    SERVER=("$(impl_bin handoff file-server)" -r "$ROOT")
}

# pool_check_ok CHECK...: pool-check built with this handoff.c passed each named check.
pool_check_ok() {
    local c out status
    impl_bin handoff pool-check >/dev/null
    out="$(cat "$BATS_FILE_TMPDIR/pool-check.out")"
    status="$(cat "$BATS_FILE_TMPDIR/pool-check.status")"
    for c in "$@"; do
        grep -qF "ok - $c" <<<"$out" || fail "pool-check (status $status): expected 'ok - $c'
$out"
    done
}

@test "handoff: every job's done callback runs exactly once, on the loop thread" {
    pool_check_ok "every job's done callback runs exactly once" \
        "every done callback runs on the loop thread"
}

@test "handoff: jobs that finished while the loop was busy all come back from one pool_drain()" {
    pool_check_ok "8 jobs that finished while the loop was busy come back in one pool_drain()"
}

@test "handoff: after a drain, the wake fd is quiet: the loop can sleep" {
    pool_check_ok "once everything is drained, pool_fd() is not readable"
}

@test "handoff: a done callback can submit more work; shutdown cancels what never started" {
    pool_check_ok "a done callback can submit the next job (100 in a chain)" \
        "POOL_CANCEL: the running job finishes, the queued one gets -ECANCELED, on the loop thread" \
        "POOL_FINISH: every queued job runs before shutdown returns"
}

@test "handoff: file-server sends a small file and a 5 MiB binary file intact" {
    server_start "${SERVER[@]}" -p 0
    fetch_cmp f4097.bin big.bin f0.bin
    stop_within 5
}

@test "handoff: 30 clients at once each get their file" {
    local i pids=() failed=0 files=(f1.bin f4096.bin f65536.bin)
    server_start "${SERVER[@]}" -p 0 -w 3
    for ((i = 0; i < 30; i++)); do
        timeout --foreground 60 "$FILE_CLIENT" -p "$PORT" -t 10 -o "$BATS_TEST_TMPDIR/c$i" "${files[$((i % 3))]}" &
        pids+=($!)
    done
    for ((i = 0; i < 30; i++)); do
        wait "${pids[$i]}" || failed=1
        cmp -s "$ROOT/${files[$((i % 3))]}" "$BATS_TEST_TMPDIR/c$i" || failed=1
    done
    [ "$failed" -eq 0 ] || server_gone "some of 30 clients did not get their file"
    stop_within 5
}

@test "handoff: slow reads finishing close together all reach their clients" {
    local i pids=() failed=0
    server_start "${SERVER[@]}" -p 0 -w 4 -s 200
    for ((i = 0; i < 8; i++)); do
        timeout --foreground 60 "$FILE_CLIENT" -p "$PORT" -t 10 -o "$BATS_TEST_TMPDIR/s$i" slow.bin &
        pids+=($!)
    done
    for ((i = 0; i < 8; i++)); do
        wait "${pids[$i]}" || failed=1
        cmp -s "$ROOT/slow.bin" "$BATS_TEST_TMPDIR/s$i" || failed=1
    done
    [ "$failed" -eq 0 ] || server_gone "some of 8 slow reads never reached their client"
    stop_within 5
}

@test "handoff: an idle file-server does not spin after serving" {
    local hz ticks t0
    server_start "${SERVER[@]}" -p 0
    fetch_cmp f4096.bin f1.bin
    hz=$(getconf CLK_TCK)
    t0=$(cpu_ticks "$SERVER_PID")
    sleep 2
    ticks=$(($(cpu_ticks "$SERVER_PID") - t0))
    [ $((ticks * 4)) -lt $((2 * hz)) ] ||
        fail "the idle server used $ticks CPU ticks ($hz per second) in 2 s: the wake fd stays readable?"
    stop_within 5
}

@test "handoff: SIGTERM with reads in flight exits 0" {
    local i
    server_start "${SERVER[@]}" -p 0 -w 1 -s 300
    fetch_cmp f1.bin
    for ((i = 0; i < 3; i++)); do
        timeout --foreground 30 "$FILE_CLIENT" -p "$PORT" -o /dev/null slow.bin 2>/dev/null &
    done
    wait_stat queued 2
    stop_within 5
    wait
}
