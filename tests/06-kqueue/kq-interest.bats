#!/usr/bin/env bats
# Exercise 06-kqueue/kq-interest: EVFILT_READ and EVFILT_WRITE enabled and
# disabled through the changelist as the connection's state changes. Runs
# against $IMPL (solutions by default: the chapter's own echo-kqueue.c).
# The quickest tests that tell a wrong answer come first.

load ../helpers/common
load ../helpers/echo_suite
load loop

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

# The reference: 0 or 1 wake-ups in the second after the burst drained.
@test "kq-interest: once an 8 MiB burst that filled the socket has drained, the idle loop sleeps (WRITE disabled again)" {
    burst_then_quiet
    suite_stop_clean
}

# The reference: 0 wake-ups, 0% busy, over those 0.8 s.
@test "kq-interest: a client half-closes with its echo pending: no wake-up until it reads (READ off after EOF), then every byte and EOF" {
    half_close_waits_quietly
}

# The faults shim makes half the server's writes short and one in ten fail
# with EAGAIN (and interrupts some calls): output is left pending even while
# the socket has room, and only an enabled WRITE gets it out.
# The reference takes 1 to 3 s here.
@test "kq-interest: 8 MiB to a slow reader come back intact under short writes and EAGAIN (WRITE enabled while output waits)" {
    # shellcheck disable=SC2046 # one word per VAR=VALUE
    suite_start env $(faults_env FAULTS_SHORT_WRITE=50 FAULTS_EAGAIN=10 FAULTS_EINTR=10)
    # 1 MiB written per turn, 64 KiB read after a 2 ms nap: the echo piles up
    # in the server's socket, and the rest must wait for EVFILT_WRITE.
    slow_reader_mib 8 10 bytes
    suite_stop_clean
    faults_injected short_writes eagain eintr
}

@test "kq-interest: a client that never reads: the server stops reading it, its memory stays bounded, others are served" {
    suite_never_reading_client
}
