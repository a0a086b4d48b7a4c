#!/usr/bin/env bats
# Exercise 01-blocking/eintr-read (fix): the chapter's echo-blocking with a
# planted bug. Runs against $IMPL (solutions: the chapter's own code;
# `make ex` uses the learner's copy).

load ../helpers/common

setup() {
    SERVER_BIN="$(impl_bin eintr-read echo-blocking)"
}

@test "eintr-read: 1 MiB comes back intact while reads fail with EINTR, and the next client is served" {
    local in="$BATS_TEST_TMPDIR/in" out
    payload "$in" $((1024 * 1024))
    server_start env $(faults_env FAULTS_EINTR=20 FAULTS_SHORT_READ=30 FAULTS_SHORT_WRITE=30) "$SERVER_BIN" -p 0
    # the reference: about a second
    CLIENT_TIMEOUT=$((8 * $(san_slowdown))) run_client -p "$PORT" <"$in" >"$in.out" || true
    require_server_alive
    cmp -s "$in" "$in.out" ||
        fail "sent $(stat -c %s "$in") bytes, got $(stat -c %s "$in.out") back; server stderr: $(head -n 3 "$SERVER_ERR")"
    out=$(run_client -p "$PORT" -t 10 "the next one") || server_gone "the next client was not served (status $?)"
    [ "$out" = "the next one" ] || fail "expected 'the next one', got '$out'"
    stop_within 10 TERM
    [ "$(faults_count eintr)" -gt 0 ] || fail "the faults shim injected no EINTR: $(cat "$BATS_TEST_TMPDIR/faults.log" 2>/dev/null)"
    ! grep -q "Interrupted system call" "$SERVER_ERR" || fail "the server logged an EINTR as an error: $(cat "$SERVER_ERR")"
}

@test "eintr-read: SIGTERM while the server waits for a client's bytes exits 0 within 5 s" {
    local fd
    server_start "$SERVER_BIN" -p 0
    conn_open fd
    expect_echo "$fd" "before the stop"
    wait_blocked_in read
    stop_within 5 TERM
    exec {fd}>&-
}

@test "eintr-read: a client that sends nothing and half-closes gets EOF at once, and the next one is served" {
    local out
    server_start "$SERVER_BIN" -p 0
    out=$(run_client -p "$PORT" -t 5 </dev/null) || server_gone "a client that sent nothing did not get EOF (status $?)"
    [ -z "$out" ] || fail "expected nothing back for an empty request, got '$out'"
    out=$(run_client -p "$PORT" -t 5 "after the empty one") || server_gone "the next client was not served (status $?)"
    [ "$out" = "after the empty one" ] || fail "expected 'after the empty one', got '$out'"
    stop_within 5 TERM
}
