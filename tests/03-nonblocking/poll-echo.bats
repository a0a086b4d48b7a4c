#!/usr/bin/env bats
# Exercise 03-nonblocking/poll-echo: the write path of a poll() echo server.
# Runs against $IMPL (solutions by default; `make ex` uses exercises).
# The shared echo suite's cases run from suite-poll-echo.bats (listed in
# common/servers.txt), which `make ex` runs once these pass.

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(impl_bin poll-echo echo-poll)")
}

@test "poll-echo: a message comes back" {
    server_start "${SERVER_CMD[@]}" -p 0
    client_echo "hello, poll"
    suite_stop_clean
}

@test "poll-echo: 16 MiB to a slow reader arrives intact (the socket fills: short writes, EAGAIN)" {
    suite_start
    # Up to 1 MiB sent per turn of the client's loop, but only 64 KiB read,
    # after a 2 ms nap: the echo piles up, the server's socket fills, and its
    # writes come back short or with EAGAIN (about 10 and 20 times per run
    # here, counted with strace). The rest must wait, in order.
    slow_reader_mib 16 60
    suite_stop_clean
}

@test "poll-echo: an idle server with a connected client sleeps in poll() (strace: no busy loop)" {
    # counted in system calls, not CPU time: on a loaded machine a spinning
    # server may get too little CPU to look busy
    untraced suite_syscalls_idle poll
}

@test "poll-echo: idle connections give their output buffer back (at most 2 KiB each)" {
    # Each of 500 connections echoes once, then idles. A drained buffer
    # kept allocated costs about 4.4 KB per connection in resident memory.
    untraced suite_idle_memory 500 2048
}
