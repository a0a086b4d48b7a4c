# SPDX-License-Identifier: MIT
# tests/04-epoll/event-loop.bash: checks of an event loop for the exercises
# of chapters 04 and 05 (load ../04-epoll/event-loop after common and
# echo_suite).
#
#   wakeups_over SECONDS         WAKEUPS: times the server's main thread was
#                                put on a CPU in the next SECONDS (and BUSY_PERCENT)
#   idle_wakeups_at_most MAX [SECONDS]   a client connected and echoed once,
#                                then idle: the server wakes at most MAX times
#                                in SECONDS (2)
#   idle_wakeups_after_burst_at_most MAX [SECONDS]   the same after a 16 MiB
#                                burst that needed EPOLLOUT has drained
#   idle_wakeups_all_threads_at_most MAX [SECONDS]   the same, all threads
#   fd_limit_wakeups_at_most MAX [SECONDS]   out of fds with clients waiting,
#                                the server wakes at most MAX times
#   faults_echo_within SECONDS [VAR=VALUE...]   echoes under the faults shim,
#                                a stall reported within SECONDS
#   epoll_ctl_under_load_at_most MAX   5,000 echoes on 10 connections cost
#                                at most MAX epoll_ctl() calls (strace -c)
#   burst_while_paused N         N clients connect to the paused server, which
#                                must serve them all within 5 s of resuming
#   gate_setup, gate_teardown    skip the rest of a file once a gate test
#                                (GATE=1) failed: see below
#
# Why wake-ups and not CPU time: a loop that spins with a short sleep in it
# (usleep(1000) after each epoll_wait()) uses little CPU, and a check of CPU
# ticks lets it pass, but it still wakes a thousand times a second, drains a
# laptop's battery and keeps the CPU out of its deep sleep states. A loop
# that sleeps in epoll_wait() with nothing to do is not put on a CPU at all.
# Field 3 of /proc/PID/schedstat counts the times the thread was scheduled
# in, whatever woke it: an epoll_wait() that returned, a nanosleep() that
# ended, a preemption. The main thread only: a sanitizer's helper thread
# (ThreadSanitizer's wakes every 100 ms) is not the server's doing.

# wakeups_over SECONDS: over the next SECONDS, WAKEUPS is how many times the
# server's main thread was scheduled in, and BUSY_PERCENT the share of the
# time it spent running or waiting for a CPU (fields 1 and 2). A loop that
# naps shows as wake-ups. A loop that never blocks (epoll_wait() with a
# timeout of 0, again and again) is scheduled in only when something
# preempts it, which on a quiet machine is seldom: it shows as busy, near
# 100% however loaded the machine is. An idle server shows as neither.
wakeups_over() {
    _sched_over "$1" "/proc/$SERVER_PID/schedstat"
}

# _sched_over SECONDS FILE...: the schedule-ins of the threads whose
# schedstat files are given, over the next SECONDS, in WAKEUPS; their busy
# share (all threads together) in BUSY_PERCENT.
_sched_over() {
    local secs="$1" f r w c r0=0 c0=0 r1=0 c1=0 t0 t1
    shift
    for f in "$@"; do
        read -r r w c <"$f" 2>/dev/null && r0=$((r0 + r + w)) c0=$((c0 + c))
    done
    t0=$(date +%s%N)
    sleep "$secs"
    for f in "$@"; do
        read -r r w c <"$f" 2>/dev/null && r1=$((r1 + r + w)) c1=$((c1 + c))
    done
    t1=$(date +%s%N)
    BUSY_PERCENT=$(((r1 - r0) * 100 / (t1 - t0)))
    WAKEUPS=$((c1 - c0))
}

# _idle_verdict N MAX SECS WHAT: fail unless N wake-ups is at most MAX and
# BUSY_PERCENT is under 25 (the reference's is 0).
_idle_verdict() {
    local n="$1" max="$2" secs="$3" what="$4"
    echo "# $what: the server woke $n times in $secs s (at most $max), busy ${BUSY_PERCENT}% of the time (under 25%)" >&3
    [ "$BUSY_PERCENT" -lt 25 ] ||
        fail "$what, the server was running or waiting for a CPU ${BUSY_PERCENT}% of $secs s: it never sleeps. The server said:
$(tail -n 5 "$SERVER_ERR")"
    [ "$n" -le "$max" ] ||
        fail "$what, the server woke $n times in $secs s with nothing to do (expected at most $max): a loop that sleeps a little and looks again is still a busy loop. The server said:
$(tail -n 5 "$SERVER_ERR")"
}

# idle_wakeups_at_most MAX [SECONDS]: start the server, echo once on a
# connection and keep it open, let it settle for 0.3 s, then require at
# most MAX wake-ups in SECONDS (2). The server must still answer afterwards.
idle_wakeups_at_most() {
    _idle_wakeups main "$@"
}

