#!/usr/bin/env bats
# Exercise 03-nonblocking/eagain-read (fix): the chapter's echo-poll with a
# planted bug in conn.c. Runs against $IMPL (solutions: the chapter's own
# code; `make ex` uses the learner's copy).

load ../helpers/common
load ../helpers/echo_suite
load exercises

setup() {
    SERVER_CMD=("$(impl_bin eagain-read echo-poll)")
    # Bounds on time below are about 3 times what the reference takes here
    # with the machine loaded, times this for a sanitizer build or
    # valgrind: a wrong answer that stalls then fails in seconds, not minutes.
    SLOW=$(san_slowdown)
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
    # the reference: well under a second for both
    CLIENT_TIMEOUT=$((8 * SLOW)) suite_echo_file "$BATS_TEST_TMPDIR/f1"
    run timeout $((10 * SLOW)) "$(tool_bin echo-load)" -p "$PORT" -c 10 -n 100 -l 3000 -t $((8 * SLOW))
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

@test "eagain-read: a client that never reads does not stop the server serving the others (no blocking call)" {
    # the server's writes to that client fill its socket: a non-blocking
    # write says EAGAIN and the loop moves on; a blocking one sleeps, and
    # the whole server with it
    untraced suite_never_reading_client
}

@test "eagain-read: no leak, no error and no fd left open at exit (valgrind)" {
    # two clients connected and one echo of 300 KB, then SIGTERM: every
    # connection's memory and fd must be released on the way out (the
    # reference: about 2 s in all)
    suite_valgrind_clean $((6 * SLOW))
}
