# SPDX-License-Identifier: MIT
# tests/06-kqueue/loop.bash: how often echo-kqueue's loop wakes, and the
# clients that make it wait with something pending, for the exercise files
# (kq-interest, kq-dispatch, lazy-timeout).
#
#   load ../helpers/common
#   load ../helpers/echo_suite
#   load idle                   (for stale_events_skipped: wait_eof)
#   load loop
#
#   loop_activity SECONDS       "BUSY WAKEUPS": the server's share of a CPU (%) and its wake-ups
#   require_quiet_loop SECONDS MAX WHAT   fail unless the loop sleeps: under 25% busy, at most MAX wake-ups
#   half_close_waits_quietly    half-closed, its echo pending, the client paused: no wake-up; then every byte and EOF
#   stale_events_skipped        with -t 1: an event behind the one that closed its connection is skipped
#   emfile_then_quiet           out of fds and back: the waiting clients served, then the loop sleeps
#   signal_stops SIG SECONDS    SIG stops the server, exit 0, within SECONDS
#   burst_then_quiet [ARGS...]  8 MiB that fill the socket, read back; then the idle loop must sleep
#
# Why wake-ups and not only CPU time: a loop that is woken for nothing and
# then naps (a usleep() to "fix" the CPU use) shows little CPU time and
# hundreds of wake-ups a second. echo-kqueue is one thread, and on Linux its
# kevent() sleeps in epoll_wait(): every time it sleeps is one voluntary
# context switch of that thread (/proc/PID/status), so the switches count
# the wake-ups without strace.

# loop_activity SECONDS: prints "BUSY WAKEUPS" for the next SECONDS: BUSY the
# percent of the time the server's thread ran or waited for a CPU (as
# busy_percent_over), WAKEUPS its context switches meanwhile.
loop_activity() {
    local r0 w0 r1 w1 t0 t1 s0 s1
    read -r r0 w0 _ <"/proc/$SERVER_PID/schedstat" || return 1
    s0=$(awk '/ctxt_switches/ { n += $2 } END { print n }' "/proc/$SERVER_PID/status") || return 1
    t0=$(date +%s%N)
    sleep "$1"
    read -r r1 w1 _ <"/proc/$SERVER_PID/schedstat" || return 1
    s1=$(awk '/ctxt_switches/ { n += $2 } END { print n }' "/proc/$SERVER_PID/status") || return 1
    t1=$(date +%s%N)
    echo "$(((r1 - r0 + w1 - w0) * 100 / (t1 - t0))) $((s1 - s0))"
}

# require_quiet_loop SECONDS MAX WHAT: over the next SECONDS the server must
# sleep: under 25% of a CPU (a busy loop scores near 100 however loaded the
# machine is) and at most MAX wake-ups (a napping loop makes hundreds). WHAT
# says when, for the message.
require_quiet_loop() {
    local busy wakeups
    [ -r "/proc/$SERVER_PID/schedstat" ] ||
        skip "this kernel has no /proc/PID/schedstat (CONFIG_SCHED_INFO): no way to tell running from sleeping"
    read -r busy wakeups < <(loop_activity "$1") || server_gone "the server exited $3"
    echo "# $3: ${busy}% busy, $wakeups wake-ups in $1 s (at most $2 allowed)" >&3
    [ "$busy" -lt 25 ] ||
        fail "$3, the server was busy ${busy}% of $1 s (expected under 25%): its loop spins"
    [ "$wakeups" -le "$2" ] ||
        fail "$3, the server's loop woke $wakeups times in $1 s (expected at most $2): it is woken for nothing"
}

# burst_then_quiet: a client sends 8 MiB and reads nothing for a second,
# so that the server's socket fills and its echo must wait for room (WRITE
# enabled); then the client reads it all (in under a second here; 5 s
# allowed). Once the output has drained, the idle server must sleep: a
# WRITE left enabled with nothing to write wakes the loop at once, forever.
# Leaves the server running, the client closed. ARGS go in front of the
# server (env ... for the faults shim).
burst_then_quiet() {
    suite_start "$@"
    suite_burst_drain $((8 << 20)) 5
    require_quiet_loop 1 3 "idle after an 8 MiB burst had drained"
    expect_echo "$BURST_FD" "still answers"
    exec {BURST_FD}>&-
}

