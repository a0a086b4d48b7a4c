#!/usr/bin/env bats
# Exercise 05-epoll-edge/ready-list: the loop's own FIFO of watches with work
# left that no edge will announce. Runs against $IMPL (solutions by default:
# the chapter's own loop.c; `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(impl_bin ready-list echo-epoll-et)")
}

@test "ready-list: messages come back, again and again on the same connection" {
    suite_start
    echoes_on_one_conn 5
    suite_stop_clean
}

@test "ready-list: -R 1: 96 KiB that need two reads, sent while the server is paused, come back whole (the budget's leftover is remembered)" {
    SERVER_CMD+=(-R 1)
    suite_drains_message_sent_while_paused 98304
}

@test "ready-list: 100 clients that connect while the server is paused are all served (the listener is requeued after a batch)" {
    untraced suite_accepts_burst_while_paused 100
}

@test "ready-list: while one client floods, a ping-pong client's slowest echo stays under 200 ms" {
    suite_fair_under_flood 200
}
