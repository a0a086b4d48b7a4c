#!/usr/bin/env bats
# Exercise 06-kqueue/idle-timer (fix): an idle timeout restarted by activity.
# Runs against $IMPL (solutions by default: the chapter's own echo-kqueue.c;
# `make ex` uses exercises, where the bug is planted).

load ../helpers/common
load ../helpers/echo_suite
load idle

setup() {
    SERVER_CMD=("$(impl_bin idle-timer echo-kqueue)")
}

@test "idle-timer: a message comes back" {
    echo_with_timer
}

@test "idle-timer -t 1: an active client (a line every 0.3 s for 2.4 s) is not closed" {
    local c i
    server_start "${SERVER_CMD[@]}" -p 0 -t 1
    conn_open c
    for ((i = 0; i < 8; i++)); do
        sleep 0.3
        expect_echo "$c" "still here $i"
    done
    exec {c}>&-
    suite_stop_clean
}

@test "idle-timer -t 1: an idle client is closed about a second after its last message" {
    local c ms
    server_start "${SERVER_CMD[@]}" -p 0 -t 1
    conn_open c
    expect_echo "$c" "then silence"
    ms=$(wait_eof "$c" 6) || server_gone "the idle client was not closed within 6 s (-t 1)"
    [ "$ms" -ge 700 ] && [ "$ms" -le 3000 ] ||
        fail "closed $ms ms after its last message: expected about 1000 (between 700 and 3000)"
    grep -q 'idle for 1 s' "$SERVER_ERR" || fail "expected 'closing fd=N: idle for 1 s' on stderr, got: $(cat "$SERVER_ERR")"
    exec {c}>&-
    suite_stop_clean
}
