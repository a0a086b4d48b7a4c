#!/usr/bin/env bats
# Exercise 08-io_uring-echo/ring-recycle: a buffer of the provided ring is
# the server's from the recv CQE that names it until its bytes are echoed;
# then it must go back to the ring, once. echo-uring runs with a small ring
# (-B 8, -B 16), so a buffer that never goes back shows within a few
# messages, one that goes back too early shows as bytes overwritten before
# they were echoed, and one given back twice shows in the server's own count
# at exit (-v: "buffers N, back in ring N"). Runs against $IMPL (solutions
# by default; `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite
load suite_extra

setup() { uring_server "$(impl_bin ring-recycle echo-uring)"; }

@test "ring-recycle: 8 buffers in the ring serve 500 messages: each goes back to the ring after its send" {
    server_start "${SERVER_CMD[@]}" -B 8 -v -p 0
    run timeout 10 "$(tool_bin echo-load)" -p "$PORT" -c 1 -n 500 -l 128 -t 3
    [ "$status" -eq 0 ] ||
        server_gone "echo-load (500 messages over 8 buffers; a stall after about 8 means the buffers never come back): $output"
    assert_output --partial "errors 0"
    suite_stop_clean
    ring_all_back "500 messages over 8 buffers"
}

@test "ring-recycle: a buffer waiting to be echoed stays out of the ring: a slow reader gets its own bytes while 4 clients share the ring" {
    local slow="$BATS_TEST_TMPDIR/slow" pid
    # SO_SNDBUF 4 KiB: the slow reader's echo waits in the server's queue,
    # in buffers of the ring, while the other clients' bytes keep coming
    # into the ring's other buffers. A buffer given back before its send
    # is filled again with another client's bytes.
    server_start "${SERVER_CMD[@]}" -B 16 -s 1024 -S 4096 -v -p 0
    payload "$slow" 300000
    CLIENT_TIMEOUT=10 run_client -p "$PORT" --chunk 1M --read-delay 2 <"$slow" >"$slow.out" &
    pid=$!
    clients_at_once 4 100000 -t 8 ||
        server_gone "some of 4 clients sharing 16 buffers with a slow reader did not get their own bytes back"
    wait "$pid" || server_gone "the slow reader's echo-client failed (status $?)"
    cmp -s "$slow" "$slow.out" ||
        fail "the slow reader got other bytes than it sent: $(cmp "$slow" "$slow.out" 2>&1 | head -n 1) (were its buffers handed out again before they were echoed?)"
    suite_stop_clean
    echo "# $(grep '^stats:' "$SERVER_ERR")" >&3
    ring_all_back "a slow reader and 4 clients over 16 buffers"
}

@test "ring-recycle: sends cut short or failing with -EINTR/-EAGAIN (uring-short): each buffer goes back once, after its last byte" {
    # uring-short.so shortens 30% of the sends and makes 10% fail with
    # -EINTR and 10% of the rest with -EAGAIN: a buffer must stay out of the
    # ring until the send of its last byte has completed
    # shellcheck disable=SC2046 # one word per VAR=VALUE
    server_start env $(uring_shim_env URING_SHORT_SEND=30 URING_SHORT_EINTR=10 URING_SHORT_EAGAIN=10) \
        "${SERVER_CMD[@]}" -B 8 -v -p 0
    run timeout 10 "$(tool_bin echo-load)" -p "$PORT" -c 4 -n 300 -l 3000 -t 4
    [ "$status" -eq 0 ] || server_gone "echo-load under short and failing sends (status $status): $output"
    assert_output --partial "errors 0"
    suite_stop_clean
    echo "# injected: $(tail -n 1 "$BATS_TEST_TMPDIR/uring-short.log")" >&3
    uring_shim_injected short_sends eintr eagain
    ring_all_back "1,200 messages over 8 buffers, sends cut short or failing"
}

@test "ring-recycle: 1 MB through 8 buffers of 4 KiB, then 4 clients in turn: the ring never runs out for good" {
    local i out
    server_start "${SERVER_CMD[@]}" -B 8 -v -p 0
    payload "$BATS_TEST_TMPDIR/m" 1000000
    CLIENT_TIMEOUT=5 suite_echo_file "$BATS_TEST_TMPDIR/m"
    for ((i = 0; i < 4; i++)); do
        out=$(run_client -p "$PORT" -t 3 "client $i") || server_gone "client $i was not served (status $?)"
        [ "$out" = "client $i" ] || fail "client $i: expected 'client $i', got '$out'"
    done
    suite_stop_clean
    echo "# $(grep '^stats:' "$SERVER_ERR")" >&3
    ring_all_back "1 MB and 4 clients over 8 buffers"
}
