# tests/05-epoll-edge/suite_extra.bash: cases written for chapter 05's
# edge-triggered servers, in the shape of tests/helpers/echo_suite.bash (they
# use its suite_start, suite_stop_clean, calls_of and require_strace). They
# apply to any echo server; what they catch is the edge-triggered bugs.
#
#   load ../helpers/common
#   load ../helpers/echo_suite
#   load suite_extra

# server_pause / server_resume: SIGSTOP the server and wait until it really
# is stopped (a signal is asynchronous: without the wait, the server could
# still take the events the test means to pile up), and SIGCONT it.
server_pause() {
    local i state
    kill -STOP "$SERVER_PID"
    for ((i = 0; i < 200; i++)); do
        state=$(cat "/proc/$SERVER_PID/stat" 2>/dev/null) || server_gone "the server exited"
        state=${state##*) }
        [[ "${state%% *}" == [Tt] ]] && return 0
        sleep 0.05
    done
    fail "the server did not stop within 10 s of SIGSTOP"
}
server_resume() {
    kill -CONT "$SERVER_PID"
}

# wait_server_queued BYTES: wait (up to 5 s) until the server's sockets on
# $PORT hold BYTES unread in their receive queues (ss's Recv-Q): everything
# sent has arrived, and the server can get no later edge for it. Without
# ss, wait a second.
wait_server_queued() {
    local i q
    command -v ss >/dev/null || { sleep 1; return 0; }
    for ((i = 0; i < 100; i++)); do
        q=$(ss -Htn state established "( sport = :$PORT )" | awk '{ n += $1 } END { print n + 0 }')
        [ "$q" -ge "$1" ] && return 0
        sleep 0.05
    done
    fail "only $q of $1 bytes reached the server's socket within 5 s"
}

# suite_drains_message_sent_while_paused [BYTES]: the edge-triggered stall
# test. A client is served (so its connection is accepted and registered),
# the server is paused, BYTES (96 KiB: more than one read() takes, less than
# the socket holds) arrive in one go, and the server resumes with no further
# traffic. Exactly one edge is waiting for it: a server that reads once per
# edge, or stops at its read budget and forgets the rest, echoes part and
# then waits for ever. Every byte must come back within 5 s.
suite_drains_message_sent_while_paused() {
    local bytes="${1:-98304}" fd in="$BATS_TEST_TMPDIR/msg" got
    suite_start
    conn_open fd
    expect_echo "$fd" "hello"
    payload "$in" "$bytes"
    server_pause
    cat "$in" >&"$fd"
    wait_server_queued "$bytes"
    server_resume
    timeout 5 head -c "$bytes" <&"$fd" >"$in.echoed" || true
    got=$(stat -c %s "$in.echoed")
    [ "$got" -eq "$bytes" ] ||
        server_gone "$got of $bytes bytes came back within 5 s, sent in one go while the server was paused: the rest waits for an edge that never comes (not read until EAGAIN, or forgotten after the read budget)"
    cmp -s "$in" "$in.echoed" || fail "the echoed bytes differ: $(cmp "$in" "$in.echoed" 2>&1 | head -n 1)"
    exec {fd}>&-
    suite_stop_clean
}

# suite_accepts_burst_while_paused [CLIENTS]: CLIENTS (30) connect while the
# server is paused; the kernel completes their handshakes and queues them in
# the listen backlog, and the server resumes to a single edge on its
# listener. A server that accepts one connection per edge leaves the others
# waiting for ever; every client must be served within 10 s.
suite_accepts_burst_while_paused() {
    local n="${1:-30}" fds=() i fd
    suite_start
    server_pause
    for ((i = 0; i < n; i++)); do
        conn_open fd
        fds+=("$fd")
    done
    server_resume
    for ((i = 0; i < n; i++)); do
        expect_echo "${fds[$i]}" "client $i of $n, connected while the server was paused"
    done
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    suite_stop_clean
}

# suite_fair_under_flood [MAX_MS]: while one client floods the server (1 MiB
# messages, 8 in flight, for 4 s), a ping-pong client's slowest round trip
# stays under MAX_MS (200 ms): the flood cannot hold the server. Sets
# FLOOD_OUT (the flooder's report) for more checks.
suite_fair_under_flood() {
    local max_ms="${1:-200}" fpid out max
    suite_start
    FLOOD_OUT="$BATS_TEST_TMPDIR/flood.out"
    timeout 60 "$(tool_bin echo-load)" -p "$PORT" -c 1 -l 1M -D 8 -d 4 >"$FLOOD_OUT" 2>&1 &
    fpid=$!
    _course_pids+=("$fpid")
    sleep 0.5
    out=$(timeout 30 "$(tool_bin echo-load)" -p "$PORT" -c 1 -l 128 -d 2) ||
        server_gone "the ping-pong client failed while another flooded: $out"
    wait "$fpid" || fail "the flooding client failed: $(cat "$FLOOD_OUT")"
    grep -q 'errors 0' "$FLOOD_OUT" || fail "the flooding client saw errors: $(cat "$FLOOD_OUT")"
    max=$(sed -n 's/^latency us .* max \([0-9]*\)$/\1/p' <<<"$out")
    echo "# ping-pong during the flood: $(grep '^latency' <<<"$out"); flood: $(grep '^throughput' "$FLOOD_OUT")" >&3
    [ -n "$max" ] || fail "no latency line from echo-load: $out"
    [ "$max" -lt $((max_ms * 1000)) ] ||
        fail "the ping-pong client waited up to $((max / 1000)) ms for an echo while another flooded (bound: $max_ms ms)"
    suite_stop_clean
}

# suite_under_faults_no_eagain: suite_under_faults without the shim's fake
# EAGAIN: short reads, short writes and EINTR only. An edge-triggered server
# takes EAGAIN at its word ("drained until the next edge"); the shim's EAGAIN
# is returned with bytes still waiting, which no kernel does on a socket, and
# no edge will ever come for them (chapter.bats shows that stall).
suite_under_faults_no_eagain() {
    suite_start env $(faults_env FAULTS_SHORT_READ=30 FAULTS_SHORT_WRITE=50 FAULTS_EINTR=10)
    payload "$BATS_TEST_TMPDIR/f1" 1000000
    suite_echo_file "$BATS_TEST_TMPDIR/f1"
    run timeout 60 "$(tool_bin echo-load)" -p "$PORT" -c 10 -n 100 -l 3000
    assert_success
    assert_output --partial "errors 0"
    suite_stop_clean
    local sr sw ei
    sr=$(faults_count short_reads) sw=$(faults_count short_writes) ei=$(faults_count eintr)
    [ "$sr" -gt 0 ] && [ "$sw" -gt 0 ] && [ "$ei" -gt 0 ] ||
        fail "the faults shim did not inject every kind (log: $(cat "$BATS_TEST_TMPDIR/faults.log" 2>/dev/null))"
}

# suite_emfile_recovers_any_order: suite_emfile_recovers for a server with
# one listener per thread (SO_REUSEPORT). Out of fds, a thread that frees
# one resumes its own listener first, and the others retry on a timer, so
# the clients left waiting are served in no particular order: each one is
# closed as soon as its echo comes, freeing its fd for the next, and all of
# them must be served within 30 s. (The shared case waits for them in order
# while keeping the served ones open, which two listeners can deadlock.)
suite_emfile_recovers_any_order() {
    local fds=() served=() waiting=() left=() i fd line t0
    server_start bash -c 'ulimit -n 12 && exec "$@"' _ "${SERVER_CMD[@]}" -p 0
    for ((i = 0; i < 10; i++)); do
        conn_open fd
        fds+=("$fd")
        (printf 'client %d\n' "$i" >&"$fd") 2>/dev/null
    done
    sleep 0.5
    for ((i = 0; i < 10; i++)); do
        line=""
        read -r -t 0.3 line <&"${fds[$i]}" || true
        if [ "$line" = "client $i" ]; then served+=("$i"); else waiting+=("$i"); fi
    done
    server_exited && server_gone "the server died when it ran out of fds"
    [ ${#served[@]} -gt 0 ] || fail "no client was served under ulimit -n 12"
    [ ${#waiting[@]} -gt 0 ] || fail "all 10 clients were served under ulimit -n 12: expected EMFILE"
    grep -q 'Too many open files' "$SERVER_ERR" ||
        fail "expected 'accept(...): Too many open files' on stderr, got: $(cat "$SERVER_ERR")"
    for i in "${served[@]}"; do
        fd=${fds[$i]}
        exec {fd}>&-
    done
    t0=$SECONDS
    while [ ${#waiting[@]} -gt 0 ] && [ $((SECONDS - t0)) -lt 30 ]; do
        left=()
        for i in "${waiting[@]}"; do
            line=""
            read -r -t 0.1 line <&"${fds[$i]}" || true
            if [ "$line" = "client $i" ]; then
                fd=${fds[$i]}
                exec {fd}>&-
            else
                left+=("$i")
            fi
        done
        waiting=("${left[@]}")
    done
    [ ${#waiting[@]} -eq 0 ] || server_gone "clients ${waiting[*]} were not served within 30 s after fds were freed"
    suite_stop_clean
}

# suite_syscalls_per_message_at_most WAIT_CALL N: suite_syscalls_per_message
# with the bound as a parameter: N reads and writes per echoed message. An
# edge-triggered server reads until EAGAIN, so a message that arrives alone
# costs a read() that returns it, a write(), and a read() that says EAGAIN:
# 3, plus a few reads at each connection's EOF, which the shared case's
# bound of exactly 3 does not leave room for.
suite_syscalls_per_message_at_most() {
    local want="$1" per="$2" trace="$BATS_TEST_TMPDIR/strace-c" msgs=5000 child waits polls rw
    require_strace
    # LeakSanitizer cannot work under ptrace: no leak check in a sanitizer build here
    ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" server_start strace -f -c -o "$trace" "${SERVER_CMD[@]}" -p 0
    run timeout 120 "$(tool_bin echo-load)" -p "$PORT" -c 10 -n 500 -l 128
    assert_success
    assert_output --partial "errors 0"
    child=$(pgrep -P "$SERVER_PID" | head -n 1)
    [ -n "$child" ] || fail "no traced server process under strace (pid $SERVER_PID)"
    kill -TERM "$child"
    server_stop 0
    [ "$SERVER_STATUS" -eq 0 ] || fail "expected exit status 0 after SIGTERM, got $SERVER_STATUS
--- stderr ---
$(cat "$SERVER_ERR")"
    waits=$(calls_of "$trace" "$want")
    polls=$(calls_of "$trace" poll ppoll select pselect6)
    rw=$(calls_of "$trace" read write recvfrom sendto recvmsg sendmsg readv writev)
    echo "# $msgs messages: $waits $want, $rw read+write ($(awk "BEGIN { printf \"%.2f\", $rw / $msgs }") per message), $(calls_of "$trace" epoll_ctl) epoll_ctl" >&3
    [ "$waits" -gt 0 ] || fail "no $want() calls in the summary: $(cat "$trace")"
    [ "$polls" -eq 0 ] || fail "$polls poll()/select() calls: expected none ($(cat "$trace"))"
    [ "$rw" -le $((per * msgs)) ] ||
        fail "$rw reads and writes for $msgs messages: more than $per per message"
    [ "$waits" -le "$msgs" ] || fail "$waits $want() calls for $msgs messages: more than one per message"
}

# suite_valgrind_clean: under valgrind (memcheck, --track-fds), an echo
# session, then SIGTERM with two clients still connected: exit 0, no leak,
# no error, and no fd left open but those inherited from the test.
suite_valgrind_clean() {
    case "$BUILD" in */san-*) skip "valgrind does not run sanitized binaries" ;; esac
    command -v valgrind >/dev/null || skip "valgrind is not installed (make deps)"
    local a b log="$BATS_TEST_TMPDIR/valgrind.log" leaked
    server_start valgrind -q --leak-check=full --errors-for-leak-kinds=all --error-exitcode=1 \
        --track-fds=yes --log-file="$log" "${SERVER_CMD[@]}" -p 0
    conn_open a
    conn_open b
    expect_echo "$a" "under valgrind"
    payload "$BATS_TEST_TMPDIR/v" 300000
    CLIENT_TIMEOUT=60 run_client -p "$PORT" <"$BATS_TEST_TMPDIR/v" >"$BATS_TEST_TMPDIR/v.out" ||
        fail "echo-client failed under valgrind (status $?)"
    cmp -s "$BATS_TEST_TMPDIR/v" "$BATS_TEST_TMPDIR/v.out" || fail "echoed bytes differ under valgrind"
    server_stop TERM
    [ "$SERVER_STATUS" -eq 0 ] || fail "valgrind exit status $SERVER_STATUS:
$(cat "$log")"
    exec {a}>&- {b}>&-
    # --track-fds lists every fd open at exit; the ones inherited from bats are not the server's
    leaked=$(awk '/Open (file descriptor|AF_)/ { fd = $0; getline; if ($0 !~ /inherited from parent/) print fd }' "$log")
    [ -z "$leaked" ] || fail "fds left open at exit:
$leaked
$(cat "$log")"
}
