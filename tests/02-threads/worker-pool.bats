#!/usr/bin/env bats
# Exercise 02-threads/worker-pool: the bounded queue between the acceptor
# and the workers (conn_queue_push, conn_queue_pop, conn_queue_stop).
# Runs against $IMPL: solutions by default, exercises with `make ex`.

load ../helpers/common
load pool

pool_bin() { impl_bin worker-pool echo-pool; }

@test "worker-pool: 8 brief clients at once through 2 workers all get their bytes back" {
    server_start "$(pool_bin)" -p 0 -w 2 -q 4
    clients_at_once 8 '100 + i * 3000' || fail "some of 8 clients through 2 workers did not get their bytes back"
    stop_within 5
}

@test "worker-pool: with 2 workers, the third client waits until one of the first two leaves" {
    pool_third_client_waits "$(pool_bin)"
}

@test "worker-pool: with the queue full the acceptor waits, and every client is served in turn" {
    pool_served_in_turn "$(pool_bin)" b "the second client"
}

@test "worker-pool: SIGTERM wakes idle workers waiting on an empty queue (exit 0 within 5 s)" {
    server_start "$(pool_bin)" -p 0 -w 4
    # One client served and gone: that worker has popped and is back waiting.
    run_client -p "$PORT" hello >/dev/null || fail "echo-client failed (status $?)"
    stop_within 5
}

@test "worker-pool: SIGTERM wakes busy workers and an acceptor waiting on a full queue (exit 0 within 5 s)" {
    local fds=() fd
    pool_stop_when_full "$(pool_bin)"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
}
