#!/usr/bin/env bats
# Exercise 06-kqueue/kq-interest: EVFILT_READ and EVFILT_WRITE enabled and
# disabled through the changelist as the connection's state changes. Runs
# against $IMPL (solutions by default: the chapter's own echo-kqueue.c).

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(impl_bin kq-interest echo-kqueue)")
}

@test "kq-interest: a message comes back, and a second one" {
    local c
    suite_start
    conn_open c
    expect_echo "$c" "hello, kqueue"
    expect_echo "$c" "and again"
    exec {c}>&-
    suite_stop_clean
}

@test "kq-interest: 16 MiB to a slow reader come back intact (WRITE enabled while output waits)" {
    suite_start
    # 1 MiB written per turn, 64 KiB read after a 2 ms nap: the echo piles up
    # in the server's socket, and the rest must wait for EVFILT_WRITE.
    slow_reader_mib 16 20 bytes
    suite_stop_clean
}

@test "kq-interest: after a burst that filled the socket is drained, the idle server does not spin (WRITE disabled again)" {
    suite_idle_after_burst_no_spin
}

@test "kq-interest: a client that never reads: the server stops reading it, its memory stays bounded, others are served" {
    suite_never_reading_client
}
