#!/usr/bin/env bats
# Exercise 06-kqueue/kq-dispatch: the loop's dispatch of each kevent by its
# filter and udata. Runs against $IMPL (solutions by default: the chapter's
# own echo-kqueue.c).

load ../helpers/common
load ../helpers/echo_suite
load idle

setup() {
    SERVER_CMD=("$(impl_bin kq-dispatch echo-kqueue)")
}

@test "kq-dispatch: a message comes back, and SIGTERM stops the server with exit 0" {
    local c
    suite_start
    conn_open c
    expect_echo "$c" "hello, kqueue"
    exec {c}>&-
    suite_stop_clean
}

@test "kq-dispatch: 16 MiB to a slow reader come back intact (EVFILT_WRITE flushes the rest)" {
    suite_start
    # 1 MiB written per turn, 64 KiB read after a 2 ms nap: the echo piles up
    # in the server's socket, and the rest must wait for EVFILT_WRITE.
    slow_reader_mib 16 20 bytes
    suite_stop_clean
}

@test "kq-dispatch -t 1: an idle client is closed by its timer, an active one is not" {
    idle_closed_active_kept 6 6
    suite_stop_clean
}

@test "kq-dispatch: out of fds (EMFILE), the clients left in the backlog are served once others leave (the retry timer)" {
    suite_emfile_recovers
}

@test "kq-dispatch: SIGINT, like SIGTERM, stops the server with clients connected, exit 0" {
    SUITE_STOP_SIGNAL=INT suite_sigterm_with_clients
}
