#!/usr/bin/env bats
# Exercise 08-io_uring-echo/bufring-give: bufring_give() stages a buffer
# past the ring's tail, bufring_publish() moves the tail past every staged
# buffer at once. bufring_init() gives all of them in one batch, and the
# server publishes once per loop, so several buffers are staged between two
# publishes: each must land in its own slot. The echo alone would not show a
# count that drifts, so every test also checks the server's own count at
# exit (-v: "buffers N, back in ring N"). Runs against $IMPL (solutions by
# default; `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite
load suite_extra

setup() { uring_server "$(impl_bin bufring-give echo-uring)"; }

@test "bufring-give: a message comes back through a buffer of the ring, which is back in the ring at exit" {
    server_start "${SERVER_CMD[@]}" -B 8 -v -p 0
    client_echo "hello, buffer ring" 3
    suite_stop_clean
    ring_all_back "one message"
}

@test "bufring-give: every buffer given is the kernel's to hand out: a client that never reads holds 8 of 16 at once" {
    local held
    # The client's echo piles up in the server's queue: up to 8 buffers of
    # the ring (CONN_MAX_BUFS), the rest copied out. The server can only
    # hold as many as the kernel could hand out: a publish that shows the
    # kernel fewer buffers than were given caps it below 8 (measured: the
    # reference holds 8).
    server_start "${SERVER_CMD[@]}" -B 16 -s 1024 -v -p 0
    flood_never_reading $((1 << 20))
    sleep 0.5
    flood_end
    client_echo "still serving" 3
    suite_stop_clean
    held=$(stat_of "most held")
    [ "${held:-0}" -eq 8 ] ||
        fail "a client that never read held at most ${held:-0} buffers at once, expected 8: did the kernel get every buffer given back? $(grep '^stats:' "$SERVER_ERR")"
    ring_all_back "a client that never reads, over 16 buffers"
}

@test "bufring-give: 4 x 500 messages over 8 buffers: buffers given back are handed out again, and all 8 are back at exit" {
    server_start "${SERVER_CMD[@]}" -B 8 -v -p 0
    # 2,000 messages through 8 buffers: each buffer goes round some 250 times
    run timeout 10 "$(tool_bin echo-load)" -p "$PORT" -c 4 -n 500 -l 300 -t 5
    [ "$status" -eq 0 ] ||
        server_gone "echo-load, 4 x 500 messages over 8 buffers (a stall: buffers given back are lost): $output"
    assert_output --partial "errors 0"
    suite_stop_clean
    ring_all_back "2,000 messages over 8 buffers"
}

@test "bufring-give: 8 clients at once each get their own bytes back, every buffer of the ring in use" {
    server_start "${SERVER_CMD[@]}" -B 8 -s 1024 -v -p 0
    clients_at_once 8 '50000 + i * 1000' -t 8 || server_gone "some of 8 clients over 8 buffers did not get their bytes back intact"
    suite_stop_clean
    echo "# $(grep '^stats:' "$SERVER_ERR")" >&3
    ring_all_back "8 clients over 8 buffers of 1 KiB"
}

@test "bufring-give: 16 clients over 8 buffers: the ring runs dry (ENOBUFS), fills again, and all 8 are back at exit" {
    suite_ring_runs_dry 8 "stalled: the ring never filled again?"
    ring_all_back "16 clients over 8 buffers, the ring run dry"
}
