#!/usr/bin/env bats
# Exercise 04-epoll/epollout: the EPOLLOUT path of a level-triggered epoll echo server.
# Runs against $IMPL (solutions by default; `make ex` uses exercises).
# The shared echo suite's cases run from suite-epollout.bats (listed in
# common/servers.txt), which `make ex` runs once these pass.

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(impl_bin epollout echo-epoll-lt)")
}

@test "epollout: a message comes back" {
    server_start "${SERVER_CMD[@]}" -p 0
    client_echo "hello, epoll"
    suite_stop_clean
}

@test "epollout: 16 MiB to a slow reader arrives intact (the socket fills: short writes, EAGAIN, EPOLLOUT)" {
    suite_start
    # Up to 1 MiB written per turn of the client's loop, but only 64 KiB read
    # after a 2 ms nap: the echo piles up, the server's socket fills, and its
    # writes come back short or EAGAIN. The rest must wait for EPOLLOUT, in order.
    slow_reader_mib 16 60
    suite_stop_clean
}

@test "epollout: strace shows EPOLLOUT armed with EPOLL_CTL_MOD while output waits, and dropped once drained" {
    local trace="$BATS_TEST_TMPDIR/ctl.log" got mods
    require_strace
    # LeakSanitizer cannot work under ptrace: no leak check in a sanitizer build here
    ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" server_start strace -f -qq -e trace=epoll_ctl -o "$trace" "${SERVER_CMD[@]}" -p 0
    flood_never_reading $((16 << 20))
    sleep 1
    got=$(flood_read_back 60)
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

@test "epollout: after a burst that filled the socket is drained, the idle server does not spin" {
    suite_idle_after_burst_no_spin
}

@test "epollout: an idle server with a connected client does not spin" {
    suite_idle_no_spin
}

@test "epollout: idle connections give their output buffer back (at most 2 KiB each)" {
    # Each of 500 connections echoes once, then idles. A drained buffer
    # kept allocated costs about 4.4 KB per connection in resident memory.
    untraced suite_idle_memory 500 2048
}
