#!/usr/bin/env bats
# Chapter 06: kqueue. On Linux echo-kqueue and kq-tour run on
# common/kqueue-linux (whose own tests are tests/common/kqueue-linux.bats), so
# under them the kernel sees epoll_wait(), one timerfd, signalfds and eventfds.

load ../helpers/common
load ../helpers/echo_suite
load idle

setup() {
    SERVER_CMD=("$(chapter_bin echo-kqueue)")
}

# The shared echo suite's cases (binary data, 16 MiB, 200 clients, resets,
# half-close, never-reading client, fd limit, fd growth, idle connections,
# SIGTERM, faults) run from suite-echo-kqueue.bats, listed in
# common/servers.txt by make suite. What follows is echo-kqueue's own.

# ---- the demo: kq-tour ------------------------------------------------------------

@test "kq-tour: EV_ONESHOT deletes the knote after one event; EV_DISPATCH disables it and EV_ENABLE re-arms it" {
    run timeout 60 "$(chapter_bin kq-tour)"
    assert_success
    assert_output --partial "a byte in a pipe: 1 event, flags with EV_ONESHOT"
    assert_output --partial "another byte: 0 events; EV_DELETE then: ENOENT, the knote is gone"
    assert_output --partial "a byte: 1 event; another byte: 0 events (disabled by the first)"
    assert_output --partial "EV_ENABLE: 1 event at once, data 2 (both bytes), udata kept: yes"
    assert_output --partial "EV_DELETE: 0, the knote was still there"
    assert_output --partial "every step behaved as described"
}

@test "kq-tour: EVFILT_USER wakes a thread asleep in kevent(), once per trigger with EV_CLEAR; a timer's events carry EV_CLEAR; EV_ERROR needs room" {
    run timeout 60 "$(chapter_bin kq-tour)"
    assert_success
    assert_output --partial "thread B asleep in kevent(); thread A triggers it: B returns 1 event, fflags 0x5 (A's reasons)"
    assert_output --partial "with EV_CLEAR, two triggers: reported by 1 of 3 calls"
    assert_output --partial "without EV_CLEAR, one trigger: reported by 3 of 3 calls; a change with EV_CLEAR: 0 of 1"
    assert_output --partial "EV_ADD of a 10 ms timer, flags EV_ADD only: its event's flags have EV_CLEAR"
    assert_output --partial "EV_DELETE of a timer never added, room for 1 event: kevent() = 1, flags EV_ERROR, data ENOENT"
    assert_output --partial "the same with nevents 0: kevent() = -1, errno ENOENT"
}

@test "kq-tour: an argument is a usage error (exit 2); -h exits 0" {
    run "$(chapter_bin kq-tour)" extra
    assert_failure 2
    assert_output --partial "usage: kq-tour"
    run "$(chapter_bin kq-tour)" -h
    assert_success
    assert_output --partial "usage: kq-tour"
}

# ---- the event loop -----------------------------------------------------------

@test "echo-kqueue: client B is served while client A is connected and idle" {
    suite_serves_while_idle
}
@test "echo-kqueue: an idle server with a connected client does not spin" {
    suite_idle_no_spin
}
@test "echo-kqueue: strace shows epoll_wait() under kevent() and no system calls while idle" {
    [ "$(uname -s)" = Linux ] || skip "the Linux layer's system calls"
    suite_syscalls_idle epoll_wait
}
@test "echo-kqueue: after a burst that filled the socket is drained, the idle server does not spin" {
    suite_idle_after_burst_no_spin
}
@test "echo-kqueue: running out of fds (EMFILE) is logged, and waiting clients are served later" {
    suite_emfile_recovers
}
# Each connection takes one fd here, its socket: its idle timer shares the
# kqueue's one timerfd, opened at startup with the retry timer (a timerfd per
# timer would take two fds per connection, and a client accepted with the
# last fd would get no timer). So under `ulimit -n 40` every fd left free at
# startup holds a client, and accept() is what runs out, with EMFILE.
@test "echo-kqueue -t 30: under ulimit -n 40 every free fd holds a client: timers take no fd" {
    local limit=40 fds=() i fd line base served=0
    [ "$(uname -s)" = Linux ] || skip "counts fds in /proc"
    server_start bash -c 'ulimit -n "$0" && exec "$@"' "$limit" "${SERVER_CMD[@]}" -p 0 -t 30
    # the fds below the limit (one the test run inherited may be above it)
    base=$(find "/proc/$SERVER_PID/fd" -mindepth 1 -printf '%f\n' | awk -v l="$limit" '$1 < l' | wc -l)
    for ((i = 0; i < limit; i++)); do
        conn_open fd
        fds+=("$fd")
        (printf 'client %d\n' "$i" >&"$fd") 2>/dev/null
    done
    sleep 0.5
    for ((i = 0; i < limit; i++)); do
        line=""
        read -r -t 0.2 line <&"${fds[$i]}" 2>/dev/null || true
        [ "$line" = "client $i" ] && served=$((served + 1))
    done
    echo "# $base fds open at startup; $served of $limit clients served under ulimit -n $limit" >&3
    server_exited && server_gone "the server died when it ran out of fds"
    grep -q 'Too many open files' "$SERVER_ERR" ||
        fail "expected 'accept(...): Too many open files' on stderr, got: $(cat "$SERVER_ERR")"
    [ "$served" -eq $((limit - base)) ] ||
        fail "$served clients served with $((limit - base)) fds free: expected one fd per client"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    suite_stop_clean
}
@test "echo-kqueue: 96 KiB that arrive while the server is paused all come back" {
    suite_drains_message_sent_while_paused
}
@test "echo-kqueue: 30 clients that connect while the server is paused are all served" {
    suite_accepts_burst_while_paused
}
@test "echo-kqueue: a ping-pong client stays fast while another floods" {
    suite_fair_under_flood
}
@test "echo-kqueue: strace -f -c: epoll_wait under kevent(), no poll/select, at most 3 reads+writes per message" {
    [ "$(uname -s)" = Linux ] || skip "the Linux layer's system calls"
    suite_syscalls_per_message epoll_wait
}
@test "echo-kqueue: valgrind finds no leak, no error and no open fd after SIGTERM with clients connected" {
    suite_valgrind_clean
}

