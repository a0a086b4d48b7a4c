#!/usr/bin/env bats
# Chapter 08: echo-uring's provided buffer ring, with few buffers on purpose:
# every buffer must go back to the ring after its send, a connection whose
# recv ended with ENOBUFS must get a new one, and a client that never reads
# must hold no more than its 8 buffers of the ring. Quick to fail: the mutants of uring-server.c
# (tests/meta/mutants/uring-*.patch) are run against this file.

load ../helpers/common
load ../helpers/echo_suite
load suite_extra

setup() { uring_server "$(chapter_bin echo-uring)"; }

@test "echo-uring: 8 buffers serve 500 messages and 1 MB: each goes back to the ring after its send" {
    local out
    server_start "${SERVER_CMD[@]}" -B 8 -v -p 0
    run timeout 30 "$(tool_bin echo-load)" -p "$PORT" -c 1 -n 500 -l 128 -t 10
    [ "$status" -eq 0 ] || server_gone "echo-load: $output"
    assert_output --partial "errors 0"
    payload "$BATS_TEST_TMPDIR/m" 1000000
    CLIENT_TIMEOUT=10 suite_echo_file "$BATS_TEST_TMPDIR/m"
    suite_stop_clean
    echo "# $(grep '^stats:' "$SERVER_ERR")" >&3
}

@test "echo-uring: when the ring runs dry (ENOBUFS) no connection stalls: its recv is re-armed" {
    suite_ring_runs_dry 10 "did not get their bytes back"
}

@test "echo-uring: a client that never reads gets its recv cancelled (backpressure), and resumes when it reads" {
    local got
    server_start "${SERVER_CMD[@]}" -B 64 -v -p 0
    flood_never_reading $((8 << 20))
    sleep 1
    # 64 buffers in all: if this client held them all, nobody else would be served
    local out
    out=$(run_client -p "$PORT" -t 5 "still served") ||
        server_gone "another client was not served while one never read (status $?)"
    [ "$out" = "still served" ] || fail "expected 'still served', got '$out'"
    # now it reads: everything comes back
    got=$(flood_read_back 20)
    flood_end # the writer is still writing only if the server stopped reading for good
    [ "$got" -eq "$FLOOD_BYTES" ] || server_gone "expected $FLOOD_BYTES bytes echoed after the client started reading, got $got"
    suite_stop_clean
    echo "# $(grep '^stats:' "$SERVER_ERR")" >&3
    [ "$(stat_of throttled)" -gt 0 ] || fail "the recv was never cancelled for backpressure: $(cat "$SERVER_ERR")"
    # The cancel lands late: the multishot recv has taken more buffers by
    # then. Those must be copied out, or this client holds the ring again.
    local held copied
    held=$(stat_of "most held") copied=$(stat_of "copied out")
    [ "${held:-99}" -le 8 ] ||
        fail "one connection held $held buffers of the ring at once, more than CONN_MAX_BUFS (8): what comes past the cap must be copied out"
    [ "${copied:-0}" -gt 0 ] || fail "no buffer was copied out: the recv never overshot its cap, and the test proved nothing"
}

@test "echo-uring: short sends (tiny SO_SNDBUF, slow reader) are completed, in order" {
    suite_short_sends -s 262144 -B 64
}
