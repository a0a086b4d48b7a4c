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

setup() {
    SERVER_CMD=("$(impl_bin more-rearm echo-uring)")
    require_uring
}

@test "more-rearm: when the ring runs dry (ENOBUFS) every connection's recv is re-armed: 16 clients over 8 buffers" {
    local n
    server_start "${SERVER_CMD[@]}" -B 8 -s 1024 -v -p 0
    clients_at_once 16 200000 -t 8 || server_gone "some of 16 clients sharing 8 buffers stalled: a recv that ended without F_MORE was never re-armed?"
    suite_stop_clean
    n=$(stat_of ENOBUFS)
    echo "# 16 clients x 200 KB over 8 buffers of 1 KiB: $(grep '^stats:' "$SERVER_ERR")" >&3
    [ "${n:-0}" -gt 0 ] || fail "the ring never ran dry (ENOBUFS 0): the test proved nothing"
}

@test "more-rearm: a client that never reads is throttled (its recv cancelled), and re-armed once it reads" {
    local h wpid got n=$((4 << 20))
    server_start "${SERVER_CMD[@]}" -B 64 -v -p 0
    conn_open h
    head -c "$n" /dev/zero >&"$h" 3>&- &
    wpid=$!
    _course_pids+=("$wpid")
    sleep 0.5
    got=$(timeout 10 head -c "$n" <&"$h" | wc -c)
    kill "$wpid" 2>/dev/null || true
    wait "$wpid" 2>/dev/null || true
    [ "$got" -eq "$n" ] ||
        server_gone "expected $n bytes echoed once the client read, got $got: the cancelled recv was never re-armed?"
    exec {h}>&-
    suite_stop_clean
    [ "$(stat_of throttled)" -gt 0 ] || fail "the recv was never cancelled for backpressure: the test proved nothing: $(cat "$SERVER_ERR")"
}
