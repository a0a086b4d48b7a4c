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
