#!/usr/bin/env bats
# Exercise 03-nonblocking/select-sets: server__fill_sets() of echo-select.
# Runs against $IMPL (solutions: the chapter's own code; `make ex` uses the
# learner's copy of echo-select.c).

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(impl_bin select-sets echo-select)")
}

@test "select-sets: a message comes back, and 20 clients at once are all served" {
    local i pids=() failed=0
    suite_start
    client_echo "hello, select"
    for ((i = 0; i < 20; i++)); do
        payload "$BATS_TEST_TMPDIR/c$i" $((1000 + i * 5000))
        run_client -p "$PORT" -t 20 <"$BATS_TEST_TMPDIR/c$i" >"$BATS_TEST_TMPDIR/c$i.out" &
        pids+=($!)
    done
    for ((i = 0; i < 20; i++)); do
        wait "${pids[$i]}" || { echo "client $i: echo-client status $?" >&2; failed=1; }
        cmp -s "$BATS_TEST_TMPDIR/c$i" "$BATS_TEST_TMPDIR/c$i.out" || { echo "client $i: echo differs" >&2; failed=1; }
    done
    [ "$failed" -eq 0 ] || server_gone "some of 20 clients connected at once did not get their bytes back"
    suite_stop_clean
}

@test "select-sets: 8 MiB to a slow reader arrive intact (output waits for the write set)" {
    local in="$BATS_TEST_TMPDIR/big"
    suite_start
    payload "$in" $((8 * 1024 * 1024))
    CLIENT_TIMEOUT=60 run_client -p "$PORT" --chunk 1M --read-delay 2 <"$in" >"$in.out" ||
        server_gone "echo-client failed (status $?)"
    cmp -s "$in" "$in.out" ||
        fail "sent $(stat -c %s "$in") bytes, got $(stat -c %s "$in.out") back; $(cmp "$in" "$in.out" 2>&1 | head -n 1)"
    suite_stop_clean
}

@test "select-sets: an idle server with a connected client sleeps in select() (strace: no busy loop)" {
    untraced suite_syscalls_idle '(select|pselect6)'
}
