#!/usr/bin/env bats
# Exercise 05-epoll-edge/read-once (fix): under EPOLLET, read until EAGAIN.
# Runs against $IMPL (solutions by default: the chapter's own conn.c; `make
# ex` uses exercises, where the bug is planted).

load ../helpers/common
load ../helpers/echo_suite
load ../04-epoll/event-loop

setup() {
    SERVER_CMD=("$(impl_bin read-once echo-epoll-et)")
}

@test "read-once: a message comes back, and a second one on the same connection" {
    local fd
    suite_start
    conn_open fd
    expect_echo "$fd" "first"
    expect_echo "$fd" "second, on the same connection"
    exec {fd}>&-
    suite_stop_clean
}

@test "read-once: 96 KiB sent in one go to a paused server, with no further traffic, come back whole" {
    # More than one read() takes (64 KiB), and exactly one edge for all of it.
    suite_drains_message_sent_while_paused 98304
}

@test "read-once: a half-closed client gets every byte, then EOF" {
    # It takes milliseconds here; a short bound keeps a stalled echo quick to report.
    CLIENT_TIMEOUT=$((5 * $(san_slowdown))) suite_half_close
}

@test "read-once: idle with a client connected, the server does not wake at all (readable is cleared by EAGAIN, and only then)" {
    # The chapter's server sleeps in epoll_wait(): 0 wake-ups in 2 s, run
    # after run; one allowed for luck. A connection whose readable flag is
    # never cleared keeps its place on the ready list, and the loop polls
    # with a timeout of 0 for ever.
    idle_wakeups_at_most 1
}

@test "read-once: a client that sends and never reads does not grow server memory, and others are served" {
    # Reading until EAGAIN stops at the backpressure bound (CONN_PENDING_MAX):
    # a drain that ignores it buffers all the client sends.
    suite_never_reading_client
}

@test "read-once: every byte survives short reads and writes and EINTR from the faults shim, within 10 s" {
    # No fake EAGAIN: an edge-triggered server believes EAGAIN, and the shim
    # would return it with bytes still waiting, which no kernel does. Short
    # reads leave bytes behind after almost every read: only a loop that
    # reads on until EAGAIN gets them. The reference takes about a second.
    faults_echo_within 10
    faults_injected short_reads short_writes eintr
}
