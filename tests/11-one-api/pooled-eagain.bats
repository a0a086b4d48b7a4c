#!/usr/bin/env bats
# Exercise 11-one-api/pooled-eagain: a pooled recv (CIO_RECV_POOLED) takes a
# pool buffer only for the recv() call that may fill it; when that call
# finds nothing (EAGAIN), at end of stream or on an error, the buffer goes
# back to the pool at once. echo-aio runs on epoll with a pool of 4 buffers
# (CIO_BUFS=4), so a buffer kept by mistake shows within a few messages.
# Runs against $IMPL (solutions by default; `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite
load exercise

setup() {
    aio_exercise_setup pooled-eagain 5
    export CIO_BUFS=4
}

@test "pooled-eagain: 4 pool buffers, 30 messages in turn on one connection: a recv that finds nothing gives its buffer back" {
    local a i
    server_start "${SERVER_CMD[@]}" -p 0
    conn_open a
    for ((i = 1; i <= 30; i++)); do
        expect_echo "$a" "message $i"
    done
    exec {a}>&-
    suite_stop_clean
}

@test "pooled-eagain: 4 pool buffers, 10 clients in turn, then 10 idle ones and one more: no buffer is kept by a silent client" {
    local i fds=() fd out
    server_start "${SERVER_CMD[@]}" -p 0
    for ((i = 1; i <= 10; i++)); do
        out=$(run_client -p "$PORT" -t 3 "client $i") || server_gone "client $i was not served (status $?)"
        [ "$out" = "client $i" ] || fail "client $i: expected 'client $i', got '$out'"
    done
    for ((i = 0; i < 10; i++)); do
        conn_open fd
        fds+=("$fd")
    done
    sleep 0.3
    out=$(run_client -p "$PORT" -t 3 "one more") ||
        server_gone "with 10 silent clients connected, a new client was not served: do their recvs hold the pool's 4 buffers?"
    [ "$out" = "one more" ] || fail "expected 'one more', got '$out'"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    suite_stop_clean
}

@test "pooled-eagain: 4 pool buffers, 6 clients that reset before sending: a recv that fails gives its buffer back" {
    local i before after t0 out
    server_start "${SERVER_CMD[@]}" -p 0
    client_echo "warm up" 3
    before=$(fd_count "$SERVER_PID")
    for ((i = 1; i <= 6; i++)); do
        # nothing sent, then an RST: the server's recv takes a buffer and
        # fails with ECONNRESET
        run_client -p "$PORT" -t 3 --reset </dev/null >/dev/null 2>&1 || true
    done
    # every reset connection closed: each failed recv has run
    t0=$SECONDS
    while after=$(fd_count "$SERVER_PID") && [ "$after" -gt "$before" ] && [ $((SECONDS - t0)) -lt 3 ]; do
        sleep 0.05
    done
    [ "$after" -le "$before" ] || fail "expected the 6 reset connections closed ($before fds), got $after fds"
    out=$(run_client -p "$PORT" -t 3 "one more") ||
        server_gone "after 6 clients reset, a new client was not served: do the recvs that failed keep the pool's 4 buffers?"
    [ "$out" = "one more" ] || fail "expected 'one more', got '$out'"
    suite_stop_clean
}
