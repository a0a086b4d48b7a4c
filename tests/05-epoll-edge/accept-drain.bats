#!/usr/bin/env bats
# Exercise 05-epoll-edge/accept-drain: accept until EAGAIN under EPOLLET, in
# batches of 64, and remember the clients still waiting. Runs against $IMPL
# (solutions by default: the chapter's own loop.c; `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(impl_bin accept-drain echo-epoll-et)")
}

@test "accept-drain: a client is served" {
    suite_start
    client_echo "hello, edges"
    suite_stop_clean
}

@test "accept-drain: 30 clients that connect while the server is paused are all served (one edge for all of them)" {
    suite_accepts_burst_while_paused 30
}

@test "accept-drain: 100 clients that connect while the server is paused are all served (more than one batch of 64)" {
    untraced suite_accepts_burst_while_paused 100
}

@test "accept-drain: out of fds (EMFILE), the clients left in the backlog are served once others leave" {
    suite_emfile_recovers
}
