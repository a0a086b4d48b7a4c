#!/usr/bin/env bats
# Chapter 03: non-blocking sockets, select() and poll().

load ../helpers/common
load ../helpers/echo_suite

# ---- nonblock-demo ---------------------------------------------------------

@test "nonblock-demo: read EAGAIN, full buffers, a short write and EINPROGRESS, checked step by step" {
    run timeout 60 "$(chapter_bin nonblock-demo)" -d "$BATS_TEST_TMPDIR"
    assert_success
    assert_output --regexp "read\(fd=[0-9]+, 1\) = -1 EAGAIN after [0-9]+ us"
    assert_output --regexp "write\(\) took [0-9]+ bytes in [0-9]+ calls .*then -1 EAGAIN"
    assert_output --partial "poll(POLLOUT, 200 ms) = 0: not writable"
    assert_output --regexp "the peer read [0-9]+ bytes, then poll\(\) reported POLLOUT"
    assert_output --regexp "write\(fd=[0-9]+, 67108864\) = [0-9]+: a short write"
    assert_output --partial "again = -1 EAGAIN"
    assert_output --partial "= -1 EINPROGRESS"
    assert_output --partial "getsockopt(SO_ERROR) = 0 (connected)"
    assert_output --partial "getsockopt(SO_ERROR) = ECONNREFUSED"
    assert_output --partial "every step behaved as described"
}

@test "nonblock-demo: poll() reports a regular file readable and writable at once" {
    run timeout 60 "$(chapter_bin nonblock-demo)" -d "$BATS_TEST_TMPDIR"
    assert_success
    assert_output --regexp "poll\(file, POLLIN\|POLLOUT, 5 s\) = 1, revents POLLIN POLLOUT"
    assert_output --partial "it never says EAGAIN"
}

@test "every program: bad arguments print usage on stderr and exit 2; -h exits 0" {
    usage_contract nonblock-demo echo-select echo-poll poll-cost
    run "$(chapter_bin echo-poll)" -p 70000
    assert_failure 2
}

# The shared echo suite's cases (binary data, 16 MiB, 200 clients, resets,
# half-close, never-reading client, fd limit, fd growth, idle connections,
# SIGTERM, faults) run from suite-echo-select.bats and suite-echo-poll.bats,
# listed in common/servers.txt by make suite. What follows is this
# chapter's own.

# ---- one thread, many clients ----------------------------------------------

@test "echo-select: client B is served while client A is connected and idle" {
    SERVER_CMD=("$(chapter_bin echo-select)")
    suite_serves_while_idle
}
@test "echo-poll: client B is served while client A is connected and idle" {
    SERVER_CMD=("$(chapter_bin echo-poll)")
    suite_serves_while_idle
}

@test "echo-select: an idle server with a connected client does not spin" {
    SERVER_CMD=("$(chapter_bin echo-select)")
    suite_idle_no_spin
}
@test "echo-poll: an idle server with a connected client does not spin" {
    SERVER_CMD=("$(chapter_bin echo-poll)")
    suite_idle_no_spin
}

@test "echo-select: running out of fds (EMFILE) is logged, and waiting clients are served later" {
    SERVER_CMD=("$(chapter_bin echo-select)")
    suite_emfile_recovers
}
@test "echo-poll: running out of fds (EMFILE) is logged, and waiting clients are served later" {
    SERVER_CMD=("$(chapter_bin echo-poll)")
    suite_emfile_recovers
}

# ---- which system calls, and none while idle ---------------------------------

@test "echo-poll: strace shows poll() in use and no system calls while idle" {
    SERVER_CMD=("$(chapter_bin echo-poll)")
    suite_syscalls_idle poll
}
@test "echo-select: strace shows select() in use and no system calls while idle" {
    SERVER_CMD=("$(chapter_bin echo-select)")
    suite_syscalls_idle '(select|pselect6)'
}

# ---- select() and FD_SETSIZE -----------------------------------------------

# Start echo-select with fds 8..1023 already taken, so that after its own few
# fds and a couple of clients, accept() returns 1024 = FD_SETSIZE.
@test "echo-select: a client whose fd would be >= FD_SETSIZE is refused cleanly, others go on" {
    local fds=() served=() refused=0 i fd line
    require_fds 2048
    server_start bash -c 'ulimit -n 2048 && for ((i = 8; i < 1024; i++)); do eval "exec $i</dev/null"; done && exec "$@"' _ "$(chapter_bin echo-select)" -p 0
    for ((i = 0; i < 8 && refused == 0; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
        fds+=("$fd")
        (printf 'client %d\n' "$i" >&"$fd") 2>/dev/null
        line=""
        read -r -t 5 line <&"$fd" || true
        if [ "$line" = "client $i" ]; then served+=("$fd"); else refused=1; fi
    done
    [ "$refused" -eq 1 ] || fail "no client was refused: expected an fd >= 1024 within 8 clients"
    [ ${#served[@]} -gt 0 ] || fail "no client was served before the refusal"
    grep -q 'FD_SETSIZE' "$SERVER_ERR" || fail "expected a log line naming FD_SETSIZE, got: $(cat "$SERVER_ERR")"
    server_exited && server_gone "the server died after refusing fd >= FD_SETSIZE"
    # the clients served before go on, and a freed low fd is used again
    for fd in "${served[@]}"; do expect_echo "$fd" "still here"; done
    fd=${served[0]}
    exec {fd}>&-
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
    expect_echo "$fd" "a new client on a freed fd"
    suite_stop_clean
}

# ---- poll-cost -------------------------------------------------------------

@test "poll-cost -q: a call with 1,000 idle connections costs more than with 10" {
    require_fds 1016 # poll-cost holds 1,000 connections (and 16 more fds) in each of two processes
    run timeout 120 "$(chapter_bin poll-cost)" -q
    assert_success
    sed "s/^/# /" <<<"$output" >&3
    local p10 p1000 s1000
    p10=$(awk '$1 == "10" { print $2 }' <<<"$output")
    p1000=$(awk '$1 == "1000" { print $2 }' <<<"$output")
    s1000=$(awk '$1 == "1000" { print $4 }' <<<"$output")
    [ -n "$p10" ] && [ -n "$p1000" ] || fail "no rows for 10 and 1000 idle connections in the table"
    [ -n "$s1000" ] || fail "no select() figure for 1000 idle connections"
    # 100 times the fds; a factor 3 is the generous lower bound
    [ "$p1000" -gt $((3 * p10)) ] ||
        fail "poll() with 1000 idle fds took $p1000 ns/call, with 10 took $p10 ns/call: expected a clear growth"
}