# half_close_client PORT N PIDFILE: a slow reader (a 4 KiB receive buffer,
# a 1 ms nap after each read) that sends N random bytes from one thread and
# half-closes, while another reads the echo; writes its pid to PIDFILE so
# that a test can pause it (SIGSTOP), and once let go (SIGCONT) reads at full
# speed. Prints "sent N got M intact True|False".
half_close_client() {
    timeout 20 python3 - "$@" <<'PY'
import os, signal, socket, sys, threading, time
port, n, pidfile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
fast = []
signal.signal(signal.SIGCONT, lambda *_: fast.append(1))  # paused, then let go: read at full speed
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", port))
s.settimeout(5)  # nothing moves for 5 s: the echo is stuck
data = os.urandom(n)
with open(pidfile, "w") as f:
    f.write(str(os.getpid()))
def send():
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
t = threading.Thread(target=send)
t.start()
got = bytearray()
while True:
    b = s.recv(65536)
    if not b:
        break
    got += b
    if not fast:
        time.sleep(0.001)
t.join()
print("sent", n, "got", len(got), "intact", bytes(got) == data)
PY
}

# server_close_wait: the number of the server's connections that have read
# their client's EOF and hold nothing unread (ss: CLOSE-WAIT, Recv-Q 0),
# yet are still open.
server_close_wait() {
    ss -Htn state close-wait "( sport = :$PORT )" | awk '$1 == 0 { n++ } END { print n + 0 }'
}

# half_close_waits_quietly: a slow reader sends 5 MiB and half-closes
# (half_close_client). The server's echo backs up behind it: when the
# server reads the EOF, its socket is full (4 MiB at most, tcp_wmem) and
# the rest, about 1 MiB, waits in its buffer. Then the client is paused (SIGSTOP) for 0.8 s: the server has
# nothing to do, and must sleep (a READ left enabled after EOF reports the
# EOF again and again: a spin). It must still hold the connection after
# that (the echo was pending: the test proved something), and once the
# client goes on, send every byte, then EOF. Stops the server.
half_close_waits_quietly() {
    local n=$((5 << 20)) out="$BATS_TEST_TMPDIR/half-close.out" pidfile="$BATS_TEST_TMPDIR/half-close.pid" pid cpid t0
    command -v python3 >/dev/null || skip "python3 is not installed"
    command -v ss >/dev/null || skip "ss (iproute2) is not installed: it tells when the server has read the EOF"
    suite_start
    half_close_client "$PORT" "$n" "$pidfile" >"$out" 2>&1 3>&- &
    pid=$!
    _course_pids+=("$pid")
    # the reference reads the EOF about 1.5 s after the client starts
    t0=$SECONDS
    while [ "$(server_close_wait)" -ne 1 ] && [ $((SECONDS - t0)) -lt 6 ] && kill -0 "$pid" 2>/dev/null; do
        sleep 0.05
    done
    cpid=$(cat "$pidfile" 2>/dev/null) && _course_pids+=("$cpid")
    [ "$(server_close_wait)" -eq 1 ] ||
        server_gone "within 6 s the server never read the client's EOF while its echo was pending (the client: $(cat "$out"))"
    kill -STOP "$cpid"
    require_quiet_loop 0.8 5 "with the client's EOF read, its echo pending and the client paused"
    [ "$(server_close_wait)" -eq 1 ] ||
        fail "the server closed the connection while the client was paused: no echo was pending, the test proved nothing"
    kill -CONT "$cpid"
    wait "$pid" || server_gone "the half-closed client failed (status $?): $(cat "$out")"
    [ "$(cat "$out")" = "sent $n got $n intact True" ] ||
        server_gone "$(cat "$out"): expected every byte back, then EOF"
    signal_stops TERM 3
}

