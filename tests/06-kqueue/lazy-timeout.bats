#!/usr/bin/env bats
# Exercise 06-kqueue/lazy-timeout: idle timeouts that do not touch the timer
# on every read. Runs against $IMPL (solutions by default; `make ex` uses
# exercises).

load ../helpers/common
load ../helpers/echo_suite
load idle
load loop

setup() {
    SERVER_CMD=("$(impl_bin lazy-timeout echo-kqueue)" -L)
}

@test "lazy-timeout: a message comes back" {
    echo_with_timer
}

@test "lazy-timeout -t 1: an idle client is closed, an active one is not" {
    idle_closed_active_kept 8 10 # 2.4 s of activity: the timer fires twice meanwhile
    suite_stop_clean
}

# The timer was armed at accept, and fires at 1 s and 2 s while the client
# is active. Its last message goes out 2.1 s after it connected: the timer
# that fires at 3 s finds it idle for 0.9 s, and must be armed for the
# 0.1 s left. The reference closes it 1.0 to 1.1 s after that message; one
# armed for the whole timeout again closes it at 4 s, 1.9 s after.
@test "lazy-timeout -t 1: active for 2.1 s, then idle: closed 1 s after the last message, not up to a timeout later" {
    local c i ms t0 left
    server_start "${SERVER_CMD[@]}" -p 0 -t 1
    conn_open c
    t0=$(date +%s%N)
    for ((i = 0; i < 6; i++)); do
        sleep 0.3
        expect_echo "$c" "busy $i"
    done
    left=$((2100 - ($(date +%s%N) - t0) / 1000000))
    [ "$left" -le 0 ] || sleep "$(printf '0.%03d' "$left")"
    expect_echo "$c" "the last message"
    ms=$(wait_eof "$c" 6) || server_gone "not closed within 6 s of its last message (-t 1): was the timer armed again when it fired early?"
    echo "# closed $ms ms after the last message" >&3
    [ "$ms" -ge 800 ] && [ "$ms" -le 1500 ] ||
        fail "closed $ms ms after the last message: expected about 1000 (between 800 and 1500)"
    exec {c}>&-
    suite_stop_clean
}

# An active client costs the loop one turn per message, and one each time
# its timer fires (twice here): on Linux each turn is one epoll_wait(). The
# reference: 9 to 12 of them. A timer armed again for 0 s (less than a
# second left, counted in whole seconds) fires at once, over and over,
# until the next message: hundreds of turns.
@test "lazy-timeout -t 1: an active client (a line every 0.3 s) costs the loop a turn per message and per timer, no more" {
    local c i trace="$BATS_TEST_TMPDIR/strace.log" before calls
    [ "$(uname -s)" = Linux ] || skip "counts the Linux layer's epoll_wait() calls"
    require_strace
    # (LeakSanitizer cannot check a process that strace traces)
    ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" server_start strace -f -qq -e trace=epoll_wait -o "$trace" "${SERVER_CMD[@]}" -p 0 -t 1
    conn_open c
    expect_echo "$c" "first"
    before=$(grep -c 'epoll_wait(' "$trace" || true)
    for ((i = 0; i < 7; i++)); do
        sleep 0.3
        expect_echo "$c" "still here $i"
    done
    calls=$(($(grep -c 'epoll_wait(' "$trace" || true) - before))
    echo "# 7 messages in 2.1 s, the timer due twice: $calls epoll_wait() calls" >&3
    exec {c}>&-
    traced_stop
    [ "$calls" -le 40 ] ||
        fail "$calls epoll_wait() calls for 7 messages and 2 timer expiries (expected at most 40): is the timer armed again for 0 s?"
}

# Under strace: on Linux a timer EV_ADD that moves the kqueue's earliest
# deadline is one timerfd_settime() (its timers share one timerfd); with one
# connection, restarting its timer always does. A lazy server arms the timer
# at accept and when it fires; a busy client makes no timer calls at all. One
# that re-arms on every read makes one per message.
@test "lazy-timeout: 100 echoes on one connection cost (almost) no timer system calls" {
    local c i trace="$BATS_TEST_TMPDIR/strace.log" calls
    [ "$(uname -s)" = Linux ] || skip "counts the Linux layer's timerfd_settime() calls"
    require_strace
    server_start strace -f -qq -e trace=timerfd_settime -o "$trace" "${SERVER_CMD[@]}" -p 0 -t 30
    conn_open c
    expect_echo "$c" "first"
    sleep 0.3
    local before
    before=$(grep -c 'timerfd_settime(' "$trace" || true)
    for ((i = 0; i < 100; i++)); do
        expect_echo "$c" "message $i"
    done
    calls=$(($(grep -c 'timerfd_settime(' "$trace" || true) - before))
    echo "# timerfd_settime() calls during 100 echoes: $calls" >&3
    exec {c}>&-
    traced_stop
    [ "$calls" -lt 10 ] ||
        fail "$calls timerfd_settime() calls for 100 echoes: the timer is touched on every read (expected fewer than 10)"
}

@test "lazy-timeout -t 1: clients that leave before their timeout leave no timer behind" {
    no_timer_left_behind
}

@test "lazy-timeout: an idle server with a connected client does not spin" {
    suite_idle_no_spin
}

@test "lazy-timeout: idle connections give their output buffer back (at most 2 KiB each)" {
    # Each of 500 connections echoes once, then idles. A drained buffer
    # kept allocated costs about 4.4 KB per connection in resident memory.
    untraced suite_idle_memory 500 2048
}
