#!/usr/bin/env bats
# Chapter 04: epoll, level-triggered.

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(chapter_bin echo-epoll-lt)")
}

# ---- the demos ---------------------------------------------------------------

@test "epoll-tour: ready list, level-triggered reports, EPOLLOUT, ERR/HUP, RDHUP, checked step by step" {
    run timeout 60 "$(chapter_bin epoll-tour)"
    assert_success
    assert_output --partial "100 pipes in the interest list, bytes written into 3 of them"
    assert_output --partial "epoll_wait(maxevents 64) = 3: pipe 7 pipe 42 pipe 93"
    assert_output --partial "again = 2: pipe 93 first"
    assert_output --partial "reported by 3 of 3 epoll_wait() calls"
    assert_output --partial "the rest read: epoll_wait() = 0"
    assert_output --partial "100000 of 100000 epoll_wait(timeout -1) calls"
    assert_output --regexp "returned at once, in [0-9]+ ms"
    assert_output --partial "EPOLL_CTL_MOD to EPOLLIN only: epoll_wait(200 ms) = 0"
    assert_output --partial "pipe read end, events 0, writer closed: 1 event, EPOLLHUP"
    assert_output --partial "and again on 2 of the next 2 calls"
    assert_output --partial "pipe write end, events 0, reader closed: 1 event, EPOLLERR"
    assert_output --regexp "TCP socket, events 0, peer reset: 1 event, .*EPOLLERR"
    assert_output --partial "half-closed: EPOLLIN|EPOLLRDHUP"
    assert_output --partial "reported by 2 of 2 calls"
    assert_output --partial "every step behaved as described"
}

@test "epoll-tour: epoll_ctl() fails with EEXIST, ENOENT, EINVAL, ELOOP, EBADF and EPERM where it should" {
    run timeout 60 "$(chapter_bin epoll-tour)"
    assert_success
    assert_output --regexp "ADD the same pipe again +-> EEXIST"
    assert_output --regexp "MOD a pipe never added +-> ENOENT"
    assert_output --regexp "DEL a pipe never added +-> ENOENT"
    assert_output --regexp "ADD the epoll fd to itself +-> EINVAL"
    assert_output --regexp "ADD epoll A to epoll B \(a cycle\) +-> ELOOP"
    assert_output --regexp "ADD an fd that is closed +-> EBADF"
    assert_output --regexp "ADD a regular file +-> EPERM"
}

@test "epoll-fds: a regular file, a directory and /dev/null are refused with EPERM while poll() calls them ready" {
    run timeout 30 "$(chapter_bin epoll-fds)"
    assert_success
    assert_output --regexp "regular file +POLLIN\|POLLOUT +EPERM"
    assert_output --regexp "directory +POLLIN\|POLLOUT +EPERM"
    assert_output --regexp "/dev/null +POLLIN\|POLLOUT +EPERM"
}

@test "epoll-fds: pipes, sockets, eventfd, timerfd, signalfd, inotify and epoll itself are accepted" {
    run timeout 30 "$(chapter_bin epoll-fds)"
    assert_success
    local kind
    for kind in "pipe, read end" "TCP socket" "UNIX socket" eventfd timerfd signalfd inotify epoll; do
        assert_output --regexp "  $kind +[A-Z|-]+ +0 "
    done
    # an idle socket is writable, an empty pipe is not readable: poll and epoll agree
    assert_output --regexp "TCP socket +POLLOUT +0 +EPOLLOUT"
    assert_output --regexp "pipe, read end +- +0 +-"
}

@test "epoll-dup: a closed fd stays registered while a dup() of it lives, and goes with the last one" {
    run timeout 30 "$(chapter_bin epoll-dup)"
    assert_success
    assert_output --regexp "registered fd ([0-9]+), then dup\(\1\) = [0-9]+, then close\(\1\)"
    assert_output --regexp "epoll_wait\(\) = 1: EPOLLIN for the fd registered as [0-9]+"
    assert_output --regexp "epoll_ctl\(DEL, [0-9]+\) = EBADF"
    assert_output --regexp "epoll_ctl\(DEL, [0-9]+\) = ENOENT"
    assert_output --partial "epoll_wait() = 0: nothing reported"
}

@test "every program: bad arguments print usage on stderr and exit 2; -h exits 0" {
    usage_contract echo-epoll-lt epoll-tour epoll-fds epoll-dup
    run "$(chapter_bin echo-epoll-lt)" -p 70000
    assert_failure 2
    run "$(chapter_bin echo-epoll-lt)" -E sometimes
    assert_failure 2
    assert_output --partial "-E MODE"
}

# The shared echo suite's cases (binary data, 16 MiB, 200 clients, resets,
# half-close, never-reading client, fd limit, fd growth, idle connections,
# SIGTERM, faults) run from suite-echo-epoll-lt.bats, listed in
# common/servers.txt by make suite. What follows is echo-epoll-lt's own.

@test "echo-epoll-lt: SIGINT, like SIGTERM, reaches the loop through the signalfd and exits 0" {
    stop_asleep_in epoll_wait INT
}

# ---- one thread, many clients ----------------------------------------------------

@test "echo-epoll-lt: client B is served while client A is connected and idle" {
    suite_serves_while_idle
}

@test "echo-epoll-lt: an idle server with a connected client does not spin" {
    suite_idle_no_spin
}

@test "echo-epoll-lt: after a burst that filled the socket is drained, the idle server does not spin (EPOLLOUT dropped)" {
    suite_idle_after_burst_no_spin
}

