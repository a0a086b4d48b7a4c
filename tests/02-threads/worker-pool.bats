#!/usr/bin/env bats
# Exercise 02-threads/worker-pool: the bounded queue between the acceptor
# and the workers (conn_queue_push, conn_queue_pop, conn_queue_stop).
# Runs against $IMPL: solutions by default, exercises with `make ex`.

load ../helpers/common

pool_bin() { impl_bin worker-pool echo-pool; }

@test "worker-pool: 8 brief clients at once through 2 workers all get their bytes back" {
    server_start "$(pool_bin)" -p 0 -w 2 -q 4
    clients_at_once 8 '100 + i * 3000' || fail "some of 8 clients through 2 workers did not get their bytes back"
    stop_within 5
}

@test "worker-pool: with 2 workers, the third client waits until one of the first two leaves" {
    local a b c
    server_start "$(pool_bin)" -p 0 -w 2
    conn_open a
    conn_open b
    expect_echo "$a" one
    expect_echo "$b" two
    conn_open c
    printf 'three\n' >&"$c"
    expect_no_echo "$c" "the third client"
    exec {a}>&-
    expect_line "$c" three "on the third client once the first left"
    stop_within 5
    exec {b}>&- {c}>&-
}

@test "worker-pool: with the queue full the acceptor waits, and every client is served in turn" {
    local a b c d
    # One worker and one slot: a is served, b is queued, the acceptor waits
    # in push with c, d waits in the kernel's backlog.
    server_start "$(pool_bin)" -p 0 -w 1 -q 1
    conn_open a
    expect_echo "$a" a
    conn_open b
    conn_open c
    conn_open d
    printf 'b\n' >&"$b"
    printf 'c\n' >&"$c"
    printf 'd\n' >&"$d"
    expect_no_echo "$b" "the second client"
    exec {a}>&-
    expect_line "$b" b "once a left"
    exec {b}>&-
    expect_line "$c" c "once b left"
    exec {c}>&-
    expect_line "$d" d "once c left"
    stop_within 5
    exec {d}>&-
}

@test "worker-pool: SIGTERM wakes idle workers waiting on an empty queue (exit 0 within 5 s)" {
    server_start "$(pool_bin)" -p 0 -w 4
    # One client served and gone: that worker has popped and is back waiting.
    run_client -p "$PORT" hello >/dev/null || fail "echo-client failed (status $?)"
    stop_within 5
}

@test "worker-pool: SIGTERM wakes busy workers and an acceptor waiting on a full queue (exit 0 within 5 s)" {
    local fds=() fd i
    server_start "$(pool_bin)" -p 0 -w 2 -q 1
    for ((i = 0; i < 5; i++)); do
        conn_open fd
        fds+=("$fd")
    done
    expect_echo "${fds[0]}" first
    expect_echo "${fds[1]}" second
    stop_within 5
    for fd in "${fds[@]}"; do exec {fd}>&-; done
}
