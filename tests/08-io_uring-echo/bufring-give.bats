#!/usr/bin/env bats
# Exercise 08-io_uring-echo/bufring-give: bufring_give() stages a buffer
# past the ring's tail, bufring_publish() moves the tail past every staged
# buffer at once. bufring_init() gives all of them in one batch, and the
# server publishes once per loop, so several buffers are staged between two
# publishes: each must land in its own slot. Runs against $IMPL (solutions
# by default; `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite
load suite_extra

setup() { uring_server "$(impl_bin bufring-give echo-uring)"; }

@test "bufring-give: a message comes back through a buffer of the ring" {
    server_start "${SERVER_CMD[@]}" -B 8 -p 0
    client_echo "hello, buffer ring" 5
    suite_stop_clean
}

@test "bufring-give: 8 clients at once each get their bytes back, every buffer of the ring in use" {
    server_start "${SERVER_CMD[@]}" -B 8 -s 1024 -v -p 0
    clients_at_once 8 '50000 + i * 1000' -t 8 || server_gone "some of 8 clients over 8 buffers did not get their bytes back intact"
    suite_stop_clean
    echo "# $(grep '^stats:' "$SERVER_ERR")" >&3
}

@test "bufring-give: 500 messages over 8 buffers: buffers given back are handed out again" {
    server_start "${SERVER_CMD[@]}" -B 8 -p 0
    run timeout 20 "$(tool_bin echo-load)" -p "$PORT" -c 4 -n 500 -l 300 -t 5
    [ "$status" -eq 0 ] || server_gone "echo-load: $output"
    assert_output --partial "errors 0"
    suite_stop_clean
}
