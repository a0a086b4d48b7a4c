#!/usr/bin/env bats
# Exercise 02-threads/stop-all: registry_stop_all() of echo-threads, which
# wakes every worker and waits for the last. Runs against $IMPL (solutions:
# the chapter's own code; `make ex` uses the learner's copy).

load ../helpers/common

setup() {
    SERVER_BIN="$(impl_bin stop-all echo-threads)"
}

@test "stop-all: SIGTERM with 10 idle clients (workers asleep in read) exits 0 within 5 s, and every client sees EOF" {
    local fds=() fd i line
    server_start "$SERVER_BIN" -p 0
    for ((i = 0; i < 10; i++)); do
        conn_open fd
        fds+=("$fd")
        expect_echo "$fd" "client $i"
    done
    stop_within 5
    for i in "${!fds[@]}"; do
        fd=${fds[$i]}
        if read -r -t 5 line <&"$fd"; then
            fail "client $i: expected EOF after the stop, got '$line'"
        elif [ $? -gt 128 ]; then
            fail "client $i: its connection was still open 5 s after the server exited"
        fi
        exec {fd}>&-
    done
}

@test "stop-all: SIGTERM while a worker is asleep in write() to a client that never reads exits 0 within 5 s" {
    local last=-1 now i
    server_start "$SERVER_BIN" -p 0
    flood_never_reading
    # the worker's write() sleeps once the client's writes stall: the echo
    # has filled both directions' buffers
    for ((i = 0; i < 20; i++)); do
        sleep 0.25
        now=$(written_bytes "$FLOOD_PID") || break
        [ "$now" = "$last" ] && break
        last=$now
    done
    kill -0 "$FLOOD_PID" 2>/dev/null || fail "the client sent 32 MiB without reading: the server kept reading?"
    stop_within 5
    flood_end
}

@test "stop-all: SIGTERM with no client exits 0" {
    local out
    server_start "$SERVER_BIN" -p 0
    out=$(run_client -p "$PORT" -t 10 "served, then gone") || server_gone "echo-client failed (status $?)"
    stop_within 5
}
