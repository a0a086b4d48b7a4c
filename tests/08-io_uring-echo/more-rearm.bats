#!/usr/bin/env bats
# Exercise 08-io_uring-echo/more-rearm: a multishot recv keeps producing
# CQEs while they carry IORING_CQE_F_MORE; the first one without it is its
# last (EOF, an error, -ENOBUFS, a cancel), and the connection needs a new
# recv, then and only then. 16 clients share 8 buffers of 1 KiB, so the ring
# runs dry (ENOBUFS) and multishot recvs end under load; a client that never
# reads has its recv cancelled. The server's -v statistics say how many
# recvs it armed, and why one could end: each arming after the first must
# follow an end. Runs against $IMPL (solutions by default; `make ex` uses
# exercises).

load ../helpers/common
load ../helpers/echo_suite
load suite_extra

setup() { uring_server "$(impl_bin more-rearm echo-uring)"; }

# armed_only_after_an_end: from the stopped server's -v statistics: one recv
# per connection, then one more for each recv that ended while the
# connection went on, by ENOBUFS or by a cancel for backpressure. More means
# a recv was armed while the last one still ran.
armed_only_after_an_end() {
    local armed accepted enobufs throttled
    armed=$(stat_of "recv armed") accepted=$(stat_of accepted)
    enobufs=$(stat_of ENOBUFS) throttled=$(stat_of throttled)
    [ "$armed" -le $((accepted + enobufs + throttled)) ] ||
        fail "$armed recvs armed for $accepted connections, $enobufs ENOBUFS ends and $throttled cancels: a recv armed again while the last one still ran"
}

@test "more-rearm: a recv that ends at once with -ENOBUFS (uring-short) is re-armed, and only then: 16 connections x 100 messages" {
    # uring-short.so turns half of the multishot recvs into a NOP that
    # completes with -ENOBUFS and no F_MORE, as a recv ends when bytes come
    # and the ring is empty: every connection's first recv has an even
    # chance, so some always do (one run of the reference: 28 of 44)
    # shellcheck disable=SC2046 # one word per VAR=VALUE
    server_start env $(uring_shim_env URING_SHORT_ENOBUFS=50) "${SERVER_CMD[@]}" -B 64 -v -p 0
    run timeout 10 "$(tool_bin echo-load)" -p "$PORT" -c 16 -n 100 -l 200 -t 4
    [ "$status" -eq 0 ] ||
        server_gone "echo-load, 16 connections whose recvs may end with ENOBUFS (status $status): a recv that ended without F_MORE was never re-armed? $output"
    assert_output --partial "errors 0"
    suite_stop_clean
    echo "# injected: $(tail -n 1 "$BATS_TEST_TMPDIR/uring-short.log"); $(grep '^stats:' "$SERVER_ERR")" >&3
    uring_shim_injected enobufs
    armed_only_after_an_end
}

@test "more-rearm: when the ring runs dry (ENOBUFS) every connection's recv is re-armed, and only then: 16 clients over 8 buffers" {
    suite_ring_runs_dry 8 "stalled: a recv that ended without F_MORE was never re-armed?"
    # (the reference arms exactly accepted + ENOBUFS here: 2,845 to 2,991 in three runs)
    armed_only_after_an_end
}

@test "more-rearm: a client that never reads is throttled (its recv cancelled), and re-armed once it reads" {
    local got
    server_start "${SERVER_CMD[@]}" -B 64 -v -p 0
    flood_never_reading $((4 << 20))
    sleep 0.5
    got=$(flood_read_back 6)
    flood_end
    [ "$got" -eq "$FLOOD_BYTES" ] ||
        server_gone "expected $FLOOD_BYTES bytes echoed once the client read, got $got: the cancelled recv was never re-armed?"
    suite_stop_clean
    [ "$(stat_of throttled)" -gt 0 ] || fail "the recv was never cancelled for backpressure: the test proved nothing: $(cat "$SERVER_ERR")"
}

@test "more-rearm: while one client holds the whole ring, another's recv that ended with ENOBUFS is re-armed once a buffer comes back, not again and again" {
    local b i starved=0 enobufs sends
    server_start "${SERVER_CMD[@]}" -B 8 -s 1024 -v -p 0
    # A sends 32 MiB and never reads: its echo fills the sockets (about
    # 10 MB on loopback here), its queue takes the ring's 8 buffers and it is
    # throttled. The ring is empty once A's writer is stuck: the server has
    # stopped reading A. (With 4 MiB, the sockets' buffers could take all
    # of A's echo on some runs, and the ring was never emptied.)
    flood_never_reading
    writer_stuck "$FLOOD_PID" || fail "A sent all 32 MiB without reading anything: the server kept reading it"
    conn_open b
    # B's line comes back while the ring still has a buffer; the first one
    # that does not has met an empty ring (ENOBUFS)
    for ((i = 1; i <= 20 && !starved; i++)); do
        (printf 'line %d\n' "$i" >&"$b") 2>/dev/null
        read -r -t 0.5 _ <&"$b" || starved=1
    done
    [ "$starved" -eq 1 ] || fail "B's 20 lines all came back: the client that never reads did not take the ring's 8 buffers"
    # 1 s with the ring empty: B's recv must wait for a buffer, not be armed
    # again at once (its bytes are there: each new recv ends with ENOBUFS)
    sleep 1
    flood_end # A's buffers come back as its connection closes
    expect_line "$b" "line $((i - 1))" "once the ring had buffers again"
    exec {b}>&-
    suite_stop_clean
    enobufs=$(stat_of ENOBUFS) sends=$(stat_of "send CQEs")
    echo "# $(grep '^stats:' "$SERVER_ERR")" >&3
    [ "${enobufs:-0}" -ge 1 ] || fail "no ENOBUFS: B never met the empty ring, the test proved nothing: $(grep '^stats:' "$SERVER_ERR")"
    # A's flood ends its own recv about once per buffer that comes back: the
    # reference counts 3,762 to 3,884 ENOBUFS for 3,860 to 3,896 sends. A
    # recv armed again at once, ring empty, ends again at once: 660,629.
    [ "$enobufs" -le $((2 * sends + 50)) ] ||
        fail "expected at most $((2 * sends + 50)) recvs ended by ENOBUFS (2 per send, and 50), got $enobufs for $sends sends: a recv that ends with ENOBUFS is armed again before a buffer came back"
}
