#!/usr/bin/env bats
# Exercise 03-nonblocking/poll-echo: the write path of a poll() echo server.
# Runs against $IMPL (solutions by default; `make ex` uses exercises).
# The shared echo suite's cases run from suite-poll-echo.bats (listed in
# common/servers.txt), which `make ex` runs once these pass.

load ../helpers/common
load ../helpers/echo_suite
load exercises

setup() {
    SERVER_CMD=("$(impl_bin poll-echo echo-poll)")
    # Bounds on time below are about 3 times what the reference takes here
    # with the machine loaded, times this for a sanitizer build or
    # valgrind: a wrong answer that stalls then fails in seconds, not minutes.
    SLOW=$(san_slowdown)
    # the half-closing clients: about 3 s each here, up to 8 s with the
    # machine loaded far beyond CI's four test files on two cores
    HALF_CLOSE_SECS=$((20 * SLOW))
}

@test "poll-echo: a message comes back" {
    server_start "${SERVER_CMD[@]}" -p 0
    client_echo "hello, poll"
    suite_stop_clean
}

@test "poll-echo: 1 MiB and 10 busy clients come through short writes, EINTR and EAGAIN (faults shim)" {
    faults_echo_and_load short_writes eintr eagain
}

@test "poll-echo: an idle server with a connected client sleeps in poll() (strace: no busy loop)" {
    # counted in system calls, not CPU time: on a loaded machine a spinning
    # server may get too little CPU to look busy
    untraced suite_syscalls_idle poll
}

@test "poll-echo: after a client's EOF, with its echo still pending, the server sleeps until the socket has room (strace)" {
    local trace="$BATS_TEST_TMPDIR/strace" ready="$BATS_TEST_TMPDIR/ready" wmem n cpid before after
    command -v python3 >/dev/null || skip "python3 is not installed"
    command -v ss >/dev/null || skip "ss (iproute2) is not installed"
    require_strace
    wmem=$(awk '{ print $3 }' /proc/sys/net/ipv4/tcp_wmem)
    n=$((wmem + 512 * 1024))
    ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" server_start strace -f -qq -o "$trace.log" "${SERVER_CMD[@]}" -p 0
    half_closed_pauser "$PORT" "$n" "$ready" >"$BATS_TEST_TMPDIR/client.out" 2>&1 &
    cpid=$!
    _course_pids+=("$cpid")
    wait_for_file "$ready" "$cpid" || server_gone "the client never saw the server holding echo after reading its EOF: $(cat "$BATS_TEST_TMPDIR/client.out")"
    # The client reads nothing for 1 s: the server has read its EOF, its
    # socket is full, and echo is still pending. Only POLLOUT may wake it,
    # and that will not come until the client reads. (The reference makes 0
    # system calls in 0.6 s; a server that asks for POLLIN after the EOF
    # makes thousands.)
    sleep 0.2
    before=$(wc -l <"$trace.log")
    sleep 0.6
    after=$(wc -l <"$trace.log")
    echo "# 0.6 s with echo pending after the client's EOF: $((after - before)) system calls" >&3
    wait "$cpid" || true
    [ "$(cat "$BATS_TEST_TMPDIR/client.out")" = "sent $n got $n intact True paused True" ] ||
        server_gone "the half-closed client did not get its echo: $(cat "$BATS_TEST_TMPDIR/client.out")"
    traced_stop
    [ $((after - before)) -lt 50 ] ||
        fail "$((after - before)) system calls in 0.6 s while the echo waited for room after the client's EOF: poll() returns at once (POLLIN asked for after EOF?)"
}

@test "poll-echo: 16 MiB to a slow reader arrives intact (the socket fills: short writes, EAGAIN)" {
    suite_start
    # Up to 1 MiB sent per turn of the client's loop, but only 64 KiB read,
    # after a 2 ms nap: the echo piles up, the server's socket fills, and its
    # writes come back short or with EAGAIN (about 10 and 20 times per run
    # here, counted with strace). The rest must wait, in order.
    slow_reader_mib 16 $((8 * SLOW)) # the reference: about a second
    suite_stop_clean
}

@test "poll-echo: idle connections give their output buffer back (at most 2 KiB each)" {
    # Each of 500 connections echoes once, then idles. A drained buffer
    # kept allocated costs about 4.4 KB per connection in resident memory.
    untraced suite_idle_memory 500 2048
}

@test "poll-echo: no leak, no error and no fd left open at exit (valgrind)" {
    # two clients connected and one echo of 300 KB, then SIGTERM: every
    # connection's memory and fd must be released on the way out (the
    # reference: about 2 s in all)
    suite_valgrind_clean $((6 * SLOW))
}
