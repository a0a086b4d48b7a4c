#!/usr/bin/env bats
# Exercise 05-epoll-edge/lt-to-et: the drain loops of an edge-triggered epoll
# echo server. Runs against $IMPL (solutions by default; `make ex` uses exercises).
# The shared echo suite's cases run from suite-lt-to-et.bats (listed in
# common/servers.txt), which `make ex` runs once these pass.

load ../helpers/common
load ../helpers/echo_suite
load ../04-epoll/event-loop

setup() {
    SERVER_CMD=("$(impl_bin lt-to-et echo-epoll-et)")
    gate_setup
}

# The first three tests find the edge-triggered bugs (a stall, a burst left
# in the backlog, a TODO) within seconds. When one of them fails, most of
# the others would each wait out their clients' timeouts on the same bug, so
# they are skipped (event-loop.bash, "The gate").
teardown() {
    gate_teardown
}

@test "lt-to-et: a message comes back, and a second one on the same connection" {
    local a
    GATE=1
    suite_start
    client_echo "hello, edges"
    conn_open a
    expect_echo "$a" "first"
    expect_echo "$a" "second, on the same connection"
    exec {a}>&-
    suite_stop_clean
}

# Exactly one edge waits when the server resumes: 96 KiB is six reads of
# 16 KiB, more than one read and more than one turn's budget of four.
@test "lt-to-et: 96 KiB sent in one go to a paused server, with no further traffic, come back whole (drain, and remember what the budget left)" {
    GATE=1
    suite_drains_message_sent_while_paused 98304
}

@test "lt-to-et: 30 clients that connect while the server is paused are all served within 5 s (accept until EAGAIN)" {
    GATE=1
    burst_while_paused 30
}

@test "lt-to-et: idle with a client connected, the server does not wake at all (nothing left on the ready list)" {
    # The reference sleeps in epoll_wait(): 0 wake-ups in 2 s, run after run;
    # one allowed for luck. A connection put back on the ready list after
    # every turn keeps the loop polling with a timeout of 0, for ever.
    idle_wakeups_at_most 1
}

@test "lt-to-et: strace -c: 5,000 echoes on 10 connections cost no epoll_ctl() beyond registering them (registered once, never changed)" {
    # The reference makes 12 in all: one EPOLL_CTL_ADD per connection, the
    # signalfd and the listener. The bound leaves one more per connection. A
    # re-arm with EPOLL_CTL_MOD after every turn, as a level-triggered or
    # one-shot server does, makes 5,000 or more.
    epoll_ctl_under_load_at_most 22
}

@test "lt-to-et: 16 MiB to a slow reader arrive intact within 10 s (write until EAGAIN, then wait for the EPOLLOUT edge)" {
    # The reference takes about a second; a stall is reported after 10 s.
    suite_start
    slow_reader_mib 16 $((10 * $(san_slowdown)))
    suite_stop_clean
}

@test "lt-to-et: while one client floods, a ping-pong client's slowest echo stays under 200 ms" {
    suite_fair_under_flood 200
}

@test "lt-to-et: client B is served while client A is connected and idle" {
    suite_serves_while_idle
}
@test "lt-to-et: after a 16 MiB burst that filled the socket has drained, the idle server does not wake at all" {
    # EPOLLOUT is needed while the burst waits, and must go once it is out.
    # The reference: 0 wake-ups in 2 s; one allowed for luck.
    idle_wakeups_after_burst_at_most 1
}
@test "lt-to-et: out of fds (EMFILE), the clients left in the backlog are served once others leave" {
    suite_emfile_recovers
}

@test "lt-to-et: idle connections give their output buffer back (at most 2 KiB each)" {
    # Each of 500 connections echoes once, then idles. A drained buffer
    # kept allocated costs about 4.3 KB per connection in resident memory.
    untraced suite_idle_memory 500 2048
}
