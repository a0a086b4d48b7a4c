#!/usr/bin/env bats
# Exercise 03-nonblocking/half-close (fix): the chapter's echo-poll with a
# planted bug in conn.c. Runs against $IMPL (solutions: the chapter's own
# code; `make ex` uses the learner's copy).

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(impl_bin half-close echo-poll)")
}

@test "half-close: a slow reader that half-closes after 8 MiB gets all 8 MiB back, then EOF" {
    local in="$BATS_TEST_TMPDIR/big"
    suite_start
    payload "$in" $((8 * 1024 * 1024))
    # echo-client writes up to 1 MiB per turn but reads 64 KiB after a 2 ms
    # nap: when its shutdown(SHUT_WR) reaches the server, megabytes of echo
    # are still queued in the server.
    CLIENT_TIMEOUT=60 run_client -p "$PORT" --chunk 1M --read-delay 2 <"$in" >"$in.out" ||
        server_gone "echo-client failed (status $?)"
    cmp -s "$in" "$in.out" ||
        fail "sent $(stat -c %s "$in") bytes, got $(stat -c %s "$in.out") back before EOF; $(cmp "$in" "$in.out" 2>&1 | head -n 1)"
    suite_stop_clean
}

@test "half-close: a client that half-closes at once gets EOF at once" {
    suite_start
    run_client -p "$PORT" -t 5 </dev/null >"$BATS_TEST_TMPDIR/empty.out" ||
        server_gone "a client that sent nothing and half-closed did not see EOF (status $?)"
    [ ! -s "$BATS_TEST_TMPDIR/empty.out" ] || fail "got bytes back for an empty request"
    suite_stop_clean
}

@test "half-close: without a half-close the connection stays open and keeps echoing" {
    local a
    suite_start
    conn_open a
    expect_echo "$a" one
    expect_echo "$a" two
    exec {a}>&-
    suite_stop_clean
}
