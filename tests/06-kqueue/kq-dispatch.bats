#!/usr/bin/env bats
# Exercise 06-kqueue/kq-dispatch: the loop's dispatch of each kevent by its
# filter and udata. Runs against $IMPL (solutions by default: the chapter's
# own echo-kqueue.c). The quickest tests that tell a wrong answer come first.

load ../helpers/common
load ../helpers/echo_suite
load idle
load loop

setup() {
    SERVER_CMD=("$(impl_bin kq-dispatch echo-kqueue)")
}

@test "kq-dispatch: a message comes back, and SIGTERM stops the server with exit 0" {
    local c
    suite_start
    conn_open c
    expect_echo "$c" "hello, kqueue"
    exec {c}>&-
    signal_stops TERM 3
}

@test "kq-dispatch: SIGINT, like SIGTERM, stops the server with clients connected, exit 0" {
    local a b
    suite_start
    conn_open a
    conn_open b
    expect_echo "$a" "before SIGINT"
    signal_stops INT 3
    exec {a}>&- {b}>&-
}

@test "kq-dispatch: an event behind the one that closed its connection, in the same batch, is skipped" {
    stale_events_skipped
    signal_stops TERM 3
}

# Under the faults shim: short reads and writes, EINTR, and writes that fail
# with EAGAIN although the socket has room. The reference: 0 wake-ups in
# the second after the burst drained.
@test "kq-dispatch: 8 MiB that filled the socket come back under short writes and EAGAIN (EVFILT_WRITE flushes the rest), then the idle loop sleeps" {
    # shellcheck disable=SC2046 # one word per VAR=VALUE
    burst_then_quiet env $(faults_env FAULTS_SHORT_READ=30 FAULTS_SHORT_WRITE=50 FAULTS_EAGAIN=10 FAULTS_EINTR=10)
    signal_stops TERM 3
    faults_injected short_reads short_writes eagain eintr
}

@test "kq-dispatch -t 1: an idle client is closed by its timer, an active one is not" {
    idle_closed_active_kept 6 6
    signal_stops TERM 3
}

# The reference: 0 wake-ups in the second after the waiting clients were served.
@test "kq-dispatch: out of fds (EMFILE), the clients left in the backlog are served once others leave (the retry timer), then the loop sleeps" {
    emfile_then_quiet
}
