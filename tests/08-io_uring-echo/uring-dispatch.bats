#!/usr/bin/env bats
# Exercise 08-io_uring-echo/uring-dispatch: what echo-uring-basic does when a
# recv or a send completes. Runs against $IMPL (solutions by default; `make
# ex` uses exercises).
# The shared echo suite's cases run from suite-uring-dispatch.bats (listed in
# common/servers.txt), which `make ex` runs once these pass.

load ../helpers/common
load ../helpers/echo_suite
load suite_extra

setup() { uring_server "$(impl_bin uring-dispatch echo-uring-basic)"; }

@test "uring-dispatch: a message comes back" {
    server_start "${SERVER_CMD[@]}" -p 0
    client_echo "hello, io_uring"
    suite_stop_clean
}

@test "uring-dispatch: several messages on one connection, each echoed before the next recv" {
    local a
    suite_start
    conn_open a
    expect_echo "$a" "first"
    expect_echo "$a" "second"
    expect_echo "$a" "third"
    exec {a}>&-
    suite_stop_clean
}

@test "uring-dispatch: short sends (tiny SO_SNDBUF, slow reader) are completed, in order" {
    suite_short_sends -s 262144
}