# idle_wakeups_after_burst_at_most MAX [SECONDS]: a client sends 16 MiB and
# reads nothing for a second, so the echo fills its receive buffer and the
# server's send buffer: the server's writes come back short or EAGAIN and it
# must ask to hear about writability (EPOLLOUT). Then the client reads it
# all back (within 10 s; the reference takes about one), and with the
# pending output gone the server must drop that interest: at most MAX
# wake-ups in SECONDS (2) of idleness afterwards. An idle check after a
# short echo cannot see this: a short echo never needs EPOLLOUT.
idle_wakeups_after_burst_at_most() {
    local max="$1" secs="${2:-2}" got bytes=$((16 << 20)) t=$((10 * $(san_slowdown)))
    suite_start
    [ -r "/proc/$SERVER_PID/schedstat" ] ||
        skip "this kernel has no /proc/PID/schedstat (CONFIG_SCHED_INFO): no way to count wake-ups"
    flood_never_reading "$bytes"
    sleep 1
    server_exited && server_gone "the server died while a client sent 16 MiB without reading"
    got=$(flood_read_back "$t")
    [ "$got" -eq "$bytes" ] ||
        server_gone "expected $bytes bytes echoed within $t s, got $got: the rest of the echo waits for a wake-up that never comes"
    # the sender may still be inside its last write(): it must not count
    wait "$FLOOD_PID" 2>/dev/null || true
    sleep 0.3
    wakeups_over "$secs"
    _idle_verdict "$WAKEUPS" "$max" "$secs" "idle after a 16 MiB burst drained (writability still asked for?)"
    expect_echo "$FLOOD_FD" "still answers"
    flood_end
    suite_stop_clean
}

# The gate. make ex runs a file's tests 4 at a time and gives its verdict
# when they are done, so one test that waits out a long timeout delays the
# verdict on all of them. When a server stalls (the classic edge-triggered
# bug), every test that talks to it waits. A test marked GATE=1 that fails
# leaves a mark, and the tests that start after it skip, saying why: the
# first failure is the one to fix, and the verdict comes in seconds.
#   setup()    { ...; gate_setup; }
#   teardown() { gate_teardown; }
#   @test "..." { GATE=1; ... }

gate_setup() {
    [ ! -e "$BATS_FILE_TMPDIR/gate-failed" ] ||
        skip "fix the first failing test first: with a stalled server every later test only waits out its timeout"
}

gate_teardown() {
    if [ -n "${GATE:-}" ] && [ -z "${BATS_TEST_COMPLETED:-}" ]; then
        touch "$BATS_FILE_TMPDIR/gate-failed"
    fi
    course_teardown
}

