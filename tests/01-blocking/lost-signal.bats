#!/usr/bin/env bats
# Exercise 01-blocking/lost-signal: the two ways stop-race closes the race
# between a stop flag and a blocking call. Runs against $IMPL (solutions:
# the chapter's own code; `make ex` uses the learner's copy of stop-race.c).

bats_require_minimum_version 1.5.0
load ../helpers/common

setup() {
    RACE="$(impl_bin lost-signal stop-race)"
}

@test "lost-signal: shutdown mode, read() returns 0 at once and accept() fails with EINVAL, exit 0" {
    # the reference takes a few milliseconds; a call left asleep is ended by
    # the watchdog after 1 s (read) or by the timeout here (accept)
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

# with_mask BLOCK PENDING CMD...: run CMD with the signals BLOCK (names,
# comma-separated) blocked, and PENDING (a name, or "none") sent to itself
# first, so that it waits, pending, when CMD starts: execve() keeps both
# the mask and the pending signals.
with_mask() {
    timeout 20 python3 - "$@" <<'PY'
import os, signal, sys
block, pending, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
signal.pthread_sigmask(signal.SIG_BLOCK, [getattr(signal, s) for s in block.split(",")])
if pending != "none":
    os.kill(os.getpid(), getattr(signal, pending))
os.execv(cmd[0], cmd)
PY
}

@test "lost-signal: ppoll mode, started with SIGTERM already blocked, still unblocks it inside ppoll(), exit 0" {
    command -v python3 >/dev/null || skip "python3 is not installed"
    # A program may inherit a mask that blocks SIGTERM (a service manager,
    # a parent that forgot to restore its own). The mask ppoll() sleeps
    # with must not block it, whatever the mask was.
    run with_mask SIGTERM none "$RACE" ppoll
    [ "$status" -eq 0 ] || fail "expected exit status 0, got $status: $output"
    assert_line --index 2 --regexp '^ppoll\(\) on the connection, with SIGTERM unblocked, returned -1 \(Interrupted system call\) after 0\.[0-4][0-9] s$'
}

@test "lost-signal: ppoll mode leaves the other signals its caller blocked alone (a pending SIGUSR1 stays pending), exit 0" {
    command -v python3 >/dev/null || skip "python3 is not installed"
    # SIGUSR1 blocked and pending when the program starts: a ppoll() mask
    # that unblocks it delivers it, and its default action kills the
    # program (status 138). Only SIGTERM is ppoll()'s business.
    run with_mask SIGUSR1 SIGUSR1 "$RACE" ppoll
    [ "$status" -eq 0 ] || fail "expected exit status 0 (SIGUSR1 left blocked), got $status (138: killed by SIGUSR1): $output"
    assert_line --index 3 --partial "stopped at once"
}

@test "lost-signal: flag mode, the control, still loses the signal: read() sleeps until the 1 s watchdog, exit 1" {
    run timeout 10 "$RACE" flag
    [ "$status" -eq 1 ] || fail "expected exit status 1 (the signal lost), got $status: $output"
    assert_line --index 1 "SIGTERM sent: its handler ran and set the flag to 1"
    assert_line --index 3 --partial "the signal was lost"
}
