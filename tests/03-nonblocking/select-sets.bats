#!/usr/bin/env bats
# Exercise 03-nonblocking/select-sets: server__fill_sets() of echo-select.
# Runs against $IMPL (solutions: the chapter's own code; `make ex` uses the
# learner's copy of echo-select.c).

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(impl_bin select-sets echo-select)")
}

@test "select-sets: a message comes back, and 20 clients at once are all served" {
    suite_start
    client_echo "hello, select"
    clients_at_once 20 '1000 + i * 5000' -t 20 || server_gone "some of 20 clients connected at once did not get their bytes back"
    suite_stop_clean
}

@test "select-sets: 8 MiB to a slow reader arrive intact (output waits for the write set)" {
    suite_start
    slow_reader_mib 8 60
    suite_stop_clean
}

@test "select-sets: an idle server with a connected client sleeps in select() (strace: no busy loop)" {
    untraced suite_syscalls_idle '(select|pselect6)'
}
