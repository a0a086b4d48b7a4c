#!/usr/bin/env bats
# Exercise 04-epoll/epollout-spin (fix): EPOLLOUT only while output waits.
# Runs against $IMPL (solutions by default: the chapter's own files; `make ex`
# uses exercises, where the bug is planted).

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(impl_bin epollout-spin echo-epoll-lt)")
}

@test "epollout-spin: a message comes back" {
    suite_start
    client_echo "hello, epoll"
    suite_stop_clean
}

@test "epollout-spin: an idle server with a connected client does not spin" {
    suite_idle_no_spin
}

@test "epollout-spin: after a burst that filled the socket is drained, the idle server does not spin" {
    suite_idle_after_burst_no_spin
}

@test "epollout-spin: 16 MiB to a slow reader come back intact" {
    local in="$BATS_TEST_TMPDIR/large"
    suite_start
    payload "$in" $((16 * 1024 * 1024))
    CLIENT_TIMEOUT=60 run_client -p "$PORT" --chunk 1M --read-delay 2 <"$in" >"$in.out" ||
        server_gone "echo-client failed (status $?)"
    cmp -s "$in" "$in.out" ||
        fail "sent $(stat -c %s "$in") bytes, got $(stat -c %s "$in.out") back: $(cmp "$in" "$in.out" 2>&1 | head -n 1)"
    suite_stop_clean
}
