#!/usr/bin/env bats
# Exercise 08-io_uring-echo/uring-dispatch: what echo-uring-basic does when a
# recv or a send completes. Runs against $IMPL (solutions by default; `make
# ex` uses exercises).
# The faults shim cannot reach an io_uring server (the kernel does its I/O):
# chapter 07's uring-short.so changes the SQEs instead, so that recvs and
# sends complete with -EINTR or -EAGAIN and sends come back short, and the
# tests check that it did.
# The shared echo suite's cases run from suite-uring-dispatch.bats (listed in
# common/servers.txt), which `make ex` runs once these pass.

load ../helpers/common
load ../helpers/echo_suite
load suite_extra

setup() { uring_server "$(impl_bin uring-dispatch echo-uring-basic)"; }

@test "uring-dispatch: a message comes back" {
    server_start "${SERVER_CMD[@]}" -p 0
    client_echo "hello, io_uring" 3
    suite_stop_clean
}

@test "uring-dispatch: recvs and sends that complete with -EINTR or -EAGAIN are asked again, short sends finished: 4 x 300 messages intact" {
    local shorts
    # 10% of the recvs and sends come back -EINTR, 10% of the rest -EAGAIN,
    # and 30% of the sends left are cut short (uring-short.so)
    # shellcheck disable=SC2046 # one word per VAR=VALUE
    server_start env $(uring_shim_env URING_SHORT_EINTR=10 URING_SHORT_EAGAIN=10 URING_SHORT_SEND=30) \
        "${SERVER_CMD[@]}" -v -p 0
    run timeout 10 "$(tool_bin echo-load)" -p "$PORT" -c 4 -n 300 -l 1000 -t 5
    [ "$status" -eq 0 ] ||
        server_gone "echo-load under injected -EINTR, -EAGAIN and short sends (status $status): $output
--- server stderr ---
$(cat "$SERVER_ERR")"
    assert_output --partial "errors 0"
    suite_stop_clean
    echo "# injected: $(tail -n 1 "$BATS_TEST_TMPDIR/uring-short.log"); $(grep '^stats:' "$SERVER_ERR")" >&3
    uring_shim_injected eintr eagain short_sends
    shorts=$(stat_of "short sends")
    [ "${shorts:-0}" -ge "$(uring_shim_count short_sends)" ] ||
        fail "the server counted ${shorts:-none} short sends, the shim made $(uring_shim_count short_sends)"
}

@test "uring-dispatch: several messages on one connection, each echoed before the next recv" {
    local a
    suite_start
    conn_open a
    expect_echo "$a" "first"
    expect_echo "$a" "second"
    expect_echo "$a" "third"
    exec {a}>&-
    suite_stop_clean
}

@test "uring-dispatch: a client that half-closes gets its echo, then EOF, and no recv follows the one that saw EOF" {
    local i out recvs
    server_start "${SERVER_CMD[@]}" -v -p 0
    for ((i = 0; i < 20; i++)); do
        # echo-client half-closes once it has sent, and exits 0 only at EOF
        out=$(run_client -p "$PORT" -t 3 "client $i") ||
            server_gone "client $i: no EOF within 3 s of its half-close (status $?): the server did not close?"
        [ "$out" = "client $i" ] || fail "client $i: expected 'client $i', got '$out'"
    done
    suite_stop_clean
    recvs=$(stat_of "recv CQEs")
    # each client: one recv brings its line, the next one sees EOF (measured: 40)
    [ "$recvs" -le 44 ] ||
        fail "20 clients of one line each took $recvs recv CQEs, expected 40 (one for the line, one for EOF): recv asked again after EOF?"
}

@test "uring-dispatch: 40 clients that reset mid-echo leave no descriptor behind" {
    local before after i
    server_start "${SERVER_CMD[@]}" -p 0
    client_echo "warm up" 3
    before=$(fd_count "$SERVER_PID")
    payload "$BATS_TEST_TMPDIR/big" 300000
    for ((i = 0; i < 40; i++)); do
        run_client -p "$PORT" -t 5 --reset <"$BATS_TEST_TMPDIR/big" >/dev/null ||
            server_gone "echo-client --reset failed for client $i (status $?)"
    done
    for ((i = 0; i < 50; i++)); do
        after=$(fd_count "$SERVER_PID")
        [ "$after" -le "$before" ] && break
        sleep 0.1
    done
    [ "$after" -le "$before" ] ||
        fail "the server held $before fds before 40 clients reset, $after 5 s after: a failed recv or send must close its connection"
    client_echo "still serving" 3
    suite_stop_clean
}

@test "uring-dispatch: one io_uring_enter per completion: 2,000 messages take at most 2.1 calls each" {
    local trace="$BATS_TEST_TMPDIR/strace-c" enters
    traced_echo_load "$trace" 10 200
    enters=$(calls_of "$trace" io_uring_enter)
    echo "# 2,000 messages over 10 connections: $enters io_uring_enter calls" >&3
    # a recv CQE and a send CQE per message, one call each, plus start-up (measured: 4,023)
    [ "$enters" -le 4200 ] ||
        fail "$enters io_uring_enter() calls for 2,000 messages, expected at most 4,200: the loop submits, so a handler needs no io_uring_submit() of its own"
}

@test "uring-dispatch: short sends (tiny SO_SNDBUF, slow reader) are completed, in order" {
    suite_short_sends -s 262144
}
