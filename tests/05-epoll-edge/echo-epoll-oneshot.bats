#!/usr/bin/env bats
# Chapter 05: echo-epoll-oneshot, worker threads sharing one epoll instance
# with EPOLLONESHOT. Run it under ThreadSanitizer too: make test SAN=thread CH=05.

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(chapter_bin echo-epoll-oneshot)" -w 4)
}

# worker_events: "N N N N", the events each worker served (from the exit report).
worker_events() {
    sed -n 's/^worker [0-9]*: \([0-9]*\) events.*/\1/p' "$SERVER_OUT" | tr '\n' ' '
}

# The shared echo suite's cases (binary data, 16 MiB, 200 clients, resets,
# half-close, never-reading client, fd limit, fd growth, idle connections,
# SIGTERM, faults) run from suite-echo-epoll-oneshot.bats, listed in
# common/servers.txt by make suite. What follows is echo-epoll-oneshot's own.

@test "echo-epoll-oneshot: client B is served while client A is connected and idle" {
    suite_serves_while_idle
}
@test "echo-epoll-oneshot: an idle server with a connected client does not spin" {
    suite_idle_no_spin
}
@test "echo-epoll-oneshot: after a burst that filled the socket is drained, the idle server does not spin" {
    suite_idle_after_burst_no_spin
}
@test "echo-epoll-oneshot: out of fds (EMFILE), the clients left in the backlog are served once others leave" {
    suite_emfile_recovers
}
@test "echo-epoll-oneshot: strace shows epoll_wait() in use and no system calls while idle" {
    suite_syscalls_idle epoll_wait
}
@test "echo-epoll-oneshot: strace -f -c: epoll_wait, no poll/select, at most 3 reads+writes per message" {
    suite_syscalls_per_message epoll_wait
}

# ---- what ONESHOT gives -------------------------------------------------------------------

@test "echo-epoll-oneshot: 4 workers, 100 clients: several workers serve, and no event ever finds its connection held by another worker" {
    local ev busy=0 n
    suite_start
    run timeout 120 "$(tool_bin echo-load)" -p "$PORT" -c 100 -n 200 -l 200 -D 4
    assert_success
    assert_output --partial "errors 0"
    suite_stop_clean
    # a second owner would have aborted the server (status 134) with a message
    ! grep -q 'still serves it' "$SERVER_ERR" || fail "$(cat "$SERVER_ERR")"
    grep -Eq '^owner check: none of [1-9][0-9]* events found its connection held by another worker' "$SERVER_OUT" ||
        fail "no owner check line: $(cat "$SERVER_OUT")"
    for n in $(worker_events); do ((n > 0)) && busy=$((busy + 1)); done
    echo "# events per worker: $(worker_events)" >&3
    [ "$busy" -ge 2 ] || fail "expected at least 2 of 4 workers to serve events, got: $(worker_events)"
}

@test "echo-epoll-oneshot: 96 KiB sent in one go to a paused server, with no further traffic, come back whole (the re-arm reports the rest)" {
    suite_drains_message_sent_while_paused 98304
}

@test "echo-epoll-oneshot: 30 clients that connect while the server is paused are all served" {
    suite_accepts_burst_while_paused 30
}

@test "echo-epoll-oneshot: while one client floods, a ping-pong client's slowest echo stays under 200 ms" {
    suite_fair_under_flood 200
}

@test "echo-epoll-oneshot: every socket is added with EPOLLONESHOT and re-armed with EPOLL_CTL_MOD, about once per message" {
    local trace="$BATS_TEST_TMPDIR/ctl.log" mods
    require_strace
    ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" server_start strace -f -qq -e trace=epoll_ctl -o "$trace" "${SERVER_CMD[@]}" -p 0
    run timeout 60 "$(tool_bin echo-load)" -p "$PORT" -c 5 -n 100 -l 128
    assert_success
    traced_stop
    grep -q 'EPOLL_CTL_ADD.*EPOLLIN|EPOLLONESHOT' "$trace" ||
        fail "no EPOLL_CTL_ADD with EPOLLIN|EPOLLONESHOT: $(head -n 10 "$trace")"
    mods=$(grep -c 'EPOLL_CTL_MOD.*EPOLLONESHOT' "$trace" || true)
    echo "# 500 messages: $mods re-arms (EPOLL_CTL_MOD)" >&3
    [ "$mods" -ge 500 ] || fail "expected a re-arm per message (500), got $mods"
}

@test "echo-epoll-oneshot -w 8: SIGTERM reaches every worker through the level-triggered signalfd, exit 0 within 5 s" {
    local a
    SERVER_CMD=("$(chapter_bin echo-epoll-oneshot)" -w 8)
    server_start "${SERVER_CMD[@]}" -p 0
    conn_open a
    expect_echo "$a" ping
    sleep 0.5 # every worker asleep in epoll_wait()
    stop_within 5 TERM
    exec {a}>&-
    [ "$(grep -c '^worker ' "$SERVER_OUT")" -eq 8 ] || fail "expected 8 worker lines: $(cat "$SERVER_OUT")"
}

@test "echo-epoll-oneshot: valgrind finds no leak and no open fd after SIGTERM with clients connected" {
    suite_valgrind_clean
}
