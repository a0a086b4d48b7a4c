#!/usr/bin/env bats
# Exercise 02-threads/worker-pool: the bounded queue between the acceptor
# and the workers (conn_queue_push, conn_queue_pop, conn_queue_stop).
# Runs against $IMPL: solutions by default, exercises with `make ex`.
#
# The quick tests come first: a wrong queue hangs somewhere, and each wait
# here gives up after POOL_SECS (3 s; an echo on loopback takes under a
# millisecond) rather than 10.

load ../helpers/common
load pool

setup() {
    POOL_SECS=$((3 * $(san_slowdown)))
}

pool_bin() { impl_bin worker-pool echo-pool; }

@test "worker-pool: a client is served, then SIGTERM wakes every idle worker waiting on the empty queue" {
    local a
    server_start "$(pool_bin)" -p 0 -w 4
    conn_open a
    pool_echo "$a" "served by one of 4 workers"
    exec {a}>&-
    # that worker is back in pop with the three others: stop must wake all four
    pool_stop_within 3
}

# pool_served_in_turn, then 8 clients at once, under the faults shim's
# spurious wake-ups (half of the condition waits return at once, with no
# signal, as POSIX allows): a wait that does not test its condition again
# takes a client from an empty ring or overwrites one in a full ring. The
# shim must have made some, or the run proved nothing.
@test "worker-pool: every wait tests its condition again: half the waits waking spuriously lose no client" {
    local POOL_PREFIX
    # shellcheck disable=SC2207 # faults_env prints words for env(1)
    POOL_PREFIX=(env $(faults_env FAULTS_SPURIOUS_WAKEUP=50))
    pool_served_in_turn "$(pool_bin)" b "the second client"
    server_start "${POOL_PREFIX[@]}" "$(pool_bin)" -p 0 -w 2 -q 2
    CLIENT_TIMEOUT=$((10 * $(san_slowdown))) clients_at_once 8 '100 + i * 3000' ||
        fail "under spurious wake-ups, some of 8 clients through 2 workers did not get their bytes back"
    pool_stop_within 5
    counted_positive faults_count "the faults shim" spurious
}

# A stop that sets the queue's flag, or signals, without its mutex is lost
# when a worker has tested the queue and is not asleep yet. The faults shim's
# FAULTS_LATE_WAIT holds each waiter in that moment for half a second, mutex
# held (the scheduler may); SIGTERM comes while the one worker is there, in
# its second wait. A stop that takes the mutex waits until it sleeps.
@test "worker-pool: SIGTERM while the worker has tested the empty queue but is not asleep yet still wakes it (FAULTS_LATE_WAIT)" {
    local a mark="$BATS_TEST_TMPDIR/late"
    # shellcheck disable=SC2046 # faults_env prints words for env(1)
    server_start env $(faults_env FAULTS_LATE_WAIT=500 FAULTS_LATE_WAIT_MARK="$mark") "$(pool_bin)" -p 0 -w 1
    conn_open a
    pool_echo "$a" "served by the one worker"
    exec {a}>&-
    # its first wait came before the client; the second, once the client left
    late_waits_reach "$mark" 2
    pool_stop_within 3
}

@test "worker-pool: with the queue full the acceptor waits, and every client is served in turn" {
    pool_served_in_turn "$(pool_bin)" b "the second client"
}

@test "worker-pool: SIGTERM wakes busy workers and an acceptor waiting on a full queue (exit 0 within 5 s)" {
    local fds=() fd
    pool_stop_when_full "$(pool_bin)"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
}

@test "worker-pool: with 2 workers, the third client waits until one of the first two leaves" {
    pool_third_client_waits "$(pool_bin)"
}

@test "worker-pool: 8 brief clients at once through 2 workers all get their bytes back" {
    server_start "$(pool_bin)" -p 0 -w 2 -q 4
    CLIENT_TIMEOUT=$((10 * $(san_slowdown))) clients_at_once 8 '100 + i * 3000' ||
        fail "some of 8 clients through 2 workers did not get their bytes back"
    pool_stop_within 5
}
