#!/usr/bin/env bats
# Exercise 03-nonblocking/eagain-read (fix): the chapter's echo-poll with a
# planted bug in conn.c. Runs against $IMPL (solutions: the chapter's own
# code; `make ex` uses the learner's copy).

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(impl_bin eagain-read echo-poll)")
}

@test "eagain-read: a message comes back, and a half-closed client gets every byte then EOF" {
    suite_start
    client_echo "hello, poll"
    # echo-client half-closes once its input is sent, and reads to EOF
    payload "$BATS_TEST_TMPDIR/half" 200000
    suite_echo_file "$BATS_TEST_TMPDIR/half"
    suite_stop_clean
}

@test "eagain-read: 1 MB and 10 busy clients come through while reads fail with EAGAIN" {
    suite_start env $(faults_env FAULTS_EAGAIN=30 FAULTS_SHORT_READ=30)
    payload "$BATS_TEST_TMPDIR/f1" 1000000
    suite_echo_file "$BATS_TEST_TMPDIR/f1"
    run timeout 60 "$(tool_bin echo-load)" -p "$PORT" -c 10 -n 100 -l 3000
    [ "$status" -eq 0 ] && [[ "$output" == *"errors 0"* ]] ||
        server_gone "echo-load with reads failing with EAGAIN (status $status): $output
--- server stderr ---
$(cat "$SERVER_ERR")"
    suite_stop_clean
    local ea
    ea=$(faults_count eagain)
    [ "$ea" -gt 0 ] || fail "the faults shim injected no EAGAIN (log: $(cat "$BATS_TEST_TMPDIR/faults.log" 2>/dev/null))"
}

@test "eagain-read: an idle server with a connected client sleeps in poll() (strace: no busy loop)" {
    untraced suite_syscalls_idle poll
}
