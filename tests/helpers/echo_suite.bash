# SPDX-License-Identifier: MIT
# tests/helpers/echo_suite.bash: the behaviour every echo server must show.
#
#   load ../helpers/common
#   load ../helpers/echo_suite
#   setup() { SERVER_CMD=("$(chapter_bin echo-poll)"); }
#   @test "echo-poll: binary data comes back intact" { suite_binary_data; }
#
# Each suite_* function starts "${SERVER_CMD[@]}" -p 0 itself (so it can add
# the faults shim in front), runs one scenario, and stops the server with
# SIGTERM (SUITE_STOP_SIGNAL=INT for servers that only get SIGINT, as under
# Wine), checking the exit status is 0. Extra server arguments go after the
# command in SERVER_CMD.
#
# The core cases run for every echo server of common/servers.txt from
# tests/suite/echo.cases, through a link tests/NN-slug/suite-NAME.bats: list
# a server in the table and run `make suite` (CONTRIBUTING.md, "Adding a
# test"). The functions at the end are for that file.

# shellcheck disable=SC2154 # output, status and stderr are set by bats' run

# Start the server under test; "$@" goes in front (e.g. env ... for faults).
suite_start() {
    server_start "$@" "${SERVER_CMD[@]}" -p 0
}

# Stop it with SIGTERM (or $SUITE_STOP_SIGNAL) and require exit 0.
suite_stop_clean() {
    local sig="${SUITE_STOP_SIGNAL:-TERM}"
    server_stop "$sig"
    if [ "$SERVER_STATUS" -ne 0 ]; then
        fail "expected exit status 0 after SIG$sig, got $SERVER_STATUS
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

# suite_many_clients [N]: N (50) clients at once, each with messages of a
# size of its own from 1 to 20,000 bytes, every byte checked; then 20
# clients with 200 messages each. One process holds every connection
# (echo-load: the bytes of each message are drawn from the client's number
# and the message's, so bytes delivered to the wrong client show): N
# clients cost one fork, not 2N, which on a machine where a fork and exec
# cost 30 ms is the difference between a second and a minute. The sizes
# come from SUITE_SEED (random unless set), which a failure names so that
# the same sizes can be tried again.
suite_many_clients() {
    local n="${1:-50}" seed="${SUITE_SEED:-$RANDOM}" load
    load="$(tool_bin echo-load)"
    suite_start
    # --eager: a client sends once it is connected, not once all are (a
    # server that serves one client at a time has the others in its backlog)
    run timeout 60 "$load" -p "$PORT" -c "$n" -n 3 -l 20000 --vary "$seed" --eager
    [ "$status" -eq 0 ] && grep -q ' errors 0 ' <<<"$output" ||
        server_gone "$n concurrent clients did not all get their bytes back (status $status; sizes from SUITE_SEED=$seed):
$output"
    run timeout 60 "$load" -p "$PORT" -c 20 -n 200 -l 300
    [ "$status" -eq 0 ] && grep -q ' errors 0 ' <<<"$output" ||
        server_gone "20 clients with 200 messages each did not all get their bytes back (status $status):
$output"
    suite_stop_clean
}

# suite_resets [N]: N (20) clients, one after another, send 300 kB and
# reset the connection (RST) without reading the echo, which the server is
# still writing. It must not die (no SIGPIPE, no abort on ECONNRESET) and
# must serve the next client.
suite_resets() {
    local n="${1:-20}" i
    suite_start
    payload "$BATS_TEST_TMPDIR/big" 300000
    for ((i = 0; i < n; i++)); do
        run_client -p "$PORT" --reset <"$BATS_TEST_TMPDIR/big" >/dev/null ||
            server_gone "echo-client --reset failed for client $i of $n (status $?)"
    done
    server_exited && server_gone "the server died after $n clients reset their connections"
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

# SIGTERM with clients connected and idle: exit 0, promptly. The signal
# goes as soon as the echo is back, whatever the server is doing then
# (suite_stop_anytime tries many more moments).
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
    # shellcheck disable=SC2046 # one word per VAR=VALUE
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

# ---- event-loop servers (one thread serving many clients) ---------------------

# One client connected and idle does not stop another from being served:
# the loop waits on every socket at once, not on one of them.
suite_serves_while_idle() {
    local a out
    suite_start
    conn_open a
    out=$(run_client -p "$PORT" -t 5 "hello from B") ||
        server_gone "client B was not served while client A sat idle (echo-client status $?)"
    [ "$out" = "hello from B" ] || fail "expected 'hello from B', got '$out'"
    expect_echo "$a" "A is still served"
    exec {a}>&-
    suite_stop_clean
}

# A client that sends 64 MiB and reads nothing: the server must stop reading
# from it (backpressure) instead of buffering everything, and keep serving
# the others. SUITE_RSS_BOUND_KB (default 32 MiB) is the growth allowed.
suite_never_reading_client() {
    local bound_kb=${SUITE_RSS_BOUND_KB:-$((32 * 1024))} rss0 rss1 h wpid stuck=0 out
    suite_start
    rss0=$(rss_kb "$SERVER_PID")
    conn_open h
    head -c $((64 << 20)) /dev/zero >&"$h" 3>&- &
    wpid=$!
    _course_pids+=("$wpid")
    writer_stuck "$wpid" && stuck=1
    server_exited && server_gone "the server died while a client sent and did not read"
    [ "$stuck" -eq 1 ] ||
        fail "the client sent all 64 MiB without reading anything: the server kept reading (no backpressure)"
    rss1=$(rss_kb "$SERVER_PID")
    echo "# the writer is stuck after $STUCK_AT bytes; server VmRSS ${rss0} kB -> ${rss1} kB" >&3
    [ $((rss1 - rss0)) -lt "$bound_kb" ] ||
        fail "server memory grew by $((rss1 - rss0)) kB (bound: $bound_kb kB) for a client that never reads"
    out=$(run_client -p "$PORT" -t 5 "still served") ||
        server_gone "another client was not served while one never read (echo-client status $?)"
    [ "$out" = "still served" ] || fail "expected 'still served', got '$out'"
    kill "$wpid" 2>/dev/null
    wait "$wpid" 2>/dev/null || true
    exec {h}>&-
    suite_stop_clean
}

# cpu_ticks_over SECONDS: CPU ticks the server uses in the next SECONDS.
cpu_ticks_over() {
    local t0
    t0=$(cpu_ticks "$SERVER_PID")
    sleep "$1"
    echo $(($(cpu_ticks "$SERVER_PID") - t0))
}

# busy_percent_over SECONDS: the share of the next SECONDS, in percent, that
# the server's main thread spent running or waiting for a CPU. A busy loop
# scores near 100 however loaded the machine is (waiting in the run queue
# counts); a loop that sleeps in its wait call scores near 0. Fields 1 and 2
# of /proc/PID/schedstat: ns on a CPU, ns runnable but waiting for one.
# (The main thread only: a runtime's other threads, runnable for a moment
# now and then, would wait in a loaded machine's run queue for long.)
busy_percent_over() {
    local r0 w0 r1 w1 t0 t1
    read -r r0 w0 _ <"/proc/$SERVER_PID/schedstat" || return 1
    t0=$(date +%s%N)
    sleep "$1"
    read -r r1 w1 _ <"/proc/$SERVER_PID/schedstat" || return 1
    t1=$(date +%s%N)
    echo $(((r1 - r0 + w1 - w0) * 100 / (t1 - t0)))
}

# server_spins_over SECONDS WHAT: fail, naming WHAT the server was doing,
# when it spun during the SECONDS. Two measures, since neither sees every
# spin: the process's CPU ticks (any thread; a quarter of a CPU or more),
# which a loaded machine may starve a spinning loop of, and the share of
# time its main thread was running or runnable (half or more), which a
# loaded machine cannot hide. A server that waits in its wait call scores
# near 0 on both.
server_spins_over() {
    local t0 t1 r0 w0 r1 w1 c0 c1 hz busy ticks
    hz=$(getconf CLK_TCK)
    c0=$(cpu_ticks "$SERVER_PID") && read -r r0 w0 _ <"/proc/$SERVER_PID/schedstat" ||
        server_gone "$2: the server is gone"
    t0=$(date +%s%N)
    sleep "$1"
    c1=$(cpu_ticks "$SERVER_PID") && read -r r1 w1 _ <"/proc/$SERVER_PID/schedstat" ||
        server_gone "$2: the server is gone"
    t1=$(date +%s%N)
    ticks=$((c1 - c0)) busy=$(((r1 - r0 + w1 - w0) * 100 / (t1 - t0)))
    echo "# $2: $ticks CPU ticks ($hz per second), main thread busy $busy% of $1 s" >&3
    [ $((ticks * 4)) -lt $((hz * ${1%.*})) ] ||
        fail "the server used $ticks CPU ticks ($hz per second) in $1 s $2: it spins"
    [ "$busy" -lt 50 ] ||
        fail "the server's main thread was running or waiting for a CPU $busy% of $1 s $2: it spins"
}

# After an echo, with the client still connected and idle, the server must
# sleep in its wait call. One that leaves write interest armed with nothing
# to write is woken at once, forever: 100% of a CPU.
suite_idle_no_spin() {
    local a
    suite_start
    conn_open a
    expect_echo "$a" ping
    server_spins_over 1 "idle with a client connected (write interest left armed with nothing to write?)"
    expect_echo "$a" "still answers"
    exec {a}>&-
    suite_stop_clean
}

# suite_emfile_recovers [LIMIT]: with `ulimit -n LIMIT` (12), accept() fails
# with EMFILE after a few clients. The server logs it and keeps going; no
# waiting client is dropped; closing a client frees an fd and the waiting
# ones are served. (It may spin meanwhile: see suite_fd_limit_no_spin.)
suite_emfile_recovers() {
    local limit="${1:-12}" fds=() served=() waiting=() i fd line err
    server_start bash -c 'ulimit -n "$0" && exec "$@"' "$limit" "${SERVER_CMD[@]}" -p 0
    for ((i = 0; i < 10; i++)); do
        conn_open fd
        fds+=("$fd")
        (printf 'client %d\n' "$i" >&"$fd") 2>/dev/null
    done
    sleep 0.5
    for ((i = 0; i < 10; i++)); do
        line=""
        err=$(read -r -t 0.3 line <&"${fds[$i]}" 2>&1; printf '%s' "$line")
        case "$err" in
        *"reset by peer"*) fail "client $i was reset under ulimit -n $limit: the server accepted it, then dropped it" ;;
        "client $i") served+=("$i") ;;
        *) waiting+=("$i") ;;
        esac
    done
    server_exited && server_gone "the server died when it ran out of fds"
    [ ${#served[@]} -gt 0 ] || fail "no client was served under ulimit -n $limit"
    [ ${#waiting[@]} -gt 0 ] || fail "all 10 clients were served under ulimit -n $limit: expected EMFILE"
    grep -q 'Too many open files' "$SERVER_ERR" ||
        fail "expected 'accept(...): Too many open files' on stderr, got: $(cat "$SERVER_ERR")"
    for i in "${served[@]}"; do
        fd=${fds[$i]}
        exec {fd}>&-
    done
    for i in "${waiting[@]}"; do
        expect_line "${fds[$i]}" "client $i" "after fds were freed"
        fd=${fds[$i]}
        exec {fd}>&-
    done
    suite_stop_clean
}

# suite_fd_limit_no_spin [LIMIT] [CLIENTS]: under `ulimit -n LIMIT` (64),
# CLIENTS (100) clients connect and stay: accept() hits EMFILE
# while connections wait in the backlog. A level-triggered loop that just
# logs and returns is woken again at once, forever; the server must neither
# die nor spin (under a quarter of a CPU over 1 s; a spinning loop uses all
# of one), and once clients leave it serves the waiting ones and new ones.
# (A runtime that holds many descriptors of its own, .NET's, needs a higher
# LIMIT and more CLIENTS to reach the same point.)
suite_fd_limit_no_spin() {
    local limit="${1:-64}" clients="${2:-100}" fds=() i fd
    server_start bash -c 'ulimit -n "$0" && exec "$@"' "$limit" "${SERVER_CMD[@]}" -p 0
    for ((i = 0; i < clients; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || fail "connect $i failed: the backlog is full?"
        fds+=("$fd")
    done
    sleep 0.3
    server_exited && server_gone "the server died when it ran out of fds"
    server_spins_over 1 "with $clients clients and $limit fds (out of fds: accept() again and again?)"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    # the server frees the fds of clients that left, then serves new ones
    served_again_within 20
    suite_stop_clean
}

# served_again_within SECS: once the clients that held every fd have left, a
# new client is served within SECS (times the sanitizer's slowdown): tries
# again and again until then, and fails if none was.
served_again_within() {
    local out="" t0=$SECONDS limit=$(($1 * $(san_slowdown)))
    while [ $((SECONDS - t0)) -lt "$limit" ]; do
        out=$(run_client -p "$PORT" -t 2 "served again" 2>/dev/null) && break
        sleep 0.2
    done
    [ "$out" = "served again" ] || server_gone "no client was served within $limit s after the others left (got '$out')"
}

# require_strace: skip, with the reason, where strace cannot run.
require_strace() {
    command -v strace >/dev/null || skip "strace is not installed (make deps)"
    strace -f -o /dev/null true 2>/dev/null || skip "strace cannot trace here (ptrace forbidden)"
}

# suite_syscalls_idle WAIT_CALL: under strace, an echo session then 2 s idle
# with a client connected. WAIT_CALL (epoll_wait, poll, io_uring_enter...)
# must be in use, and the idle period must add almost no system calls (a
# busy loop makes thousands). Leaves the summary in $BATS_TEST_TMPDIR/strace.
suite_syscalls_idle() {
    local want="$1" trace="$BATS_TEST_TMPDIR/strace" a before after
    require_strace
    # LeakSanitizer cannot work under ptrace: no leak check in a sanitizer build here
    ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" server_start strace -f -qq -o "$trace.log" "${SERVER_CMD[@]}" -p 0
    conn_open a
    expect_echo "$a" ping
    sleep 0.5
    before=$(wc -l <"$trace.log")
    sleep 2
    after=$(wc -l <"$trace.log")
    expect_echo "$a" pong
    exec {a}>&-
    traced_stop
    [ "$SERVER_STATUS" -eq 0 ] || fail "expected exit status 0 after SIGTERM, got $SERVER_STATUS
--- stderr ---
$(cat "$SERVER_ERR")"
    grep -Eq "^([0-9]+ +)?$want\(" "$trace.log" ||
        fail "expected $want() in the server's system calls; saw: $(sed -E 's/^([0-9]+ +)?([a-z_0-9]+)\(.*/\2/' "$trace.log" | sort | uniq -c | sort -rn | head -n 8 | tr '\n' ' ')"
    echo "# idle for 2 s with a client connected: $((after - before)) system calls" >&3
    [ $((after - before)) -lt 50 ] ||
        fail "$((after - before)) system calls in 2 s of idleness: a busy loop"
}

# suite_burst_drain BYTES [SECS]: a client sends BYTES and reads nothing for
# a second: the echo fills its receive buffer and the server's send buffer,
# the server's writes come back short or EAGAIN, and its backpressure stops
# the sender. Then the client reads the echo back whole, within SECS (60).
# Fails if the server dies or the echo is not whole. Leaves the client
# connected, its descriptor in BURST_FD.
suite_burst_drain() {
    local a wpid got n="$1" secs="${2:-60}"
    conn_open a
    head -c "$n" /dev/zero >&"$a" 3>&- &
    wpid=$!
    _course_pids+=("$wpid")
    sleep 1
    server_exited && server_gone "the server died while a client sent $n bytes without reading"
    got=$(timeout "$secs" head -c "$n" <&"$a" | wc -c)
    # a server that stopped reading leaves the writer blocked for ever
    kill "$wpid" 2>/dev/null || true
    wait "$wpid" 2>/dev/null || true
    [ "$got" -eq "$n" ] || server_gone "expected $n bytes echoed within $secs s, got $got (is writability asked for while output waits?)"
    BURST_FD=$a
}

# A burst that fills the socket forces the server to keep output pending and
# ask for writability (EPOLLOUT, POLLOUT...). Once the client has read it all
# and the pending output is gone, that interest must be dropped: a server
# that leaves it armed is woken at once, forever, while idle. (An idle check
# after a short echo cannot see this: a short echo never needs EPOLLOUT.)
suite_idle_after_burst_no_spin() {
    suite_start
    suite_burst_drain $((16 << 20))
    server_spins_over 1 "idle after draining a 16 MiB burst (write interest left armed?)"
    expect_echo "$BURST_FD" "still answers"
    exec {BURST_FD}>&-
    suite_stop_clean
}

# calls_of TRACE NAME...: total calls of the system calls NAME... in an
# `strace -c` summary (columns: % time, seconds, usecs/call, calls, [errors,] syscall).
calls_of() {
    local trace="$1"
    shift
    awk -v names=" $* " 'index(names, " " $NF " ") && $4 ~ /^[0-9]+$/ { n += $4 } END { print n + 0 }' "$trace"
}

# traced_echo_load TRACE CONNS N: the server under `strace -f -c -o TRACE`
# while CONNS connections of echo-load echo N messages of 128 bytes each,
# with no error; then SIGTERM must stop it with exit 0. TRACE is the
# summary calls_of reads.
traced_echo_load() {
    require_strace
    # LeakSanitizer cannot work under ptrace: no leak check in a sanitizer build here
    ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" server_start strace -f -c -o "$1" "${SERVER_CMD[@]}" -p 0
    run timeout 120 "$(tool_bin echo-load)" -p "$PORT" -c "$2" -n "$3" -l 128
    assert_success
    assert_output --partial "errors 0"
    traced_stop
    [ "$SERVER_STATUS" -eq 0 ] || fail "expected exit status 0 after SIGTERM, got $SERVER_STATUS
--- stderr ---
$(cat "$SERVER_ERR")"
}

# suite_syscalls_per_message WAIT_CALL: under `strace -f -c`, 10 connections
# echo 500 messages of 128 bytes each. WAIT_CALL must be what the loop waits
# in, no poll()/select() may appear at all (unless that is WAIT_CALL), and
# each message may cost at most 3 reads and writes together (one of each is
# the ideal; recv/send and friends count too).
suite_syscalls_per_message() {
    suite_syscalls_per_message_at_most "$1" 3
}

# ---------------------------------------------------------------------------
# Cases that catch edge-triggered bugs (chapter 05) but hold for any echo
# server: every Part II server runs them.
# ---------------------------------------------------------------------------

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
# messages, 8 in flight, for 2 s), a ping-pong client's slowest round trip
# stays under MAX_MS (200 ms; times san_slowdown in a sanitized build): the
# flood cannot hold the server. Sets FLOOD_OUT (the flooder's report) for
# more checks.
suite_fair_under_flood() {
    local max_ms=$((${1:-200} * $(san_slowdown))) fpid out max
    suite_start
    FLOOD_OUT="$BATS_TEST_TMPDIR/flood.out"
    timeout --foreground 60 "$(tool_bin echo-load)" -p "$PORT" -c 1 -l 1M -D 8 -d 2 >"$FLOOD_OUT" 2>&1 &
    fpid=$!
    _course_pids+=("$fpid")
    sleep 0.5
    out=$(timeout 30 "$(tool_bin echo-load)" -p "$PORT" -c 1 -l 128 -d 1) ||
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
    # shellcheck disable=SC2046 # one word per VAR=VALUE
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
    # (the sockets' states say where a client that waits is stuck: in a
    # listener's queue, accepted and not served, or closed)
    [ ${#waiting[@]} -eq 0 ] || server_gone "clients ${waiting[*]} were not served within 30 s after fds were freed
--- ss -tan, port $PORT ---
$(ss -tan "( sport = :$PORT or dport = :$PORT )" 2>&1)
--- the server's fds ---
$(ls -l /proc/"$SERVER_PID"/fd 2>&1 | tail -n +2 | awk '{ print $NF }' | sort | uniq -c)"
    suite_stop_clean
}

# suite_syscalls_per_message_at_most WAIT_CALL N: suite_syscalls_per_message
# with the bound as a parameter: N reads and writes per echoed message. An
# edge-triggered server reads until EAGAIN, so a message that arrives alone
# costs a read() that returns it, a write(), and a read() that says EAGAIN:
# 3, plus a few reads at each connection's EOF, which the shared case's
# bound of exactly 3 does not leave room for.
suite_syscalls_per_message_at_most() {
    local want="$1" per="$2" trace="$BATS_TEST_TMPDIR/strace-c" msgs=5000 waits polls rw
    traced_echo_load "$trace" 10 500
    waits=$(calls_of "$trace" "$want")
    case "$want" in
    poll | ppoll | select | pselect6) polls=0 ;;
    *) polls=$(calls_of "$trace" poll ppoll select pselect6) ;;
    esac
    rw=$(calls_of "$trace" read write recvfrom sendto recvmsg sendmsg readv writev)
    echo "# $msgs messages: $waits $want, $rw read+write ($(awk "BEGIN { printf \"%.2f\", $rw / $msgs }") per message), $(calls_of "$trace" epoll_ctl) epoll_ctl" >&3
    [ "$waits" -gt 0 ] || fail "no $want() calls in the summary: $(cat "$trace")"
    [ "$polls" -eq 0 ] || fail "$polls poll()/select() calls: expected none ($(cat "$trace"))"
    [ "$rw" -le $((per * msgs)) ] ||
        fail "$rw reads and writes for $msgs messages: more than $per per message"
    [ "$waits" -le "$msgs" ] || fail "$waits $want() calls for $msgs messages: more than one per message"
}

# suite_valgrind_clean [SECS]: under valgrind (memcheck, --track-fds), an
# echo session, then SIGTERM with two clients still connected: exit 0, no
# leak, no error, and no fd left open but those inherited from the test.
# With SECS, each echo must come within SECS, so that an exercise's server
# that never answers fails in seconds rather than at the suite's minute.
suite_valgrind_clean() {
    case "$BUILD" in */san-*) skip "valgrind does not run sanitized binaries" ;; esac
    command -v valgrind >/dev/null || skip "valgrind is not installed (make deps)"
    local secs="${1:-}" a b log="$BATS_TEST_TMPDIR/valgrind.log" leaked
    server_start valgrind -q --leak-check=full --errors-for-leak-kinds=all --error-exitcode=1 \
        --track-fds=yes --log-file="$log" "${SERVER_CMD[@]}" -p 0
    conn_open a
    conn_open b
    if [ -n "$secs" ]; then
        client_echo "under valgrind" "$secs"
    else
        expect_echo "$a" "under valgrind"
    fi
    payload "$BATS_TEST_TMPDIR/v" 300000
    CLIENT_TIMEOUT=$((${secs:-58} + 2)) run_client -p "$PORT" ${secs:+-t "$secs"} <"$BATS_TEST_TMPDIR/v" >"$BATS_TEST_TMPDIR/v.out" ||
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

# suite_uring_short_env VAR=VALUE...: env(1) arguments that preload chapter
# 07's uring-short.so with these settings and the log
# $BATS_TEST_TMPDIR/uring-short.log, which suite_uring_short_count reads.
# The library changes SQEs in liburing's submit calls, before the kernel
# sees them (chapters/07-io_uring-basics/uring-short.c says how). `make ex`
# builds only the exercise: the library is then compiled here, as the
# chapter's Makefile would, without sanitizers (a preloaded library must not
# bring a second copy of their runtime; verify_asan_link_order=0 lets a
# sanitized server start with it in front, as faults_env does for the libc
# shim). With FAULTS_* settings among them, the libc faults shim is
# preloaded too, its log in $BATS_TEST_TMPDIR/faults.log (faults_count).
suite_uring_short_env() {
    local so="$BUILD/chapters/07-io_uring-basics/uring-short.so" preload arg faults=0
    if [ ! -f "$so" ]; then
        so="$BATS_FILE_TMPDIR/uring-short.so"
        [ -f "$so" ] || gcc -std=c11 -D_GNU_SOURCE -O1 -fPIC -shared -o "$so" \
            "$TOP/chapters/07-io_uring-basics/uring-short.c" -ldl -luring ||
            fail "could not compile chapters/07-io_uring-basics/uring-short.c"
    fi
    preload="$so"
    for arg in "$@"; do [[ "$arg" != FAULTS_* ]] || faults=1; done
    if [ "$faults" -eq 1 ]; then
        require_bin "$FAULTS_SHIM" common
        preload="$FAULTS_SHIM:$so" # each wraps calls the other leaves alone
        set -- "FAULTS_LOG=$BATS_TEST_TMPDIR/faults.log" "$@"
    fi
    echo "LD_PRELOAD=$preload URING_SHORT_LOG=$BATS_TEST_TMPDIR/uring-short.log ASAN_OPTIONS=verify_asan_link_order=0:${ASAN_OPTIONS:-} $*"
}

# suite_uring_short_count NAME: total of one counter of uring-short.so's log
# (short_sends, eintr, eagain, enobufs, buffer_recvs...).
suite_uring_short_count() {
    log_total "$BATS_TEST_TMPDIR/uring-short.log" "$1"
}

# suite_uring_faults: the faults case for KIND uring. The faults shim wraps
# libc's read(), write(), send(), recv()...; an io_uring server moves its
# bytes with none of them (the kernel does the I/O its SQEs describe), so
# the shim can inject nothing. The server runs with the shim preloaded all
# the same, to show that: it must see only a handful of calls (the
# "listening on" line), none of them faulted. The faults come from
# uring-short.so instead, preloaded beside it: 30% of the sends are cut
# short, 10% of the recvs and sends complete with -EINTR, 10% of the rest
# with -EAGAIN, and half of the recvs that pick a provided buffer end at
# once with -ENOBUFS, as when the ring is empty. Through all of that, 1 MB
# comes back intact, then 20 clients at once send 100 messages of 3,000
# bytes each; and the library's log must show some of each fault. A kernel
# that cannot complete a NOP with an injected result (before
# IORING_NOP_INJECT_RESULT) gets only the short sends, and the case skips
# once they are proven, saying why.
suite_uring_faults() {
    local in="$BATS_TEST_TMPDIR/f" calls faults short eintr eagain enobufs bufrecvs
    # shellcheck disable=SC2046 # one word per VAR=VALUE
    suite_start env $(suite_uring_short_env FAULTS_SHORT_READ=50 FAULTS_SHORT_WRITE=50 FAULTS_EINTR=20 \
        URING_SHORT_SEND=30 URING_SHORT_EINTR=10 URING_SHORT_EAGAIN=10 URING_SHORT_ENOBUFS=50)
    payload "$in" 1000000
    if ! run_client -p "$PORT" <"$in" >"$in.echoed" || ! cmp -s "$in" "$in.echoed"; then
        _suite_uring_faults_fail "1 MB under uring-short: sent 1000000 bytes, got $(stat -c %s "$in.echoed") back; $(cmp "$in" "$in.echoed" 2>&1 | head -n 1)"
    fi
    run timeout 60 "$(tool_bin echo-load)" -p "$PORT" -c 20 -n 100 -l 3000 -t 30
    [ "$status" -eq 0 ] && grep -q ' errors 0 ' <<<"$output" ||
        _suite_uring_faults_fail "20 clients x 100 messages of 3,000 bytes under uring-short did not all come back (echo-load status $status):
$output"
    suite_stop_clean
    calls=$(faults_count calls)
    faults=$(($(faults_count short_reads) + $(faults_count short_writes) + $(faults_count eintr)))
    short=$(suite_uring_short_count short_sends) eintr=$(suite_uring_short_count eintr)
    eagain=$(suite_uring_short_count eagain) enobufs=$(suite_uring_short_count enobufs)
    bufrecvs=$(suite_uring_short_count buffer_recvs)
    local nobufs="$enobufs -ENOBUFS (of $bufrecvs recvs with a provided buffer)"
    [ "$bufrecvs" -gt 0 ] || nobufs="no -ENOBUFS (no recv picks a provided buffer)"
    echo "# 1 MB and 20 x 100 messages echoed; uring-short.so injected $short short sends, $eintr -EINTR, $eagain -EAGAIN, $nobufs; the libc faults shim, preloaded too, saw $calls calls and faulted $faults" >&3
    [ "$calls" -lt 10 ] ||
        fail "the libc faults shim intercepted $calls I/O calls (expected fewer than 10, the 'listening on' line): the server moves bytes with read()/write(), not io_uring?"
    [ "$faults" -eq 0 ] || fail "the libc faults shim faulted $faults calls of an io_uring server (expected 0)"
    [ "$short" -gt 0 ] ||
        fail "uring-short.so cut no send short (expected some of 30%): its wrappers never saw the server's SQEs? log: $(cat "$BATS_TEST_TMPDIR/uring-short.log" 2>/dev/null)"
    if grep -q 'inject_unsupported=1' "$BATS_TEST_TMPDIR/uring-short.log" 2>/dev/null; then
        skip "$short short sends proven; but this kernel ($(uname -r)) cannot complete a NOP with an injected result (IORING_NOP_INJECT_RESULT, recent kernels only), so uring-short cannot fake -EINTR, -EAGAIN or -ENOBUFS"
    fi
    counted_positive suite_uring_short_count "uring-short.so" eintr eagain
    # Chapter 08's start-up check (ring.c) arms one recv with a provided
    # buffer on a socketpair of its own, which may take one -ENOBUFS: a
    # server whose recvs pick provided buffers must have had more.
    [ "$bufrecvs" -eq 0 ] || [ "$enobufs" -ge 2 ] ||
        fail "the server's recvs picked a provided buffer $bufrecvs times, and uring-short ended only $enobufs of them with -ENOBUFS (expected at least 2 of half)"
}

# _suite_uring_faults_fail MSG: stop the server (uring-short.so writes its
# log at exit) and fail with MSG and what was injected; the teardown shows
# the server's stderr.
_suite_uring_faults_fail() {
    server_stop TERM
    fail "$1
--- uring-short.so's log (what it injected; the server exited $SERVER_STATUS) ---
$(cat "$BATS_TEST_TMPDIR/uring-short.log" 2>/dev/null)"
}

# ---------------------------------------------------------------------------
# Resources over time: fds and idle connections
# ---------------------------------------------------------------------------

# fd_count PID: how many fds the process has open now.
fd_count() {
    find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}

# suite_no_fd_growth [CYCLES]: CYCLES (300) clients connect, echo a line and
# leave, one after another; every third resets instead of closing. Once they
# are gone the server holds as many fds as before them (within 5 s: a
# server may close a little after its client left). A connection the server
# forgets to close on EOF or on a reset shows here as a leaked fd, long
# before the server runs out of them.
suite_no_fd_growth() {
    local n="${1:-300}" before after i t0 fd line
    suite_start
    run_client -p "$PORT" "warm up" >/dev/null || server_gone "the first client was not served"
    sleep 0.2
    before=$(fd_count "$SERVER_PID")
    # The closing clients are bash's own connections (no process each); a
    # write to a connection the server reset then fails with EPIPE instead
    # of killing the test. Resets need SO_LINGER: echo-client --reset.
    trap '' PIPE
    for ((i = 0; i < n; i++)); do
        if ((i % 3 == 2)); then
            run_client -p "$PORT" --reset "cycle $i, reset" >/dev/null 2>&1 || true
        else
            exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || server_gone "client $i of $n could not connect"
            printf 'cycle %d\n' "$i" 1>&"$fd" 2>/dev/null || true
            line=""
            read -r -t 10 line <&"$fd" || true
            exec {fd}>&-
            [ "$line" = "cycle $i" ] || server_gone "client $i of $n was not echoed (got '$line')"
        fi
    done
    trap - PIPE
    t0=$SECONDS
    while after=$(fd_count "$SERVER_PID") && [ "$after" -gt "$before" ] && [ $((SECONDS - t0)) -lt 5 ]; do
        sleep 0.1
    done
    echo "# fds open in the server: $before before $n connect/close cycles, $after after" >&3
    [ "$after" -le "$before" ] ||
        fail "the server holds $after fds after $n clients came and went, $before before them: $((after - before)) leaked
$(ls -l "/proc/$SERVER_PID/fd" 2>/dev/null)"
    suite_stop_clean
}

# suite_hold_idle N: echo-load --idle opens N connections to $PORT, checks
# each with one echo and holds them (require_fds: N + 64 open files);
# returns once it says it holds them all (the server is reported gone
# otherwise), with its pid in SUITE_HOLDER_PID. Stop it with kill -TERM.
suite_hold_idle() {
    local n="$1" holder="$BATS_TEST_TMPDIR/holder.out" i s
    require_fds $((n + 64))
    # a slower build gets longer (valgrind starts a thread per connection of
    # chapter 02's server in about 40 ms: 2,000 of them take over a minute),
    # within the runner's 300 s per test
    s=$(san_slowdown)
    [ "$s" -le 4 ] || s=4
    : >"$holder" # there before the first grep below
    # --foreground: it is signalled later (see the note on timeout in common.bash).
    timeout --foreground $((120 * s)) "$(tool_bin echo-load)" \
        -p "$PORT" -c "$n" --idle -t $((60 * s)) -d $((60 * s)) >"$holder" 2>&1 &
    SUITE_HOLDER_PID=$!
    _course_pids+=("$SUITE_HOLDER_PID")
    for ((i = 0; i < 600 * s; i++)); do
        grep -q "^holding $n connections" "$holder" && break
        kill -0 "$SUITE_HOLDER_PID" 2>/dev/null || break
        sleep 0.1
    done
    grep -q "^holding $n connections" "$holder" ||
        server_gone "echo-load could not open and check $n connections: $(cat "$holder")
$(suite_server_snapshot)"
}

# suite_server_snapshot: what the server was doing when a test gave up on
# it: its threads' states, its open fds, and, from the kernel's side of its
# port, connections queued but not accepted and bytes it has not read.
suite_server_snapshot() {
    local t q
    echo "--- the server (pid $SERVER_PID) when the test gave up ---"
    for t in /proc/"$SERVER_PID"/task/*; do
        [ -r "$t/stat" ] || continue
        echo "thread $(cat "$t/comm" 2>/dev/null): $(awk '/^State:/ { print $2, $3 }' "$t/status" 2>/dev/null), waiting in $(cat "$t/wchan" 2>/dev/null)"
    done
    echo "open fds: $(find /proc/"$SERVER_PID"/fd -mindepth 1 2>/dev/null | wc -l)"
    q=$(ss -Hltn "( sport = :$PORT )" 2>/dev/null | awk '{ print $2 }' | head -n 1)
    echo "listener: ${q:-?} connections waiting to be accepted"
    ss -Htn state established "( sport = :$PORT )" 2>/dev/null |
        awk '{ n++; if ($1 > 0) { r++; b += $1 } }
             END { printf "server side: %d connections (accepted or queued), %d with %d bytes it has not read\n", n, r, b }'
    ss -Htn state established "( dport = :$PORT )" 2>/dev/null |
        awk '{ n++; if ($1 > 0) { r++; b += $1 } }
             END { printf "client side: %d connections, %d with %d echoed bytes the clients have not read\n", n, r, b }'
}

# suite_idle_memory N MAX_BYTES: after one echo (lazy set-up done), N
# connections held open and idle (echo-load --idle checks each echoes once,
# then holds it); the server's resident memory may grow by at most MAX_BYTES
# per connection. Prints the figure. As chapter 14's c10k.sh measures it,
# with fewer connections. In a sanitizer build (SAN=...) the bound is not
# checked: redzones and shadow memory are the sanitizer's, not the server's.
# The server, and echo-load, get N + 64 open files (require_fds; the test
# skips at once where the hard limit is lower).
suite_idle_memory() {
    local n="$1" max="$2" hpid rss0 rss1 each bound check fd
    require_fds $((n + 64))
    server_start "${SERVER_CMD[@]}" -p 0
    conn_open fd
    expect_echo "$fd" "warming up"
    exec {fd}>&-
    rss0=$(rss_kb "$SERVER_PID")
    suite_hold_idle "$n"
    hpid=$SUITE_HOLDER_PID
    rss1=$(rss_kb "$SERVER_PID")
    each=$(((rss1 - rss0) * 1024 / n))
    bound="at most $max" check=1
    [ -z "${SAN:-}" ] || bound="not checked with SAN=$SAN" check=0
    ! course_valgrind || bound="not checked under VALGRIND=1" check=0
    echo "# $n idle connections: server RSS $rss0 kB -> $rss1 kB ($each bytes each, $bound)" >&3
    kill -TERM "$hpid" 2>/dev/null
    wait "$hpid" 2>/dev/null || true
    [ "$check" = 0 ] || [ "$each" -le "$max" ] ||
        fail "$n idle connections cost the server $each bytes each (RSS $rss0 kB -> $rss1 kB), more than $max"
    suite_stop_clean
}

# suite_many_idle [N]: N (2,000) connections held open and idle (echo-load
# --idle checks each one echoes, then holds it), and meanwhile a new client
# is served at once and 10 more echo 100 messages each with every byte
# checked. Reports the server's resident memory per idle connection. Both
# the server and the holder get N + 64 open files (require_fds; the test
# skips at once where the hard limit is lower, or under Wine where the
# wineserver's is).
suite_many_idle() {
    local n="${1:-2000}" hpid rss0 rss1 fd
    require_fds $((n + 64))
    server_start "${SERVER_CMD[@]}" -p 0
    rss0=$(rss_kb "$SERVER_PID")
    suite_hold_idle "$n"
    hpid=$SUITE_HOLDER_PID
    rss1=$(rss_kb "$SERVER_PID")
    conn_open fd
    expect_echo "$fd" "one more, beside $n idle connections"
    exec {fd}>&-
    run timeout 60 "$(tool_bin echo-load)" -p "$PORT" -c 10 -n 100 -l 128
    assert_success
    assert_output --partial "errors 0"
    echo "# $n idle connections: server RSS $rss0 kB -> $rss1 kB ($(((rss1 - rss0) * 1024 / n)) bytes each)" >&3
    kill -TERM "$hpid" 2>/dev/null
    wait "$hpid" 2>/dev/null || true
    suite_stop_clean
}

# ---------------------------------------------------------------------------
# The suite's links (tests/NN-slug/suite-NAME.bats -> tests/suite/echo.cases,
# see common/servers.txt) call these.
# ---------------------------------------------------------------------------

# shellcheck source=common/tools/servers.bash
source "$TOP/common/tools/servers.bash"

# shellcheck disable=SC2034 # SUITE_TITLE and SUITE_FAULTS_TITLE name the tests of echo.cases
# suite_load_server FILE: the server a link's name (suite-NAME.bats, or
# suite-NAME.faults.bats for the run under the faults shim) names, read
# from common/servers.txt into SRV_* (servers.bash); sets SUITE_NAME,
# SUITE_FAULTS (the shim's settings, or empty) and the titles the tests use.
suite_load_server() {
    local f="${1#suite-}"
    f="${f%.bats}"
    SUITE_NAME="${f%.faults}" SUITE_FAULTS=""
    server_load "$SUITE_NAME" || {
        echo "$1: no server '$SUITE_NAME' in common/servers.txt (make suite removes the links of servers that left it)" >&2
        return 1
    }
    SUITE_TITLE="$SUITE_NAME"
    if [ "$f" != "$SUITE_NAME" ]; then # the whole suite under the shim
        SUITE_FAULTS="$(suite_faults_settings "$SRV_KIND")" SUITE_TITLE="$SUITE_NAME under faults"
    fi
    case "$SRV_KIND" in
    blocking) SUITE_FAULTS_TITLE="every byte survives short reads, short writes and EINTR (faults shim)" ;;
    readiness) SUITE_FAULTS_TITLE="every byte survives short reads and writes, EINTR and EAGAIN (faults shim)" ;;
    edge) SUITE_FAULTS_TITLE="every byte survives short reads and writes and EINTR (faults shim; no fake EAGAIN, which an edge-triggered server believes)" ;;
    uring) SUITE_FAULTS_TITLE="every byte survives short sends, -EINTR, -EAGAIN and -ENOBUFS injected into its SQEs by uring-short.so (the libc faults shim sees none of its I/O)" ;;
    win32) SUITE_FAULTS_TITLE="the faults shim cannot reach a Windows program under Wine (skipped, with the reason)" ;;
    esac
}

# suite_faults_settings KIND: what the shim injects when the whole suite runs
# under it (none for io_uring and Wine, whose I/O it cannot see).
suite_faults_settings() {
    case "$1" in
    blocking | readiness) echo "FAULTS_SHORT_READ=30 FAULTS_SHORT_WRITE=50 FAULTS_EINTR=10 FAULTS_EAGAIN=10" ;;
    edge) echo "FAULTS_SHORT_READ=30 FAULTS_SHORT_WRITE=50 FAULTS_EINTR=10" ;;
    esac
}

# suite_setup: SERVER_CMD for the server suite_load_server read, then its
# setup lines from the table.
suite_setup() {
    local bin spec="${SRV_PROG#*:}" line
    case "$SRV_PROG" in
    chapter:*) bin="$(chapter_bin "$spec")" ;;
    exercise:*) bin="$(impl_bin "${spec%%/*}" "${spec#*/}")" ;;
    esac
    local envs=("${SRV_ENV[@]}")
    if [ -n "$SUITE_FAULTS" ]; then
        # shellcheck disable=SC2046,SC2207 # faults_env prints words for env(1)
        envs=($(faults_env $SUITE_FAULTS) "${SRV_ENV[@]}")
    fi
    if [ "$SRV_KIND" = win32 ]; then # Wine runs the program, in the environment
        wine_require
        bin=("$WINE" "$bin")
    fi
    SERVER_CMD=("${bin[@]}" "${SRV_ARGS[@]}")
    [ ${#envs[@]} -eq 0 ] || SERVER_CMD=(env "${envs[@]}" "${SERVER_CMD[@]}")
    while IFS= read -r line; do
        [ -z "$line" ] || eval "$line"
    done <<<"$SRV_SETUP"
}

# suite_case CASE: skip, with the reason, when this server declared in
# common/servers.txt that it cannot pass CASE.
suite_case() {
    local reason
    reason=$(printf '%s' "$SRV_SKIPS" | sed -n "s/^$1: //p" | head -n 1)
    [ -z "$reason" ] || skip "$reason"
}

# suite_faults_for KIND: the faults case that fits the server's kind.
#   blocking   short reads, short writes, EINTR (no EAGAIN on a blocking socket)
#   readiness  the same plus EAGAIN, and the shim must really have injected it
#   edge       no fake EAGAIN (see suite_under_faults_no_eagain)
#   uring      the shim sees none of the bytes; uring-short.so injects the
#              faults in the SQEs instead (see suite_uring_faults)
#   win32      a Windows program under Wine: the shim cannot reach it (skip)
suite_faults_for() {
    case "$1" in
    blocking) suite_under_faults ;;
    readiness)
        suite_under_faults
        local ea
        ea=$(faults_count eagain)
        [ "$ea" -gt 0 ] || fail "the faults shim injected no EAGAIN (log: $(cat "$BATS_TEST_TMPDIR/faults.log" 2>/dev/null))"
        ;;
    edge) suite_under_faults_no_eagain ;;
    uring) suite_uring_faults ;;
    win32) skip "LD_PRELOAD reaches Wine's own Unix calls, not the program's Win32 ones (the chapter's own tests inject short sends another way)" ;;
    *) fail "suite_faults_for: unknown kind '$1'" ;;
    esac
}

