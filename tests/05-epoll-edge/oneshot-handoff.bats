#!/usr/bin/env bats
# Exercise 05-epoll-edge/oneshot-handoff: worker threads share one epoll with
# EPOLLONESHOT; after serving a connection a worker re-arms it and lets go.
# Runs against $IMPL (solutions by default: the chapter's own
# echo-epoll-oneshot.c; `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(impl_bin oneshot-handoff echo-epoll-oneshot)" -w 4)
}

@test "oneshot-handoff: messages come back again and again on one connection (re-armed after each event)" {
    suite_start
    echoes_on_one_conn 5
    suite_stop_clean
}

@test "oneshot-handoff: 4 workers, 100 clients: no event ever finds its connection still held by another worker" {
    local out
    suite_start
    out=$(timeout 120 "$(tool_bin echo-load)" -p "$PORT" -c 100 -n 200 -l 200 -D 4 2>&1) ||
        server_gone "echo-load failed: $out"
    grep -q 'errors 0' <<<"$out" || fail "echo-load saw errors: $out"
    suite_stop_clean
    # a second owner aborts the server (status 134) with a message
    ! grep -q 'still serves it' "$SERVER_ERR" || fail "$(cat "$SERVER_ERR")"
    grep -Eq '^owner check: none of [1-9][0-9]* events found its connection held by another worker' "$SERVER_OUT" ||
        fail "no owner check line: $(cat "$SERVER_OUT")"
}

@test "oneshot-handoff: 96 KiB sent in one go to a paused server come back whole (the re-arm reports what is left)" {
    suite_drains_message_sent_while_paused 98304
}

@test "oneshot-handoff: 16 MiB to a slow reader come back intact (re-armed for EPOLLOUT while output waits)" {
    suite_start
    slow_reader_mib 16 20 bytes
    suite_stop_clean
}
