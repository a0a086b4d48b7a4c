#!/usr/bin/env bats
# Chapter 08: echo-uring's provided buffer ring, with few buffers on purpose:
# every buffer must go back to the ring after its send, a connection whose
# recv ended with ENOBUFS must get a new one, and a client that never reads
# must hold no more than its 8 buffers of the ring. Quick to fail: the mutants of uring-server.c
# (tests/meta/mutants/uring-*.patch) are run against this file.

load ../helpers/common
load ../helpers/echo_suite
load suite_extra

setup() {
    SERVER_CMD=("$(chapter_bin echo-uring)")
    require_uring
}

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
    local n
    server_start "${SERVER_CMD[@]}" -B 8 -s 1024 -v -p 0
    clients_at_once 16 200000 -t 10 || server_gone "some of 16 clients sharing 8 buffers did not get their bytes back"
    suite_stop_clean
    n=$(stat_of ENOBUFS)
    echo "# 16 clients x 200 KB over 8 buffers of 1 KiB: $(grep '^stats:' "$SERVER_ERR")" >&3
    [ "${n:-0}" -gt 0 ] || fail "the ring never ran dry (ENOBUFS 0): the test proved nothing"
}

@test "echo-uring: a client that never reads gets its recv cancelled (backpressure), and resumes when it reads" {
    local h wpid got n=$((8 << 20))
    server_start "${SERVER_CMD[@]}" -B 64 -v -p 0
    conn_open h
    head -c "$n" /dev/zero >&"$h" 3>&- &
    wpid=$!
    _course_pids+=("$wpid")
    sleep 1
    # 64 buffers in all: if this client held them all, nobody else would be served
    local out
    out=$(run_client -p "$PORT" -t 5 "still served") ||
        server_gone "another client was not served while one never read (status $?)"
    [ "$out" = "still served" ] || fail "expected 'still served', got '$out'"
    # now it reads: everything comes back
    got=$(timeout 20 head -c "$n" <&"$h" | wc -c)
    kill "$wpid" 2>/dev/null || true # still writing only if the server stopped reading for good
    wait "$wpid" 2>/dev/null || true
    [ "$got" -eq "$n" ] || server_gone "expected $n bytes echoed after the client started reading, got $got"
    exec {h}>&-
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
