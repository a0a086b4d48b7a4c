#!/usr/bin/env bats
# Chapter 08: echo-uring-sqpoll, echo-uring with a kernel thread polling the
# submission queue.
#
# The SQPOLL thread (iou-sqp-PID) is a thread of the server process, so its
# CPU time is the server's (/proc/PID/stat adds every thread). It spins for
# sq_thread_idle after the last request, 1 s by default: the generic "idle
# server does not spin" and "out of fds, no spin" checks would see that
# second of spinning (a 1 s accept retry timer even keeps it awake for good).
# The suite therefore runs the server with -I 50; the last tests show the
# default's behaviour on its own.

load ../helpers/common
load ../helpers/echo_suite
load suite_extra

setup() { uring_server "$(chapter_bin echo-uring-sqpoll)" -I 50; }

# The shared echo suite's cases (binary data, 16 MiB, 200 clients, resets,
# half-close, never-reading client, fd limit, fd growth, idle connections,
# SIGTERM, faults) run from suite-echo-uring-sqpoll.bats, listed in
# common/servers.txt by make suite. What follows is echo-uring-sqpoll's own.

@test "echo-uring-sqpoll: short sends (tiny SO_SNDBUF, slow reader) are completed, in order" {
    suite_short_sends -s 262144 -B 64
}
@test "echo-uring-sqpoll: client B is served while client A is connected and idle" {
    suite_serves_while_idle
}
@test "echo-uring-sqpoll: with -I 50, an idle server with a connected client does not spin" {
    suite_idle_no_spin
}
@test "echo-uring-sqpoll: running out of fds (EMFILE) is logged, and waiting clients are served later" {
    suite_emfile_recovers
}
@test "echo-uring-sqpoll: strace shows io_uring_enter() in use and no system calls while idle" {
    suite_syscalls_idle io_uring_enter
}
@test "echo-uring-sqpoll: no read/write/recv/send per message, and far fewer io_uring_enter than messages" {
    suite_uring_syscalls 25
}

# ---- the kernel thread ------------------------------------------------------------

# sqp_ticks: user + system ticks of the server's iou-sqp thread so far.
sqp_ticks() {
    local t comm stat
    for t in /proc/"$SERVER_PID"/task/*; do
        read -r comm <"$t/comm" 2>/dev/null || continue
        # iou-sqp-PID carries the PID in the first PID namespace: inside a
        # container that is not $SERVER_PID. The server has one such thread.
        case "$comm" in iou-sqp-*) ;; *) continue ;; esac
        read -r stat <"$t/stat" || return 1
        set -- ${stat##*) }
        echo $((${12} + ${13}))
        return 0
    done
    return 1
}

@test "echo-uring-sqpoll: by default its iou-sqp thread polls for 1 s after a request, then sleeps; that CPU is the server's" {
    local a p0 t0 p1 t1 t2 t3 hz
    SERVER_CMD=("$(chapter_bin echo-uring-sqpoll)") # the default: sq_thread_idle 1000 ms
    suite_start
    sqp_ticks >/dev/null || fail "no iou-sqp-* thread in /proc/$SERVER_PID/task: $(cat /proc/"$SERVER_PID"/task/*/comm | tr '\n' ' ')"
    conn_open a
    expect_echo "$a" ping
    hz=$(getconf CLK_TCK)
    # The thread's interval [t0, t1] lies inside the server's [p0, p1], so the
    # server's ticks over it can only be more, never fewer, if they include the
    # thread's: whatever the thread burns while the next figure is being read
    # counts on the server's side.
    p0=$(cpu_ticks "$SERVER_PID")
    t0=$(sqp_ticks)
    sleep 0.8 # inside the 1 s idle window: the thread polls an empty queue
    t1=$(sqp_ticks)
    p1=$(cpu_ticks "$SERVER_PID")
    sleep 0.7 # past it
    t2=$(sqp_ticks)
    sleep 2 # the thread sleeps until the next submission wakes it
    t3=$(sqp_ticks)
    echo "# iou-sqp thread: $((t1 - t0)) ticks in the 0.8 s after a request, $((t3 - t2)) in 2 s once idle ($hz per second); the whole server: $((p1 - p0)) in the first 0.8 s" >&3
    [ $((t1 - t0)) -gt $((t3 - t2)) ] ||
        fail "the SQPOLL thread used $((t1 - t0)) ticks while it should poll and $((t3 - t2)) after sq_thread_idle: expected polling first, sleep after"
    [ $((t1 - t0)) -ge 5 ] || fail "the SQPOLL thread used only $((t1 - t0)) ticks in its idle window: it did not poll"
    [ $(((t3 - t2) * 4)) -lt $((2 * hz)) ] ||
        fail "the SQPOLL thread used $((t3 - t2)) ticks in 2 s after sq_thread_idle: it did not go to sleep"
    [ $((p1 - p0 + 2)) -ge $((t1 - t0)) ] ||
        fail "the server's CPU time ($((p1 - p0))) does not include its SQPOLL thread's ($((t1 - t0)))"
    expect_echo "$a" "the sleeping thread is woken"
    exec {a}>&-
    suite_stop_clean
}