# ---- idle timeouts (EVFILT_TIMER) ---------------------------------------------

@test "echo-kqueue -t 1: an idle client is closed after about 1 s, an active one is not" {
    idle_closed_active_kept 8 10 # the active client sends every 0.3 s for 2.4 s
    echo "# after 2.4 s of echoes to the active client, the idle one saw EOF within $IDLE_MS ms more" >&3
    grep -q 'idle for 1 s' "$SERVER_ERR" || fail "expected 'idle for 1 s' in the log, got: $(cat "$SERVER_ERR")"
    suite_stop_clean
}

@test "echo-kqueue -t 1: the timeout counts from the last message, not from the connection" {
    local c ms
    server_start "${SERVER_CMD[@]}" -p 0 -t 1
    conn_open c
    sleep 0.7
    expect_echo "$c" "restart the timer"
    ms=$(wait_eof "$c" 10) || server_gone "the idle client was not closed within 10 s"
    # closed about 1 s after the message, so more than 0.7 s after it
    [ "$ms" -ge 700 ] || fail "closed $ms ms after the last message: expected about 1000"
    exec {c}>&-
    suite_stop_clean
}

@test "echo-kqueue -t 0: idle clients are never closed" {
    local c
    server_start "${SERVER_CMD[@]}" -p 0 -t 0
    conn_open c
    sleep 2
    expect_echo "$c" "still open after 2 s"
    exec {c}>&-
    suite_stop_clean
}

@test "echo-kqueue -t 1: clients that leave before their timeout leave no timer behind" {
    no_timer_left_behind
}

# ---- signals (EVFILT_SIGNAL) and arguments --------------------------------------

@test "echo-kqueue: SIGINT and SIGTERM both stop it with exit 0, clients connected" {
    local a sig
    for sig in INT TERM; do
        server_start "${SERVER_CMD[@]}" -p 0
        conn_open a
        expect_echo "$a" "before SIG$sig"
        wait_blocked_in epoll_wait
        stop_within 5 "$sig"
        exec {a}>&-
    done
}

# The stop race of chapter 01, in kqueue's terms: SIGINT and SIGTERM are
# ignored, and an ignored signal that no EVFILT_SIGNAL watches yet is gone.
# strace makes the moment after the port line long: the fcntl() calls that
# follow it each wait 0.3 s, so a SIGTERM sent then always arrives before
# the loop's first kevent(). It stops the server only if EVFILT_SIGNAL was
# registered before the port was printed.
@test "echo-kqueue: a SIGTERM sent the moment the port is printed stops it, however late it reaches its loop" {
    local i
    [ "$(uname -s)" = Linux ] || skip "slows the server's system calls with strace"
    require_strace
    # (LeakSanitizer cannot check a process that strace traces: a sanitized
    # build keeps its leak check for the tests without strace)
    server_start strace -f -qq -o /dev/null -e trace=fcntl -e inject=fcntl:delay_enter=300000 \
        env ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" "$(chapter_bin echo-kqueue)" -p 0
    traced_child
    kill -TERM "$TRACED_PID"
    for ((i = 0; i < 60; i++)); do
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -9 "$TRACED_PID" 2>/dev/null || true
        server_stop 0
        fail "still running 6 s after a SIGTERM sent as the port was printed: it came before EVFILT_SIGNAL was registered, and an ignored signal that nothing watches is gone"
    fi
    server_stop 0
    assert_equal "$SERVER_STATUS" 0
}

@test "echo-kqueue: bad arguments print usage on stderr and exit 2; -h exits 0" {
    local bin args
    bin="$(chapter_bin echo-kqueue)"
    for args in "--bogus" "-t -1" "-t abc" "-t 86401" "-p 70000" "extra"; do
        run $bin $args
        [ "$status" -eq 2 ] || fail "echo-kqueue $args: expected exit 2, got $status: $output"
        assert_output --partial "usage:"
    done
    run "$bin" -h
    assert_success
    assert_output --partial "-t SECS"
}

# ---- Part II side by side (bench.sh) -----------------------------------------------

@test "bench.sh: an unknown option or a bad count says so and exits 2" {
    run timeout 10 "$TOP/chapters/06-kqueue/bench.sh" --fast
    assert_failure 2
    assert_output --partial "unknown argument --fast"
    run timeout 10 "$TOP/chapters/06-kqueue/bench.sh" -r zero
    assert_failure 2
    assert_output --partial "positive whole number"
}
