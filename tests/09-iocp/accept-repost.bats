#!/usr/bin/env bats
# Exercise 09-iocp/accept-repost: echo-iocp keeps ACCEPT_SLOTS (16) AcceptEx
# calls posted on its listener; each completed accept must be posted again,
# or the server runs out of accepts after 16 clients. Runs against $IMPL
# (solutions by default; `make ex` uses exercises), under Wine (see
# wine.bash; servers are stopped with SIGINT).

load ../helpers/common
load ../helpers/echo_suite
load ../helpers/wine
load exercise

setup() { iocp_exercise_setup accept-repost 5; }

@test "accept-repost: 40 clients one after another, more than the 16 accept slots: the 17th and after are served too" {
    local i out
    suite_start
    for ((i = 1; i <= 40; i++)); do
        out=$(run_client -p "$PORT" -t 3 "client $i") ||
            server_gone "client $i was not answered (echo-client status $?; 3 = timeout): was its accept ever posted?"
        [ "$out" = "client $i" ] || fail "client $i: expected 'client $i', got '$out'"
    done
    suite_stop_clean
    grep -q '^echo-iocp: 40 connections served, 0 still allocated' "$SERVER_ERR" ||
        fail "expected 'echo-iocp: 40 connections served, 0 still allocated' at exit; stderr:
$(cat "$SERVER_ERR")"
}

@test "accept-repost: 50 clients at once, after 20 have come and gone: every one echoed" {
    suite_start
    run timeout 20 "$(tool_bin echo-load)" -p "$PORT" -c 20 -n 5 -l 100 -t 5
    [ "$status" -eq 0 ] || server_gone "echo-load (20 connections): $output"
    clients_at_once 50 '1 + (i * 7919) % 5000' -t 5 || server_gone "some of 50 clients were not echoed after 20 had come and gone"
    suite_stop_clean
}
