#!/usr/bin/env bats
# Exercise 05-epoll-edge/read-once (fix): under EPOLLET, read until EAGAIN.
# Runs against $IMPL (solutions by default: the chapter's own conn.c; `make
# ex` uses exercises, where the bug is planted).

load ../helpers/common
load ../helpers/echo_suite

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
