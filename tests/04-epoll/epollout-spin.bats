#!/usr/bin/env bats
# Exercise 04-epoll/epollout-spin (fix): EPOLLOUT only while output waits.
# Runs against $IMPL (solutions by default: the chapter's own files; `make ex`
# uses exercises, where the bug is planted).

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(impl_bin epollout-spin echo-epoll-lt)")
}

@test "epollout-spin: a message comes back" {
    suite_start
    client_echo "hello, epoll"
    suite_stop_clean
}

@test "epollout-spin: an idle server with a connected client does not spin" {
    suite_idle_no_spin
}

@test "epollout-spin: after a burst that filled the socket is drained, the idle server does not spin" {
    suite_idle_after_burst_no_spin
}

@test "epollout-spin: 16 MiB to a slow reader come back intact" {
    suite_start
    slow_reader_mib 16 60
    suite_stop_clean
}
