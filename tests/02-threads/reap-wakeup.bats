#!/usr/bin/env bats
# Exercise 02-threads/reap-wakeup (fix): the chapter's echo-threads with a
# planted bug. Runs against $IMPL (solutions: the chapter's own code;
# `make ex` uses the learner's copy).
#
# A finished worker that nobody joins is gone from the kernel (it is not in
# /proc/PID/task any more) but its stack stays mapped until pthread_join():
# the address space (VmSize) is what shows it. glibc keeps up to 40 MiB of
# joined stacks for the next threads; GLIBC_TUNABLES turns that cache off
# here, so that a join shows at once as a smaller VmSize.

load ../helpers/common
load pool

setup() {
    SERVER_BIN="$(impl_bin reap-wakeup echo-threads)"
    NO_STACK_CACHE=GLIBC_TUNABLES=glibc.pthread.stack_cache_size=0
}

# vm_kb PID: the process's address space (VmSize) in KiB.
vm_kb() { awk '/^VmSize:/ { print $2 }' "/proc/$1/status"; }

# vm_back_within VM0 SECONDS: wait until the server's VmSize is within
# 4 MiB of VM0 (KiB); sets VM1 to the last one seen. Returns 1 if it is
# not after SECONDS.
vm_back_within() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        VM1=$(vm_kb "$SERVER_PID")
        [ $((VM1 - $1)) -lt 4096 ] && return 0
        sleep 0.05
    done
    return 1
}

# come_and_go N: N clients connect at once, each gets an echo, and they
# leave together (one echo-load process holds them all).
come_and_go() {
    hold_idle "$1"
    kill "$LOAD_PID"
    wait "$LOAD_PID" 2>/dev/null || true
}

# wakeups_over SECONDS: times the server's main thread was put on a CPU in
# the next SECONDS (field 3 of /proc/PID/schedstat), whatever woke it.
wakeups_over() {
    local c0 c1
    read -r _ _ c0 <"/proc/$SERVER_PID/schedstat" || return 1
    sleep "$1"
    read -r _ _ c1 <"/proc/$SERVER_PID/schedstat" || return 1
    echo $((c1 - c0))
}

@test "reap-wakeup: the thread stacks of 20 clients that leave together are released at once, with no new client to wake the server" {
    local vm0 grown secs=$((2 * $(san_slowdown)))
    server_start env "$NO_STACK_CACHE" "$SERVER_BIN" -p 0 -s 1024
    # A first burst, so that what a sanitizer keeps per thread (8 MiB for
    # the first threads under ThreadSanitizer) is already counted in vm0.
    come_and_go 20
    sleep 0.2
    vm0=$(vm_kb "$SERVER_PID")
    hold_idle 20
    grown=$(($(vm_kb "$SERVER_PID") - vm0))
    [ "$grown" -ge $((15 * 1024)) ] ||
        fail "20 live workers with 1 MiB stacks made VmSize only $grown kB bigger: the test cannot see stacks here"
    kill "$LOAD_PID"
    wait "$LOAD_PID" 2>/dev/null || true
    # the reference gives it all back at once: the last worker wakes the main thread
    vm_back_within "$vm0" "$secs" ||
        fail "20 clients left together $secs s ago and no new client came: VmSize is still $((VM1 - vm0)) kB above the $vm0 kB before them (it grew by $grown kB): their threads have returned, and nobody joined them"
    echo "# VmSize ${vm0} kB, +${grown} kB with 20 clients, +$((VM1 - vm0)) kB once they left" >&3
    pool_stop_within 3
}

@test "reap-wakeup: the idle server sleeps: it does not wake up to look for finished workers" {
    local n
    valgrind_skip "valgrind's scheduler wakes the threads it runs"
    server_start "$SERVER_BIN" -p 0
    [ -r "/proc/$SERVER_PID/schedstat" ] ||
        skip "this kernel has no /proc/PID/schedstat (CONFIG_SCHED_INFO): no way to count wake-ups"
    come_and_go 5
    sleep 0.5
    # a main thread asleep in poll() with no timeout is not scheduled at all:
    # the reference wakes 0 times; one that looks every 100 ms, 10 times
    n=$(wakeups_over 1)
    echo "# idle after 5 clients came and went: the main thread woke $n times in 1 s (at most 2)" >&3
    [ "$n" -le 2 ] ||
        fail "the idle server's main thread woke $n times in 1 s with nothing to do (expected at most 2): a poll() with a timeout that reaps as it goes is a busy loop that joins threads late"
    pool_stop_within 3
}

@test "reap-wakeup: 10 clients at once each get their bytes back" {
    server_start "$SERVER_BIN" -p 0
    clients_at_once 10 '500 + i * 20000' -t 20 || server_gone "some of 10 clients at once did not get their bytes back"
    pool_stop_within 3
}

@test "reap-wakeup: SIGTERM with clients connected exits 0 within 3 s" {
    local a b
    server_start "$SERVER_BIN" -p 0
    conn_open a
    conn_open b
    expect_echo "$a" one
    expect_echo "$b" two
    pool_stop_within 3
    exec {a}>&- {b}>&-
}
