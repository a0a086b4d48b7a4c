#!/usr/bin/env bats
# Exercise 01-blocking/write-all: a blocking echo server whose write_all() the
# learner writes. Runs against $IMPL (solutions by default; `make ex` sets
# IMPL=exercises).

bats_require_minimum_version 1.5.0
load ../helpers/common

setup() {
    SERVER_BIN="$(impl_bin write-all echo-write-all)"
}

@test "write-all: a message comes back" {
    server_start "$SERVER_BIN" -p 0
    run run_client -p "$PORT" "hello, blocking world"
    require_server_alive
    assert_success
    assert_output "hello, blocking world"
    stop_within 10 TERM
}

@test "write-all: every byte of 1 MiB comes back through short writes and EINTR" {
    local in="$BATS_TEST_TMPDIR/in"
    payload "$in" $((1024 * 1024))
    server_start env $(faults_env FAULTS_SHORT_WRITE=50 FAULTS_EINTR=20) "$SERVER_BIN" -p 0
    # the reference: about a second; a loop that lost bytes leaves the
    # client waiting for them until this timeout
    CLIENT_TIMEOUT=$((8 * $(san_slowdown))) run_client -p "$PORT" <"$in" >"$in.out" || true
    require_server_alive
    cmp -s "$in" "$in.out" ||
        fail "sent $(stat -c %s "$in") bytes, got $(stat -c %s "$in.out") back; first difference: $(cmp "$in" "$in.out" 2>&1 | head -n 1)"
    stop_within 10 TERM
    faults_injected short_writes eintr
}

@test "write-all: a client that resets mid-echo does not stop the next one being served" {
    local in="$BATS_TEST_TMPDIR/in" i
    payload "$in" 300000
    server_start "$SERVER_BIN" -p 0
    for ((i = 0; i < 5; i++)); do
        run_client -p "$PORT" --reset <"$in" >/dev/null || true
    done
    require_server_alive
    # served at once by a server that closed the reset clients (the
    # reference: well under a second); one still writing to a dead
    # connection never gets to it
    CLIENT_TIMEOUT=5 run run_client -p "$PORT" after-resets
    require_server_alive
    assert_success
    assert_output "after-resets"
    stop_within 10 TERM
}

@test "write-all: SIGTERM while blocked writing to a client that never reads exits 0 within 5 s" {
    server_start "$SERVER_BIN" -p 0
    # We send and never read: the server's echo fills our receive buffer and
    # its send buffer, and its write() sleeps.
    flood_never_reading
    wait_blocked_in write
    stop_within 5 TERM
    flood_end
}
