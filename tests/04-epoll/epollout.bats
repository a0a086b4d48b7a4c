#!/usr/bin/env bats
# Exercise 04-epoll/epollout: the EPOLLOUT path of a level-triggered epoll echo server.
# Runs against $IMPL (solutions by default; `make ex` uses exercises).
# The shared echo suite's cases run from suite-epollout.bats (listed in
# common/servers.txt), which `make ex` runs once these pass.

load ../helpers/common
load ../helpers/echo_suite
load event-loop

setup() {
    SERVER_CMD=("$(impl_bin epollout echo-epoll-lt)")
}

@test "epollout: a message comes back" {
    server_start "${SERVER_CMD[@]}" -p 0
    client_echo "hello, epoll"
    suite_stop_clean
}

@test "epollout: idle with a client connected, the server does not wake at all (not even to sleep again)" {
    # The reference sleeps in epoll_wait() and is never scheduled: 0 wake-ups
    # in 2 s, run after run. One allowed for luck. EPOLLOUT left armed wakes it
    # hundreds of thousands of times; a usleep() added to the loop, hundreds.
    idle_wakeups_at_most 1
}

@test "epollout: strace -c: 5,000 small echoes on 10 connections cost no epoll_ctl() beyond registering them" {
    # 128-byte echoes go out at once: the interest stays EPOLLIN | EPOLLRDHUP
    # and conn_update_interest() makes no call. The reference makes 12 in all
    # (one EPOLL_CTL_ADD per connection, the signalfd, the listener); the
    # bound leaves one more per connection. An EPOLL_CTL_MOD per event makes
    # 5,000 or more.
    epoll_ctl_under_load_at_most 22
}

@test "epollout: 16 MiB to a slow reader arrive intact within 10 s (the socket fills: short writes, EAGAIN, EPOLLOUT)" {
    suite_start
    # Up to 1 MiB written per turn of the client's loop, but only 64 KiB read
    # after a 2 ms nap: the echo piles up, the server's socket fills, and its
    # writes come back short or EAGAIN. The rest must wait for EPOLLOUT, in order.
    # The reference takes under a second; a stall is reported after 10 s.
    slow_reader_mib 16 $((10 * $(san_slowdown)))
    suite_stop_clean
}

@test "epollout: strace shows EPOLLOUT armed with EPOLL_CTL_MOD while output waits, and dropped once drained" {
    local trace="$BATS_TEST_TMPDIR/ctl.log" got mods
    require_strace
    # LeakSanitizer cannot work under ptrace: no leak check in a sanitizer build here
    ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" server_start strace -f -qq -e trace=epoll_ctl -o "$trace" "${SERVER_CMD[@]}" -p 0
    flood_never_reading $((16 << 20))
    sleep 1
    got=$(flood_read_back $((10 * $(san_slowdown))))
    wait "$FLOOD_PID" || true
    [ "$got" -eq "$FLOOD_BYTES" ] || server_gone "expected $FLOOD_BYTES bytes echoed, got $got"
    expect_echo "$FLOOD_FD" "after the burst"
    traced_stop
    flood_end
    mods=$(grep 'EPOLL_CTL_MOD' "$trace" || true)
    grep -q 'EPOLLOUT' <<<"$mods" ||
        fail "no EPOLL_CTL_MOD asked for EPOLLOUT although the socket filled up; epoll_ctl calls seen:
$(head -n 20 "$trace")"
    tail -n 1 <<<"$mods" | grep -vq 'EPOLLOUT' ||
        fail "the last EPOLL_CTL_MOD still asks for EPOLLOUT after everything was sent:
$(tail -n 5 <<<"$mods")"
}

@test "epollout: after a 16 MiB burst that filled the socket has drained, the idle server does not wake at all" {
    # EPOLLOUT is needed while the burst waits, and must go once it is out.
    # The reference: 0 wake-ups in 2 s; one allowed for luck.
    idle_wakeups_after_burst_at_most 1
}

@test "epollout: idle connections give their output buffer back (at most 2 KiB each)" {
    # Each of 500 connections echoes once, then idles. A drained buffer
    # kept allocated costs about 4.4 KB per connection in resident memory.
    untraced suite_idle_memory 500 2048
}
