#!/usr/bin/env bats
# Exercise 09-iocp/op-reference: a connection is shared by whoever holds a
# reference: the "open" one, and one per posted operation, dropped when its
# completion has been handled. Runs against $IMPL (solutions by default;
# `make ex` uses exercises), under Wine (see wine.bash; servers are stopped
# with SIGINT). The quickest tests that tell a wrong answer come first.

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
    iocp_stops 3
}

# The one moment an operation outlives its connection's "open" reference:
# at shutdown, conn_close() cancels each client's posted recv, and the
# recv's completion comes later. Its own reference must keep the
# connection until then. Wine's heap checking (WINEDEBUG=warn+heap) fills
# freed memory with 0xfeeefeee, so a completion that reaches a connection
# already freed crashes at once, instead of reading values that still
# look right (a freed socket: WSAENOTSOCK, error 10038).
@test "op-reference: Ctrl-C with 4 clients waiting, their recvs posted: each connection is freed after its cancelled recv completes, not before" {
    local a b c d
    suite_start env WINEDEBUG=warn+heap
    conn_open a
    conn_open b
    conn_open c
    conn_open d
    expect_echo "$a" "a recv is posted after this echo"
    expect_echo "$b" "and after this one"
    expect_echo "$c" "and this one"
    expect_echo "$d" "and this one"
    iocp_stops 5
    exec {a}>&- {b}>&- {c}>&- {d}>&-
    if grep -Eq 'Unhandled|error 10038|completed with an error' "$SERVER_ERR"; then
        fail "a completion reached a connection that was already freed (its socket closed); stderr:
$(cat "$SERVER_ERR")"
    fi
    require_freed 4
}

@test "op-reference: 20 clients of 50 messages each, then shutdown: every reference dropped once, 0 still allocated" {
    suite_start
    run timeout 30 "$(tool_bin echo-load)" -p "$PORT" -c 20 -n 50 -l 200 -t 10
    [ "$status" -eq 0 ] || server_gone "echo-load: $output"
    assert_output --partial "errors 0"
    iocp_stops 5
    require_freed 20
}
