#!/usr/bin/env bats
# Exercise 09-iocp/op-reference: a connection is shared by whoever holds a
# reference: the "open" one, and one per posted operation, dropped when its
# completion has been handled. Runs against $IMPL (solutions by default;
# `make ex` uses exercises), under Wine (see wine.bash; servers are stopped
# with SIGINT).

load ../helpers/common
load ../helpers/echo_suite
load ../helpers/wine
load exercise

setup() { iocp_exercise_setup op-reference 10; }

@test "op-reference: a connection lives through many operations, each holding its reference: 5 messages in turn" {
    local a i
    suite_start
    conn_open a
    for ((i = 1; i <= 5; i++)); do
        expect_echo "$a" "message $i"
    done
    exec {a}>&-
    suite_stop_clean
}

@test "op-reference: 20 clients of 50 messages each, then shutdown: every reference dropped once, 0 still allocated" {
    suite_start
    run timeout 30 "$(tool_bin echo-load)" -p "$PORT" -c 20 -n 50 -l 200 -t 10
    [ "$status" -eq 0 ] || server_gone "echo-load: $output"
    assert_output --partial "errors 0"
    suite_stop_clean
    grep -q '^echo-iocp: 20 connections served, 0 still allocated' "$SERVER_ERR" ||
        fail "expected 'echo-iocp: 20 connections served, 0 still allocated' at exit; stderr:
$(cat "$SERVER_ERR")"
}
