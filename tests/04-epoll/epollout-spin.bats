#!/usr/bin/env bats
# Exercise 04-epoll/epollout-spin (fix): EPOLLOUT only while output waits.
# Runs against $IMPL (solutions by default: the chapter's own files; `make ex`
# uses exercises, where the bug is planted).

load ../helpers/common
load ../helpers/echo_suite
load event-loop

setup() {
    SERVER_CMD=("$(impl_bin epollout-spin echo-epoll-lt)")
}

@test "epollout-spin: a message comes back" {
    suite_start
    client_echo "hello, epoll"
    suite_stop_clean
}

@test "epollout-spin: idle with a client connected, the server does not wake at all (a nap in the loop is still a busy loop)" {
    # The chapter's server sleeps in epoll_wait() and is never scheduled:
    # 0 wake-ups in 2 s, run after run; one allowed for luck. A usleep() in
    # the loop keeps the CPU time low and still wakes hundreds of times.
    idle_wakeups_at_most 1
}

@test "epollout-spin: 16 MiB to a slow reader come back intact within 10 s (EPOLLOUT still armed while output waits)" {
    # The chapter's server takes under a second here. A server that never
    # asks for EPOLLOUT leaves the tail of the echo waiting for ever.
    suite_start
    slow_reader_mib 16 $((10 * $(san_slowdown)))
    suite_stop_clean
}

@test "epollout-spin: after a 16 MiB burst that filled the socket has drained, the idle server does not wake at all" {
    # EPOLLOUT is needed while the burst waits, and must go once it is out.
    # The reference: 0 wake-ups in 2 s; one allowed for luck.
    idle_wakeups_after_burst_at_most 1
}

@test "epollout-spin: every byte survives short reads and writes, EINTR and EAGAIN from the faults shim, within 10 s" {
    # Short writes and a fake "socket full" leave output pending: EPOLLOUT
    # must be armed for it, and dropped again once it is out. The chapter's
    # server takes about a second.
    faults_echo_within 10 FAULTS_SHORT_READ=30 FAULTS_SHORT_WRITE=50 FAULTS_EINTR=10 FAULTS_EAGAIN=10
    faults_injected short_reads short_writes eintr eagain
}
