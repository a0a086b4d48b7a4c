#!/usr/bin/env bats
# Exercise 09-iocp/iocp-dispatch: the completion dispatch of an IOCP echo
# server. Runs against $IMPL (solutions by default; `make ex` uses exercises),
# under Wine (see wine.bash; servers are stopped with SIGINT).

load ../helpers/common
load ../helpers/echo_suite
load ../helpers/wine
load exercise

# A working server echoes these payloads in well under a second; a
# dispatch that stalls a connection should fail in seconds, not minutes.
setup() { iocp_exercise_setup iocp-dispatch 10; }

require_all_freed() {
    grep -q '^echo-iocp: [0-9]* connections served, 0 still allocated' "$SERVER_ERR" ||
        fail "expected '0 still allocated' after shutdown (is every operation's reference dropped?); stderr:
$(cat "$SERVER_ERR")"
}

@test "iocp-dispatch: a message comes back" {
    suite_start
    client_echo "hello, iocp" 5
    iocp_stops 5
}

@test "iocp-dispatch: 200 KB, more than one recv holds, comes back (a recv is posted after each send)" {
    local in="$BATS_TEST_TMPDIR/multi"
    suite_start
    payload "$in" 200000
    run_client -p "$PORT" -t 5 <"$in" >"$in.out" ||
        server_gone "echo-client failed (status $?; 3 = timeout: did the connection stall after its first echo?)"
    cmp -s "$in" "$in.out" ||
        fail "echoed bytes differ: sent $(stat -c %s "$in"), got $(stat -c %s "$in.out")"
    iocp_stops 5
}

@test "iocp-dispatch: sends that complete short are resubmitted from where they stopped" {
    local in="$BATS_TEST_TMPDIR/large" n
    # the server cuts half of its sends short itself (FAULTS_SHORT_SEND, see
    # chapters/09-iocp/conn.c): their completions report fewer bytes than
    # the connection had to send
    suite_start env FAULTS_SHORT_SEND=50
    payload "$in" $((4 * 1024 * 1024))
    run_client -p "$PORT" -t 10 <"$in" >"$in.out" ||
        server_gone "echo-client failed (status $?)"
    cmp -s "$in" "$in.out" ||
        fail "echoed bytes differ: sent $(stat -c %s "$in"), got $(stat -c %s "$in.out"); $(cmp "$in" "$in.out" 2>&1 | head -n 1)"
    iocp_stops 5
    n=$(sed -n 's/.*short sends resubmitted: \([0-9]*\)$/\1/p' "$SERVER_ERR")
    [ "${n:-0}" -gt 0 ] || fail "no short send was counted as resubmitted; stderr: $(cat "$SERVER_ERR")"
}

@test "iocp-dispatch: 50 clients at once, then 20 connections of 100 messages each, all echoed" {
    suite_start
    # one process, 50 connections opened together, every echoed byte checked
    run timeout 30 "$(tool_bin echo-load)" -p "$PORT" -c 50 -n 10 -l 20000 -t 10
    [ "$status" -eq 0 ] || server_gone "echo-load (50 connections at once): $output"
    assert_output --partial "errors 0"
    run timeout 30 "$(tool_bin echo-load)" -p "$PORT" -c 20 -n 100 -l 300 -t 10
    assert_success
    assert_output --partial "errors 0"
    iocp_stops 5
}

@test "iocp-dispatch: SIGINT with clients connected exits 0, and every connection is freed" {
    local a b
    suite_start
    conn_open a
    conn_open b
    expect_echo "$a" ping
    expect_echo "$b" pong
    run_client -p "$PORT" -t 10 "a client that came and went" >/dev/null ||
        server_gone "echo-client failed (status $?)"
    iocp_stops 5
    exec {a}>&- {b}>&-
    require_all_freed
}
