#!/usr/bin/env bats
# Exercise 01-blocking/lost-signal: the two ways stop-race closes the race
# between a stop flag and a blocking call. Runs against $IMPL (solutions:
# the chapter's own code; `make ex` uses the learner's copy of stop-race.c).

bats_require_minimum_version 1.5.0
load ../helpers/common

setup() {
    RACE="$(impl_bin lost-signal stop-race)"
}

@test "lost-signal: flag mode, the control, still loses the signal: read() sleeps until the 1 s watchdog, exit 1" {
    run timeout 10 "$RACE" flag
    [ "$status" -eq 1 ] || fail "expected exit status 1 (the signal lost), got $status: $output"
    assert_line --index 1 "SIGTERM sent: its handler ran and set the flag to 1"
    assert_line --index 3 --partial "the signal was lost"
}

@test "lost-signal: shutdown mode, read() returns 0 at once and accept() fails with EINVAL, exit 0" {
    run timeout 10 "$RACE" shutdown
    [ "$status" -eq 0 ] || fail "expected exit status 0, got $status: $output"
    assert_line --index 2 --regexp '^read\(\) on the connection returned 0 after 0\.[0-4][0-9] s$'
    assert_line --index 3 "accept() on the listener returned -1 (Invalid argument)"
    assert_line --index 4 --partial "stopped at once"
}

@test "lost-signal: ppoll mode, SIGTERM waits pending and interrupts ppoll() at once, exit 0" {
    run timeout 10 "$RACE" ppoll
    [ "$status" -eq 0 ] || fail "expected exit status 0, got $status: $output"
    assert_line --index 1 "SIGTERM sent: blocked, so it waits, pending; the flag is still 0"
    assert_line --index 2 --regexp '^ppoll\(\) on the connection, with SIGTERM unblocked, returned -1 \(Interrupted system call\) after 0\.[0-4][0-9] s$'
    assert_line --index 3 --partial "stopped at once"
}
