#!/usr/bin/env bats
# Exercise 09-iocp/post-send: conn_post_send() posts an overlapped WSASend
# of c->buf[c->sent .. c->len), taking a reference for the operation. Runs
# against $IMPL (solutions by default; `make ex` uses exercises), under Wine
# (see wine.bash; servers are stopped with SIGINT).

load ../helpers/common
load ../helpers/echo_suite
load ../helpers/wine
load exercise

setup() { iocp_exercise_setup post-send 10; }

@test "post-send: messages on one connection come back in turn, and every connection is freed at exit" {
    local a
    suite_start
    conn_open a
    expect_echo "$a" "first"
    expect_echo "$a" "second"
    expect_echo "$a" "third"
    exec {a}>&-
    suite_stop_clean
    grep -q '^echo-iocp: [0-9]* connections served, 0 still allocated' "$SERVER_ERR" ||
        fail "expected '0 still allocated' after shutdown (does the send hold its reference?); stderr:
$(cat "$SERVER_ERR")"
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
    suite_stop_clean
    n=$(sed -n 's/.*short sends resubmitted: \([0-9]*\)$/\1/p' "$SERVER_ERR")
    [ "${n:-0}" -gt 0 ] || fail "no send was cut short: the test proved nothing; stderr: $(cat "$SERVER_ERR")"
}
