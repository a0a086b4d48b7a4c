#!/usr/bin/env bats
# Chapter 05: echo-epoll-reuseport, one edge-triggered loop per thread, each
# with its own SO_REUSEPORT listener. Run it under ThreadSanitizer too:
# make test SAN=thread CH=05.

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(chapter_bin echo-epoll-reuseport)" -w 4)
}

# thread_accepts: "N N N N", the connections each thread accepted (exit report).
thread_accepts() {
    sed -n 's/^thread [0-9]*: accepted \([0-9]*\) connections$/\1/p' "$SERVER_OUT" | tr '\n' ' '
}

# The shared echo suite's cases (binary data, 16 MiB, 200 clients, resets,
# half-close, never-reading client, fd limit, fd growth, idle connections,
# SIGTERM, faults) run from suite-echo-epoll-reuseport.bats, listed in
# common/servers.txt by make suite. What follows is echo-epoll-reuseport's own.

@test "echo-epoll-reuseport: client B is served while client A is connected and idle" {
    suite_serves_while_idle
}
@test "echo-epoll-reuseport: an idle server with a connected client does not spin" {
    suite_idle_no_spin
}
@test "echo-epoll-reuseport: after a burst that filled the socket is drained, the idle server does not spin" {
    suite_idle_after_burst_no_spin
}
@test "echo-epoll-reuseport -w 2: out of fds (EMFILE), every client left in a backlog is served once others leave, in any order" {
    SERVER_CMD=("$(chapter_bin echo-epoll-reuseport)" -w 2)
    suite_emfile_recovers_any_order
}
@test "echo-epoll-reuseport: strace shows epoll_wait() in use and no system calls while idle" {
    suite_syscalls_idle epoll_wait
}
@test "echo-epoll-reuseport: strace -f -c: epoll_wait, no poll/select, at most 4 reads+writes per message" {
    suite_syscalls_per_message_at_most epoll_wait 4
}

# ---- one listener per thread ----------------------------------------------------------

@test "echo-epoll-reuseport -w 4: four listening sockets share the port" {
    command -v ss >/dev/null || skip "ss is not installed (iproute2)"
    local n
    suite_start
    n=$(ss -Hltn "( sport = :$PORT )" | wc -l)
    [ "$n" -eq 4 ] || fail "expected 4 listening sockets on port $PORT, got $n: $(ss -ltn "( sport = :$PORT )")"
    suite_stop_clean
}

@test "echo-epoll-reuseport -w 4: with 100 clients the kernel spreads connections over more than one thread" {
    local busy=0 total=0 n
    suite_start
    run timeout 120 "$(tool_bin echo-load)" -p "$PORT" -c 100 -n 100 -l 128
    assert_success
    assert_output --partial "errors 0"
    suite_stop_clean
    for n in $(thread_accepts); do
        total=$((total + n))
        ((n > 0)) && busy=$((busy + 1))
    done
    echo "# connections per thread: $(thread_accepts)" >&3
    [ "$total" -ge 100 ] || fail "expected at least 100 connections in all, got $total: $(thread_accepts)"
    [ "$busy" -ge 2 ] || fail "expected at least 2 threads to accept connections: $(thread_accepts)"
}

@test "echo-epoll-reuseport: 96 KiB sent in one go to a paused server, with no further traffic, come back whole" {
    suite_drains_message_sent_while_paused 98304
}

@test "echo-epoll-reuseport: 30 clients that connect while the server is paused are all served" {
    suite_accepts_burst_while_paused 30
}

@test "echo-epoll-reuseport: while one client floods, a ping-pong client's slowest echo stays under 200 ms" {
    suite_fair_under_flood 200
}

@test "echo-epoll-reuseport: valgrind finds no leak and no open fd after SIGTERM with clients connected" {
    suite_valgrind_clean
}
