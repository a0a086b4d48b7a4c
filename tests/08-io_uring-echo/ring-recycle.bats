#!/usr/bin/env bats
# Exercise 08-io_uring-echo/ring-recycle: a buffer of the provided ring is
# the server's from the recv CQE that names it until its bytes are echoed;
# then it must go back to the ring. echo-uring runs with 8 buffers (-B 8),
# so a buffer that never goes back shows within a few messages. Runs
# against $IMPL (solutions by default; `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite
load suite_extra

setup() { uring_server "$(impl_bin ring-recycle echo-uring)"; }

@test "ring-recycle: 8 buffers in the ring serve 500 messages: each goes back to the ring after its send" {
    server_start "${SERVER_CMD[@]}" -B 8 -v -p 0
    run timeout 20 "$(tool_bin echo-load)" -p "$PORT" -c 1 -n 500 -l 128 -t 5
    [ "$status" -eq 0 ] ||
        server_gone "echo-load (500 messages over 8 buffers; a stall after about 8 means the buffers never come back): $output"
    assert_output --partial "errors 0"
    suite_stop_clean
}

@test "ring-recycle: 1 MB through 8 buffers of 4 KiB, then 4 clients in turn: the ring never runs out for good" {
    local i out
    server_start "${SERVER_CMD[@]}" -B 8 -v -p 0
    payload "$BATS_TEST_TMPDIR/m" 1000000
    CLIENT_TIMEOUT=5 suite_echo_file "$BATS_TEST_TMPDIR/m"
    for ((i = 0; i < 4; i++)); do
        out=$(run_client -p "$PORT" -t 5 "client $i") || server_gone "client $i was not served (status $?)"
        [ "$out" = "client $i" ] || fail "client $i: expected 'client $i', got '$out'"
    done
    suite_stop_clean
    echo "# $(grep '^stats:' "$SERVER_ERR")" >&3
}
