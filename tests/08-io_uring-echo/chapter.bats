#!/usr/bin/env bats
# Chapter 08: io_uring echo servers. This file: the rules demo, the blog-post
# sketch, every program's command line, and echo-uring-basic (single-shot
# requests). echo-uring.bats and echo-uring-sqpoll.bats test the others.

load ../helpers/common
load ../helpers/echo_suite
load suite_extra

basic() {
    SERVER_CMD=("$(chapter_bin echo-uring-basic)")
    require_uring
}

# ---- uring-rules -------------------------------------------------------------

@test "uring-rules: seven rules of io_uring networking hold on this kernel" {
    run timeout 60 "$(chapter_bin uring-rules)"
    [ "$status" -ne 77 ] || skip "$output"
    assert_success
    sed "s/^/# /" <<<"$output" >&3
    assert_output --partial "first CQE: user_data 2"
    assert_output --regexp "with no io_uring call,.*"$'\n'".*buf = \"hello"
    assert_output --partial "close() did not cancel it"
    assert_output --regexp "peer not reading: CQE res [0-9]+"
    assert_output --partial "with MSG_WAITALL, the peer reading: CQE res 1048576"
    assert_output --partial "CQE res -105 (ENOBUFS), buffer -1, F_MORE no"
    assert_output --partial "CQE res -24 (EMFILE), F_MORE no"
    assert_output --partial "CQE res -105 (ENOBUFS) at once: the buffer is picked when the recv is tried"
    assert_output --partial "the same with IORING_RECVSEND_POLL_FIRST: no CQE in 100 ms, it waits for bytes"
    assert_output --partial "a buffer given, then the peer writes: CQE res 3, buffer 0"
    assert_output --partial "every rule held"
}

# ---- uring-sketch: what the blog-post version does -----------------------------

@test "uring-sketch: a message longer than its one buffer comes back cut, then it exits" {
    local in="$BATS_TEST_TMPDIR/msg" got
    basic
    server_start "$(chapter_bin uring-sketch)" -p 0
    # 5,000 bytes: one write, all in the socket before the sketch's one recv
    # takes its 4,096. It then closes with bytes unread, which makes the
    # kernel send a reset instead of a FIN; when the reset reaches the client
    # before it has read the echo, the kernel drops the echo too. So the
    # client gets the first 4,096 bytes or nothing, never all 5,000.
    payload "$in" 5000
    run_client -p "$PORT" -t 10 <"$in" >"$in.out" || true
    got=$(stat -c %s "$in.out")
    echo "# sent 5000 bytes, got $got back" >&3
    [ "$got" -lt 5000 ] || fail "expected the echo cut to one 4096-byte buffer (or lost to the reset), got all $got bytes"
    cmp -s "$in.out" <(head -c "$got" "$in") || fail "the bytes that came back are not the first ones sent"
    server_exited 100 || fail "the sketch still runs after one client: expected it to exit"
    wait "$SERVER_PID"
    if exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" 2>/dev/null; then
        exec {fd}>&-
        fail "a second client could connect: nothing should listen any more"
    fi
}

# ---- the command line of every program ------------------------------------------

@test "every program: bad arguments print usage on stderr and exit 2; -h exits 0" {
    usage_contract uring-sketch uring-rules echo-uring-basic echo-uring echo-uring-sqpoll
    run "$(chapter_bin echo-uring)" -B 1000
    [ "$status" -eq 2 ] || fail "echo-uring -B 1000 (not a power of two): expected exit 2, got $status"
    run "$(chapter_bin echo-uring-sqpoll)" -I 0
    [ "$status" -eq 2 ] || fail "echo-uring-sqpoll -I 0: expected exit 2, got $status"
    run "$(chapter_bin echo-uring)" -I 10
    [ "$status" -eq 2 ] || fail "echo-uring -I (an SQPOLL option): expected exit 2, got $status"
}

@test "every server: -K names what it needs from the kernel, or why it cannot run (exit 77)" {
    local p
    for p in echo-uring-basic echo-uring echo-uring-sqpoll; do
        run "$(chapter_bin $p)" -K
        echo "# $output" >&3
        case "$status" in
        0) assert_output --regexp "^$p: this kernel \(.*\) has what it needs: " ;;
        77) assert_output --regexp "needs Linux [0-9.]+ or newer|io_uring_setup" ;;
        *) fail "$p -K: expected exit 0 or 77, got $status: $output" ;;
        esac
    done
}

# The shared echo suite's cases (binary data, 16 MiB, 200 clients, resets,
# half-close, never-reading client, fd limit, fd growth, idle connections,
# SIGTERM, faults) run from suite-echo-uring-basic.bats, listed in
# common/servers.txt by make suite. What follows is echo-uring-basic's own.

@test "echo-uring-basic: short sends (tiny SO_SNDBUF, slow reader) are completed, in order" {
    basic
    suite_short_sends -s 262144
}
@test "echo-uring-basic: client B is served while client A is connected and idle" {
    basic
    suite_serves_while_idle
}
@test "echo-uring-basic: an idle server with a connected client does not spin" {
    basic
    suite_idle_no_spin
}
@test "echo-uring-basic: running out of fds (EMFILE) is logged, and waiting clients are served later" {
    basic
    suite_emfile_recovers
}
@test "echo-uring-basic: strace shows io_uring_enter() in use and no system calls while idle" {
    basic
    suite_syscalls_idle io_uring_enter
}
@test "echo-uring-basic: no read/write/recv/send per message; about one io_uring_enter per completion" {
    basic
    # one recv CQE and one send CQE per message, one io_uring_enter each
    suite_uring_syscalls 250
}

# ---- bench.sh ----------------------------------------------------------------------------

@test "bench.sh: a bad count says so and exits 2" {
    run timeout 10 "$TOP/chapters/08-io_uring-echo/bench.sh" -d -1
    assert_failure 2
    assert_output --partial "positive whole number"
}
