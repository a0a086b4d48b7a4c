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
    suite_start
    client_echo "hello, select"
    clients_at_once 20 '1000 + i * 5000' -t 20 || server_gone "some of 20 clients connected at once did not get their bytes back"
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
