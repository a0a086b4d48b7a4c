#!/usr/bin/env bats
# Exercise 11-one-api/short-send: on a readiness backend (epoll here), a
# send op completes once every byte is out: a send() that takes part of it
# leaves the op waiting for the socket to have room again. Runs against
# $IMPL (solutions by default; `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite
load exercise

setup() { aio_exercise_setup short-send 20; }

@test "short-send: an 8 MiB send completes once, whole, with 8 MiB: aio-test net on epoll" {
    aio_test_net "it hung, waiting for bytes never sent"
    assert_output --partial "a send of 8388608 bytes: res 8388608, 1 callback, 8388608 bytes received, 0 wrong"
}

@test "short-send: echo-aio on epoll echoes 16 MiB whole to a client that reads slowly" {
    local in="$BATS_TEST_TMPDIR/large"
    server_start "${SERVER_CMD[@]}" -p 0
    payload "$in" $((16 * 1024 * 1024))
    run_client -p "$PORT" -t 20 --chunk 1M --read-delay 1 <"$in" >"$in.out" ||
        server_gone "echo-client failed (status $?; 3: timed out waiting for bytes)"
    cmp -s "$in" "$in.out" ||
        fail "echoed bytes differ: sent $(stat -c %s "$in"), got $(stat -c %s "$in.out"); $(cmp "$in" "$in.out" 2>&1 | head -n 1)"
    suite_stop_clean
}

@test "short-send: while a 16 MiB echo waits for a slow reader, another client is served at once and the idle loop sleeps (a send waits for room, it does not spin)" {
    local in="$BATS_TEST_TMPDIR/large" slow out t0 ms busy
    server_start "${SERVER_CMD[@]}" -p 0
    payload "$in" $((16 * 1024 * 1024))
    # a reader that takes 64 KiB every 20 ms: the echo waits for room for
    # about 5 s, long enough to watch the loop meanwhile
    run_client -p "$PORT" -t 30 --chunk 1M --read-delay 20 <"$in" >"$in.out" &
    slow=$!
    sleep 0.5
    t0=$(date +%s%N)
    out=$(run_client -p "$PORT" -t 3 "served meanwhile") ||
        server_gone "a second client was not served while a send waited for a slow reader (echo-client status $?)"
    ms=$((($(date +%s%N) - t0) / 1000000))
    [ "$out" = "served meanwhile" ] || fail "expected 'served meanwhile', got '$out'"
    # the reference answers in a few ms; a loop stuck in one send, not at all
    [ "$ms" -lt $((1000 * $(san_slowdown))) ] ||
        fail "the second client waited $ms ms while a send waited for room: the loop is busy in one send"
    # Running or runnable: a loop that spins on EAGAIN never leaves the run
    # queue (about 100%); one that waits for room works a little each time
    # the reader frees some, and on a loaded machine waits long for a CPU
    # then (56% seen at load 8): the bound sits between the two.
    busy=$(busy_percent_over 1)
    echo "# while the slow reader drains: the server ran $busy% of the time" >&3
    [ "$busy" -lt 90 ] || fail "the server ran $busy% of one second while waiting for a slow reader: it spins instead of waiting for room"
    wait "$slow" || server_gone "the slow reader's echo-client failed (status $?)"
    cmp -s "$in" "$in.out" || fail "the slow reader's 16 MiB came back different"
    suite_stop_clean
}
