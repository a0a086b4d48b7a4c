#!/usr/bin/env bats
# Exercise 11-one-api/ready-eagain: on a readiness backend (epoll here), an
# op whose system call says EAGAIN is not over: it waits in its fd's queue
# for the next readiness event. Runs against $IMPL (solutions by default;
# `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite
load exercise

setup() { aio_exercise_setup ready-eagain 10; }

@test "ready-eagain: an accept and a recv with nothing to do yet waits, then completes: aio-test net on epoll" {
    aio_test_net "it hung"
}

@test "ready-eagain: echo-aio waits for clients: client A connects and stays silent, client B is served, then A" {
    local a out
    server_start "${SERVER_CMD[@]}" -p 0
    sleep 0.2 # no client yet: the accept must wait, not fail
    conn_open a
    out=$(run_client -p "$PORT" -t 5 "hello from B") ||
        server_gone "client B was not served while client A sat idle (echo-client status $?)"
    [ "$out" = "hello from B" ] || fail "expected 'hello from B', got '$out'"
    sleep 0.2 # A's recv has found nothing: it must wait for A's bytes
    expect_echo "$a" "A is still served"
    exec {a}>&-
    suite_stop_clean
}