# stale_events_skipped: two events of one connection in one batch, the
# first of which closes it. The server is paused (SIGSTOP) while, with -t 1,
# client X's idle timer falls due and then X sends a line, and client Y
# half-closes and then its timer falls due. When it goes on, one kevent()
# returns both events of each (epoll reports them in the order they became
# ready: X's timer before its line, Y's EOF before its timer), so whichever
# comes first closes the connection and the other is stale: handled, it
# works on fd -1 and closes the connection a second time. Both must be
# closed once; then a new client is served. Leaves the server running.
stale_events_skipped() {
    local x y c
    server_start "${SERVER_CMD[@]}" -p 0 -t 1
    conn_open x
    conn_open y
    expect_echo "$x" "x, then silence"
    expect_echo "$y" "y, then EOF"
    server_pause
    exec {y}>&- # Y's EOF now, its timer in a second
    sleep 1.3
    printf 'x, too late\n' >&"$x" # X's line after its timer fell due
    sleep 0.1
    server_resume
    wait_eof "$x" 5 >/dev/null || server_gone "client X was not closed although its idle timer fell due"
    exec {x}>&-
    require_server_alive
    conn_open c
    expect_echo "$c" "served after the stale events"
    exec {c}>&-
    if grep -q 'fd=-1' "$SERVER_ERR"; then
        fail "an event was handled for a connection closed earlier in the same batch (fd=-1 in the log):
$(cat "$SERVER_ERR")"
    fi
    [ "$(grep -c '^closing fd=[0-9]*: idle' "$SERVER_ERR")" -le 1 ] ||
        fail "more idle closes than clients that timed out (Y had closed, X timed out):
$(cat "$SERVER_ERR")"
}

# emfile_then_quiet: under ulimit -n 12, ten clients connect: accept() runs
# out of fds, the server pauses accepting and starts its retry timer. Once
# the first clients leave, the waiting ones are served (the retry timer, or
# a close, enabled the listener again). Then, idle, the loop must sleep: a
# retry timer left enabled wakes it every 100 ms. Stops the server.
emfile_then_quiet() {
    local fds=() i fd line served=() waiting=()
    server_start bash -c 'ulimit -n "$0" && exec "$@"' 12 "${SERVER_CMD[@]}" -p 0
    for ((i = 0; i < 10; i++)); do
        conn_open fd
        fds+=("$fd")
        (printf 'client %d\n' "$i" >&"$fd") 2>/dev/null
    done
    sleep 0.5
    for ((i = 0; i < 10; i++)); do
        line=""
        read -r -t 0.2 line <&"${fds[$i]}" 2>/dev/null || true
        if [ "$line" = "client $i" ]; then served+=("$i"); else waiting+=("$i"); fi
    done
    server_exited && server_gone "the server died when it ran out of fds"
    grep -q 'Too many open files' "$SERVER_ERR" ||
        fail "expected 'accept(...): Too many open files' on stderr: no EMFILE, the test proved nothing; got: $(cat "$SERVER_ERR")"
    [ ${#served[@]} -gt 0 ] && [ ${#waiting[@]} -gt 0 ] ||
        fail "${#served[@]} of 10 clients served under ulimit -n 12: expected some, not all"
    for i in "${served[@]}"; do
        fd=${fds[$i]}
        exec {fd}>&-
    done
    # each served client leaves, and its fd goes to the next one waiting
    for i in "${waiting[@]}"; do
        expect_line "${fds[$i]}" "client $i" "after fds were freed"
        fd=${fds[$i]}
        exec {fd}>&-
    done
    sleep 0.3 # a retry timer armed at the last EMFILE has fired by now
    require_quiet_loop 1 3 "idle after running out of fds and recovering"
    signal_stops TERM 3
}

# signal_stops SIG SECONDS: SIG must stop the server, exit 0, within
# SECONDS (the reference takes a few ms); a server that ignores it is left
# to teardown after SECONDS, not after server_stop's 10 s.
signal_stops() {
    local deadline
    kill -"$1" "$SERVER_PID" 2>/dev/null || true
    deadline=$(($(date +%s%N) + $2 * 1000000000))
    until server_exited || [ "$(date +%s%N)" -ge "$deadline" ]; do
        sleep 0.05
    done
    if ! server_exited; then
        kill -KILL "$SERVER_PID" 2>/dev/null # teardown would wait longer
        fail "still running $2 s after SIG$1: the EVFILT_SIGNAL event did not stop the loop"
    fi
    server_stop "$1"
    [ "$SERVER_STATUS" -eq 0 ] ||
        fail "expected exit status 0 after SIG$1, got $SERVER_STATUS
--- stderr ---
$(cat "$SERVER_ERR")"
}
