#!/usr/bin/env bats
# Exercise 02-threads/pool-stop: pool_signal_main() of echo-pool, which wakes
# every thread of the pool on SIGTERM. Runs against $IMPL (solutions: the
# chapter's own code; `make ex` uses the learner's copy).

load ../helpers/common
load pool

setup() {
    SERVER_BIN="$(impl_bin pool-stop echo-pool)"
}

@test "pool-stop: SIGTERM with every worker busy, a client queued and the acceptor waiting exits 0 within 5 s" {
    local fds=() fd i line
    pool_stop_when_full "$SERVER_BIN"
    for i in 0 1; do
        fd=${fds[$i]}
        if read -r -t 5 line <&"$fd"; then
            fail "busy client $i: expected EOF after the stop, got '$line'"
        elif [ $? -gt 128 ]; then
            fail "busy client $i: its connection was still open 5 s after the server exited"
        fi
    done
    for fd in "${fds[@]}"; do exec {fd}>&-; done
}

@test "pool-stop: SIGTERM with idle workers only exits 0 within 5 s" {
    server_start "$SERVER_BIN" -p 0 -w 4
    client_echo "served, then gone"
    stop_within 5
}

@test "pool-stop: SIGTERM with one busy worker and three idle exits 0 within 5 s" {
    local a
    server_start "$SERVER_BIN" -p 0 -w 4
    conn_open a
    expect_echo "$a" "one busy worker"
    stop_within 5
    exec {a}>&-
}