# faults_echo_within SECONDS [VAR=VALUE...]: the server under the faults
# shim with the given settings (FAULTS_SHORT_READ=30 FAULTS_SHORT_WRITE=50
# FAULTS_EINTR=10 by default: no fake EAGAIN, which an edge-triggered
# server believes), then 1 MB through echo-client and 10 connections of
# echo-load echoing 100 messages of 3,000 bytes each, every byte checked,
# each within SECONDS (times the sanitizer's slowdown). The shared suite's
# case waits 60 s for a stalled echo; the verdict on a stall comes sooner
# here. The test then checks the shim's counts itself (faults_injected).
faults_echo_within() {
    local t=$(($1 * $(san_slowdown))) settings=("${@:2}")
    [ ${#settings[@]} -gt 0 ] || settings=(FAULTS_SHORT_READ=30 FAULTS_SHORT_WRITE=50 FAULTS_EINTR=10)
    # shellcheck disable=SC2046 # one word per VAR=VALUE
    suite_start env $(faults_env "${settings[@]}")
    payload "$BATS_TEST_TMPDIR/f1" 1000000
    CLIENT_TIMEOUT=$t suite_echo_file "$BATS_TEST_TMPDIR/f1"
    run timeout $((t + 5)) "$(tool_bin echo-load)" -p "$PORT" -c 10 -n 100 -l 3000 -t "$t"
    assert_success
    assert_output --partial "errors 0"
    suite_stop_clean
}

# fd_limit_wakeups_at_most MAX [SECONDS]: under `ulimit -n 64`, 100 clients
# connect and stay, so accept() fails with EMFILE while connections wait in
# the backlog. The server must sleep meanwhile: at most MAX wake-ups in
# SECONDS (2). (A retry timer is fine: the chapters' servers try accept()
# again once a second.) Then the clients leave, and a new one must be
# served. Wake-ups and not CPU ticks: on a loaded machine a busy loop gets
# only its share of a CPU, and can pass a bound on ticks.
fd_limit_wakeups_at_most() {
    local max="$1" secs="${2:-2}" fds=() i fd
    server_start bash -c 'ulimit -n 64 && exec "$@"' _ "${SERVER_CMD[@]}" -p 0
    [ -r "/proc/$SERVER_PID/schedstat" ] ||
        skip "this kernel has no /proc/PID/schedstat (CONFIG_SCHED_INFO): no way to count wake-ups"
    for ((i = 0; i < 100; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || fail "connect $i failed: the backlog is full?"
        fds+=("$fd")
    done
    sleep 0.5
    server_exited && server_gone "the server died when it ran out of fds"
    grep -q 'Too many open files' "$SERVER_ERR" ||
        fail "expected 'accept(...): Too many open files' on stderr, got: $(cat "$SERVER_ERR")"
    wakeups_over "$secs"
    _idle_verdict "$WAKEUPS" "$max" "$secs" "out of fds with clients waiting (accept() retried without waiting?)"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    # the reference serves the first try; a few seconds of tries, no more
    served_again_within 5
    suite_stop_clean
}

# idle_wakeups_all_threads_at_most MAX [SECONDS]: idle_wakeups_at_most for a
# server with threads: the wake-ups of all its threads together. A
# sanitizer's helper thread counts too (ThreadSanitizer's wakes about ten
# times a second): MAX must leave room for it.
idle_wakeups_all_threads_at_most() {
    _idle_wakeups all "$@"
}

# _idle_wakeups main|all MAX [SECONDS]: the two above, for the main thread
# or for all of them.
_idle_wakeups() {
    local which="$1" max="$2" secs="${3:-2}" a what="idle with a client connected"
    suite_start
    [ -r "/proc/$SERVER_PID/schedstat" ] ||
        skip "this kernel has no /proc/PID/schedstat (CONFIG_SCHED_INFO): no way to count wake-ups"
    conn_open a
    expect_echo "$a" ping
    sleep 0.3
    if [ "$which" = all ]; then
        _sched_over "$secs" /proc/"$SERVER_PID"/task/*/schedstat
        what="$what (all threads)"
    else
        wakeups_over "$secs"
    fi
    _idle_verdict "$WAKEUPS" "$max" "$secs" "$what"
    expect_echo "$a" "still answers"
    exec {a}>&-
    suite_stop_clean
}


# burst_while_paused N: with the server stopped (SIGSTOP), one echo-load
# process opens N connections (the kernel completes their handshakes and
# queues them in the backlog) and sends one message on each; the server
# resumes to a single edge on its listener. Every connection must be
# served within 5 s (the reference takes milliseconds): echo-load exits 0
# with "errors 0". Its report, and the server's stderr, say what went wrong.
burst_while_paused() {
    local n="$1" out="$BATS_TEST_TMPDIR/load.out" lpid i q=0 t=$((5 * $(san_slowdown)))
    suite_start
    server_pause
    timeout --foreground $((t + 20)) "$(tool_bin echo-load)" -p "$PORT" -c "$n" -n 1 -l 64 -t $((t + 10)) >"$out" 2>&1 &
    lpid=$!
    _course_pids+=("$lpid")
    # wait until all N sit in the backlog: that is one edge, not N
    for ((i = 0; i < 100; i++)); do
        q=$(ss -Htn state syn-recv state established "( dport = :$PORT )" 2>/dev/null | wc -l)
        [ "$q" -ge "$n" ] && break
        sleep 0.05
    done
    server_resume
    # echo-load's own timeout is longer: give the server t seconds, then judge
    for ((i = 0; i < t * 20; i++)); do
        kill -0 "$lpid" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$lpid" 2>/dev/null; then
        kill "$lpid" 2>/dev/null
        wait "$lpid" 2>/dev/null || true
        server_exited && server_gone "the server died"
        fail "$n clients connected while the server was paused, and not all were served within $t s: the rest are still in the backlog, and no new edge will come for them. The server said:
$(tail -n 5 "$SERVER_ERR")"
    fi
    wait "$lpid" || fail "echo-load failed: $(cat "$out")"
    grep -q 'errors 0' "$out" || fail "echo-load saw errors: $(cat "$out")"
    suite_stop_clean
}

# epoll_ctl_under_load_at_most MAX: the server under `strace -f -c` while 10
# connections of echo-load echo 500 messages of 128 bytes each (within 10 s:
# a stalled server is reported then, not after echo-load's minute), then
# SIGTERM. At most MAX epoll_ctl() calls in all: what the chapters claim
# about the cost of a message. Prints the count.
epoll_ctl_under_load_at_most() {
    local max="$1" trace="$BATS_TEST_TMPDIR/strace-c" t=$((10 * $(san_slowdown))) ctl
    require_strace
    # LeakSanitizer cannot work under ptrace: no leak check in a sanitizer build here
    ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" server_start strace -f -c -o "$trace" "${SERVER_CMD[@]}" -p 0
    run timeout $((t + 5)) "$(tool_bin echo-load)" -p "$PORT" -c 10 -n 500 -l 128 -t "$t"
    assert_success
    assert_output --partial "errors 0"
    traced_stop
    [ "$SERVER_STATUS" -eq 0 ] || fail "expected exit status 0 after SIGTERM, got $SERVER_STATUS
--- stderr ---
$(cat "$SERVER_ERR")"
    ctl=$(calls_of "$trace" epoll_ctl)
    echo "# 5,000 echoes on 10 connections: $ctl epoll_ctl() calls (at most $max)" >&3
    [ "$ctl" -le "$max" ] ||
        fail "expected at most $max epoll_ctl() calls for 10 connections and 5,000 small echoes, got $ctl: one per message?"
}
