#!/usr/bin/env bats
# Exercise 08-io_uring-echo/more-rearm: a multishot recv keeps producing
# CQEs while they carry IORING_CQE_F_MORE; the first one without it is its
# last (EOF, an error, -ENOBUFS, a cancel), and the connection needs a new
# recv. 16 clients share 8 buffers of 1 KiB, so the ring runs dry (ENOBUFS)
# and multishot recvs end under load. Runs against $IMPL (solutions by
# default; `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite
load suite_extra

setup() { uring_server "$(impl_bin more-rearm echo-uring)"; }

@test "more-rearm: when the ring runs dry (ENOBUFS) every connection's recv is re-armed: 16 clients over 8 buffers" {
    suite_ring_runs_dry 8 "stalled: a recv that ended without F_MORE was never re-armed?"
}

@test "more-rearm: a client that never reads is throttled (its recv cancelled), and re-armed once it reads" {
    local got
    server_start "${SERVER_CMD[@]}" -B 64 -v -p 0
    flood_never_reading $((4 << 20))
    sleep 0.5
    got=$(flood_read_back 10)
    flood_end
    [ "$got" -eq "$FLOOD_BYTES" ] ||
        server_gone "expected $FLOOD_BYTES bytes echoed once the client read, got $got: the cancelled recv was never re-armed?"
    suite_stop_clean
    [ "$(stat_of throttled)" -gt 0 ] || fail "the recv was never cancelled for backpressure: the test proved nothing: $(cat "$SERVER_ERR")"
}
