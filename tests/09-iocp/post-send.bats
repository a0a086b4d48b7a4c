#!/usr/bin/env bats
# Exercise 09-iocp/post-send: conn_post_send() posts an overlapped WSASend
# of c->buf[c->sent .. c->len), taking a reference for the operation. Runs
# against $IMPL (solutions by default; `make ex` uses exercises), under Wine
# (see wine.bash; servers are stopped with SIGINT). The quickest tests that
# tell a wrong answer come first.

load ../helpers/common
load ../helpers/echo_suite
load ../helpers/wine
load exercise

setup() { iocp_exercise_setup post-send 10; }

@test "post-send: messages on one connection come back in turn, once each, and every connection is freed at exit" {
    local a
    suite_start
    conn_open a
    expect_echo "$a" "first"
    expect_echo "$a" "second"
    expect_echo "$a" "third"
    expect_no_echo "$a" "after three echoes"
    exec {a}>&-
    iocp_stops 3
    require_freed 1
}

@test "post-send: after a short send, the rest goes out from where it stopped: 4 MiB intact" {
    local in="$BATS_TEST_TMPDIR/large" n
    # the server cuts half of its sends to half their length itself
    # (FAULTS_SHORT_SEND, see chapters/09-iocp/conn.c)
    suite_start env FAULTS_SHORT_SEND=50
    payload "$in" $((4 * 1024 * 1024))
    run_client -p "$PORT" -t 10 <"$in" >"$in.out" || server_gone "echo-client failed (status $?)"
    cmp -s "$in" "$in.out" ||
        fail "echoed bytes differ: sent $(stat -c %s "$in"), got $(stat -c %s "$in.out"); $(cmp "$in" "$in.out" 2>&1 | head -n 1)"
    iocp_stops 3
    n=$(sed -n 's/.*short sends resubmitted: \([0-9]*\)$/\1/p' "$SERVER_ERR")
    [ "${n:-0}" -gt 0 ] || fail "no send was cut short: the test proved nothing; stderr: $(cat "$SERVER_ERR")"
}

# A client that reads slowly fills the server's socket: WSASend() cannot
# finish at once, and says so with WSA_IO_PENDING. That is success: the
# completion comes later, through the port. The reference takes 1 to 2 s.
@test "post-send: sends that cannot finish at once (WSA_IO_PENDING) complete later: 8 MiB to a slow reader intact" {
    suite_start
    slow_reader_mib 8 10
    iocp_stops 3
    require_freed 1
}
