#!/usr/bin/env bats
# Exercise 05-epoll-edge/accept-drain: accept until EAGAIN under EPOLLET, in
# batches of 64, and remember the clients still waiting. Runs against $IMPL
# (solutions by default: the chapter's own loop.c; `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite
load ../04-epoll/event-loop

setup() {
    SERVER_CMD=("$(impl_bin accept-drain echo-epoll-et)")
    gate_setup
}

teardown() {
    gate_teardown
}

@test "accept-drain: a client is served" {
    GATE=1
    suite_start
    client_echo "hello, edges"
    suite_stop_clean
}

@test "accept-drain: 30 clients that connect while the server is paused are all served within 5 s (one edge for all of them)" {
    GATE=1
    burst_while_paused 30
}

@test "accept-drain: 200 clients that connect while the server is paused are all served within 5 s (more than three batches of 64)" {
    GATE=1
    require_fds 300
    burst_while_paused 200
}

@test "accept-drain: every byte survives short reads and writes and EINTR from the faults shim, within 10 s" {
    faults_echo_within 10
    faults_injected short_reads short_writes eintr
}

@test "accept-drain: out of fds with 100 clients waiting, it sleeps (a retry a second at most), and serves again once they leave" {
    # Out of fds, the listener has clients waiting and accept() fails: a loop
    # that retries at once, every turn, is a busy loop until an fd frees.
    # The reference wakes about once a second (ACCEPT_RETRY_MS): 2 or 3
    # times in 2 s; the bound is twice that. A retry at once wakes it
    # thousands of times.
    fd_limit_wakeups_at_most 6
}

@test "accept-drain: out of fds (EMFILE), the clients left in the backlog are served once others leave" {
    suite_emfile_recovers
}