# suite_probe_or_skip COMMAND...: run a program's probe (aio-test probe,
# rt-test probe, with the backend in the environment); when it exits 77
# (io_uring refused here, by a sysctl or a seccomp filter), skip the test
# with what it printed.
suite_probe_or_skip() {
    local out status=0
    out=$(timeout 10 "$@" 2>&1) || status=$?
    [ "$status" -ne 77 ] || skip "$out"
    [ "$status" -eq 0 ] || fail "$* : expected exit 0 or 77, got $status: $out"
}

# suite_stop_anytime [STARTS]: a supervisor sends SIGTERM whenever it likes,
# not when the server happens to be asleep. stop-anytime (common/tools)
# starts the server STARTS (40) times and signals it at a different moment
# each time: just after its 'listening on' line, just after a connect,
# mid-echo, and 0-2 ms after a client sent a line. Every start must exit 0
# within 3 s. Under valgrind, 8 starts with 30 s each (valgrind takes a
# second to start a program, and checks for leaks on the way out).
suite_stop_anytime() {
    local starts="${1:-40}" limit=3 wait_start=10 cmd=("${SERVER_CMD[@]}" -p 0)
    if course_valgrind; then
        _course_valgrind_wrap cmd
        starts=8 limit=30 wait_start=60
    else
        limit=$((limit * $(san_slowdown)))
    fi
    # Under Wine (stopped with SIGINT), a start that dies before a word is
    # tried once more, as wine_exec does: Wine now and then fails to start
    # a program, which says nothing about the program.
    local retry=()
    [ "${SUITE_STOP_SIGNAL:-TERM}" = INT ] && retry=(-R)
    run timeout $((starts * (limit + wait_start) * 2 + 30)) "$(tool_bin stop-anytime)" -n "$starts" \
        -t "$limit" -w "$wait_start" -s "${SUITE_STOP_SIGNAL:-TERM}" -e "$BATS_TEST_TMPDIR/stop-anytime.err" \
        "${retry[@]}" -- "${cmd[@]}"
    [ "$status" -eq 0 ] || fail "not every start stopped cleanly (stop-anytime exit status $status):
$output"
    echo "# $output" >&3
}
