#!/usr/bin/env bats
# Exercise 09-iocp/accept-repost: echo-iocp keeps ACCEPT_SLOTS (16) AcceptEx
# calls posted on its listener; each completed accept must be posted again,
# or the server runs out of accepts after 16 clients. Runs against $IMPL
# (solutions by default; `make ex` uses exercises), under Wine (see
# wine.bash; servers are stopped with SIGINT). The quickest tests that tell
# a wrong answer come first.

load ../helpers/common
load ../helpers/echo_suite
load ../helpers/wine
load exercise

setup() { iocp_exercise_setup accept-repost 5; }

# At shutdown every posted accept is cancelled, and its completion drained:
# a slot posted again then is an accept that nothing will ever complete.
@test "accept-repost: Ctrl-C stops it within 3 s, exit 0: the accepts cancelled at shutdown are not posted again" {
    suite_start
    client_echo "one client" 5
    iocp_stops 3
    require_freed 1
}

@test "accept-repost: 40 clients one after another, more than the 16 accept slots: the 17th and after are served too" {
    local i out
    suite_start
    for ((i = 1; i <= 40; i++)); do
        out=$(run_client -p "$PORT" -t 3 "client $i") ||
            server_gone "client $i was not answered (echo-client status $?; 3 = timeout): was its accept ever posted?"
        [ "$out" = "client $i" ] || fail "client $i: expected 'client $i', got '$out'"
    done
    iocp_stops 3
    require_freed 40
}

# echo-load opens all its connections before the first message: 150 clients
# that come together, after 20 that came and went, whatever the number of
# slots posted at the start.
@test "accept-repost: 150 clients at once, after 20 have come and gone: every one accepted and echoed" {
    require_fds 400
    suite_start
    run timeout 20 "$(tool_bin echo-load)" -p "$PORT" -c 20 -n 5 -l 100 -t 5
    [ "$status" -eq 0 ] || server_gone "echo-load (20 connections): $output"
    run timeout 30 "$(tool_bin echo-load)" -p "$PORT" -c 150 -n 3 -l 1000 -t 10
    [ "$status" -eq 0 ] || server_gone "echo-load (150 connections at once, after 20): $output"
    assert_output --partial "errors 0"
    iocp_stops 5
    require_freed 170
}