@test "echo-epoll-lt: 96 KiB that arrive while the server is paused all come back" {
    suite_drains_message_sent_while_paused
}

@test "echo-epoll-lt: 30 clients that connect while the server is paused are all served" {
    suite_accepts_burst_while_paused
}

@test "echo-epoll-lt: a ping-pong client stays fast while another floods" {
    suite_fair_under_flood
}

# ---- out of file descriptors -------------------------------------------------------

@test "echo-epoll-lt: running out of fds (EMFILE) is logged, and waiting clients are served later" {
    suite_emfile_recovers
}

@test "echo-epoll-lt: out of fds with 100 clients waiting it stops accepting, says so, and starts again (the default -E pause)" {
    suite_fd_limit_no_spin
    grep -q 'not accepting until a connection closes' "$SERVER_ERR" ||
        fail "expected the pause to be logged, got: $(cat "$SERVER_ERR")"
}

@test "echo-epoll-lt -E spare: under ulimit -n 64 with 100 connection attempts it neither dies nor spins and serves again" {
    SERVER_CMD+=(-E spare)
    suite_fd_limit_no_spin
}

@test "echo-epoll-lt -E spare: a client beyond the fd limit is closed at once (EOF), not left waiting" {
    local fds=() i fd line status
    server_start bash -c 'ulimit -n 12 && exec "$@"' _ "${SERVER_CMD[@]}" -E spare -p 0
    for ((i = 0; i < 10; i++)); do
        conn_open fd
        fds+=("$fd")
    done
    sleep 0.5
    # the first few are served; a client over the limit reads EOF (status 1 from read)
    expect_echo "${fds[0]}" "first client"
    line="" status=0
    read -r -t 5 line <&"${fds[9]}" || status=$?
    [ "$status" -eq 1 ] && [ -z "$line" ] ||
        fail "expected EOF at once for the 10th client, got status $status, line '$line'"
    grep -q 'closing waiting connections at once' "$SERVER_ERR" ||
        fail "expected the shedding to be logged, got: $(cat "$SERVER_ERR")"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    suite_stop_clean
}

# What pausing prevents: the same server, told to log EMFILE and carry on as
# chapter 03's echo-poll does, spins on the readable listener.
@test "echo-epoll-lt -E log (chapter 03's way): under ulimit -n 64 with 100 waiting clients the loop spins" {
    local fds=() i fd busy
    server_start bash -c 'ulimit -n 64 && exec "$@"' _ "${SERVER_CMD[@]}" -E log -p 0
    for ((i = 0; i < 100; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || fail "connect $i failed"
        fds+=("$fd")
    done
    sleep 0.5
    [ -r "/proc/$SERVER_PID/schedstat" ] ||
        skip "this kernel has no /proc/PID/schedstat (CONFIG_SCHED_INFO): no way to tell running from sleeping"
    # Not CPU ticks: on a loaded machine a busy loop gets only its share of
    # a CPU, but it never sleeps, so it is always running or runnable.
    busy=$(busy_percent_over 2)
    echo "# -E log, out of fds with clients waiting: running or runnable ${busy}% of 2 s" >&3
    [ "$busy" -ge 80 ] ||
        fail "-E log was running or runnable only ${busy}% of 2 s: expected the busy loop that pausing prevents"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    suite_stop_clean
}

# ---- which system calls ----------------------------------------------------------------

# LeakSanitizer cannot run under ptrace: in a sanitizer build the traced
# server would exit 1 at shutdown. Leaks are checked without strace (valgrind, ASan).
@test "echo-epoll-lt: strace shows epoll_wait() in use and no system calls while idle" {
    ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" suite_syscalls_idle epoll_wait
}

@test "echo-epoll-lt: strace -f -c: epoll_wait, no poll/select, at most 3 reads+writes per echoed message" {
    suite_syscalls_per_message epoll_wait
}

# ---- clean shutdown ----------------------------------------------------------------------

@test "echo-epoll-lt: valgrind finds no leak and no open fd after SIGTERM with clients connected" {
    case "$BUILD" in */san-*) skip "valgrind does not run sanitized binaries" ;; esac
    command -v valgrind >/dev/null || skip "valgrind is not installed (make deps)"
    local a b log="$BATS_TEST_TMPDIR/valgrind.log"
    server_start valgrind -q --leak-check=full --errors-for-leak-kinds=all --error-exitcode=1 \
        --track-fds=yes --log-file="$log" "${SERVER_CMD[@]}" -p 0
    conn_open a
    conn_open b
    expect_echo "$a" "under valgrind"
    payload "$BATS_TEST_TMPDIR/v" 300000
    run_client -p "$PORT" <"$BATS_TEST_TMPDIR/v" >"$BATS_TEST_TMPDIR/v.out" ||
        fail "echo-client failed under valgrind (status $?)"
    cmp -s "$BATS_TEST_TMPDIR/v" "$BATS_TEST_TMPDIR/v.out" || fail "echoed bytes differ under valgrind"
    server_stop TERM
    [ "$SERVER_STATUS" -eq 0 ] || fail "valgrind exit status $SERVER_STATUS:
$(cat "$log")"
    exec {a}>&- {b}>&-
    # --track-fds lists every fd open at exit; the ones inherited from bats are not the server's
    local leaked
    leaked=$(awk '/Open (file descriptor|AF_)/ { fd = $0; getline; if ($0 !~ /inherited from parent/) print fd }' "$log")
    [ -z "$leaked" ] || fail "fds left open at exit:
$leaked
$(cat "$log")"
}
