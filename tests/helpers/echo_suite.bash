# tests/helpers/echo_suite.bash: the behaviour every echo server must show.
#
#   load ../helpers/common
#   load ../helpers/echo_suite
#   setup() { SERVER_CMD=("$(chapter_bin echo-poll)"); }
#   @test "echo-poll: binary data comes back intact" { suite_binary_data; }
#
# Each suite_* function starts "${SERVER_CMD[@]}" -p 0 itself (so it can add
# the faults shim in front), runs one scenario, and stops the server with
# SIGTERM, checking the exit status is 0. Extra server arguments go after the
# command in SERVER_CMD.

# Start the server under test; "$@" goes in front (e.g. env ... for faults).
suite_start() {
    server_start "$@" "${SERVER_CMD[@]}" -p 0
}

# Stop it with SIGTERM and require exit 0.
suite_stop_clean() {
    server_stop TERM
    if [ "$SERVER_STATUS" -ne 0 ]; then
        fail "expected exit status 0 after SIGTERM, got $SERVER_STATUS
--- stderr ---
$(cat "$SERVER_ERR")"
    fi
}

# echo_file IN: send IN through echo-client, require the same bytes back.
suite_echo_file() {
    local in="$1" out="$1.echoed"
    run_client -p "$PORT" <"$in" >"$out" || fail "echo-client failed (status $?) sending ${in##*/}"
    if ! cmp -s "$in" "$out"; then
        fail "echoed bytes differ: sent $(stat -c %s "$in") bytes, got $(stat -c %s "$out"); first difference: $(cmp "$in" "$out" 2>&1 | head -n 1)"
    fi
}

suite_binary_data() {
    suite_start
    payload "$BATS_TEST_TMPDIR/bin" 70000
    suite_echo_file "$BATS_TEST_TMPDIR/bin"
    # the single byte 0 on its own
    printf '\000' >"$BATS_TEST_TMPDIR/nul"
    suite_echo_file "$BATS_TEST_TMPDIR/nul"
    suite_stop_clean
}

# N clients at once, each with its own payload size; all intact.
suite_many_clients() {
    local n="${1:-50}" i pids=() failed=0
    suite_start
    for ((i = 0; i < n; i++)); do
        payload "$BATS_TEST_TMPDIR/c$i" $((1 + (i * 7919) % 20000))
        run_client -p "$PORT" <"$BATS_TEST_TMPDIR/c$i" >"$BATS_TEST_TMPDIR/c$i.out" &
        pids+=($!)
    done
    for ((i = 0; i < n; i++)); do
        wait "${pids[$i]}" || { echo "client $i: echo-client status $?" >&2; failed=1; }
        cmp -s "$BATS_TEST_TMPDIR/c$i" "$BATS_TEST_TMPDIR/c$i.out" ||
            { echo "client $i: echoed bytes differ" >&2; failed=1; }
    done
    [ "$failed" -eq 0 ] || fail "some of $n concurrent clients did not get their bytes back"
    # and the load tool agrees: every echoed byte verified
    run timeout 60 "$(tool_bin echo-load)" -p "$PORT" -c 20 -n 200 -l 300
    assert_success
    assert_output --partial "errors 0"
    suite_stop_clean
}

# Clients that reset mid-echo must not take the server down.
suite_resets() {
    local i
    suite_start
    payload "$BATS_TEST_TMPDIR/big" 300000
    for ((i = 0; i < 20; i++)); do
        run_client -p "$PORT" --reset <"$BATS_TEST_TMPDIR/big" >/dev/null ||
            fail "echo-client --reset failed (status $?)"
    done
    server_alive || fail "server died after clients reset their connections"
    suite_echo_file "$BATS_TEST_TMPDIR/big"
    suite_stop_clean
}

# A client that half-closes gets every byte, then EOF (echo-client exits 0
# only after reading EOF, and does not close its side until then).
suite_half_close() {
    suite_start
    payload "$BATS_TEST_TMPDIR/half" 200000
    suite_echo_file "$BATS_TEST_TMPDIR/half"
    # nothing at all sent, then shutdown: the server must close too.
    run_client -p "$PORT" </dev/null >"$BATS_TEST_TMPDIR/empty.out" ||
        fail "a client that sent nothing and half-closed did not see EOF (status $?)"
    [ ! -s "$BATS_TEST_TMPDIR/empty.out" ] || fail "got bytes back for an empty request"
    suite_stop_clean
}

# 16 MiB while echo-client reads concurrently: a server that writes without
# handling short writes, or reads everything before writing, fails this.
suite_large_payload() {
    suite_start
    payload "$BATS_TEST_TMPDIR/large" $((16 * 1024 * 1024))
    CLIENT_TIMEOUT=60 suite_echo_file "$BATS_TEST_TMPDIR/large"
    suite_stop_clean
}

# SIGTERM with clients connected and idle: exit 0, promptly.
suite_sigterm_with_clients() {
    local fds=() i fd
    suite_start
    for ((i = 0; i < 3; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
        fds+=("$fd")
    done
    printf 'ping\n' >&"${fds[0]}"
    read -r -t 10 line <&"${fds[0]}" || fail "no echo before shutdown"
    [ "$line" = ping ] || fail "expected 'ping', got '$line'"
    suite_stop_clean
    for fd in "${fds[@]}"; do exec {fd}>&-; done
}

# The same checks with the faults shim making reads and writes short and
# interrupted; the shim's log proves the faults were injected.
suite_under_faults() {
    suite_start env $(faults_env FAULTS_SHORT_READ=30 FAULTS_SHORT_WRITE=50 FAULTS_EINTR=10 FAULTS_EAGAIN=10)
    payload "$BATS_TEST_TMPDIR/f1" 1000000
    suite_echo_file "$BATS_TEST_TMPDIR/f1"
    run timeout 60 "$(tool_bin echo-load)" -p "$PORT" -c 10 -n 100 -l 3000
    assert_success
    assert_output --partial "errors 0"
    suite_stop_clean
    local sw; sw=$(faults_count short_writes)
    [ "$sw" -gt 0 ] || fail "the faults shim injected no short writes (log: $(cat "$BATS_TEST_TMPDIR/faults.log" 2>/dev/null))"
}
