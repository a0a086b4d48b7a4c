#!/usr/bin/env bats
# Exercise 02-threads/pool-stop: pool_signal_main() of echo-pool, which wakes
# every thread of the pool on SIGTERM. Runs against $IMPL (solutions: the
# chapter's own code; `make ex` uses the learner's copy).
#
# A stop that forgets a sleeper hangs: each test gives the server 3 s to
# exit (the reference takes a few milliseconds) and fails then.

load ../helpers/common
load pool

setup() {
    SERVER_BIN="$(impl_bin pool-stop echo-pool)"
    POOL_SECS=$((3 * $(san_slowdown)))
}

# expect_eof FD WHO: the server closed FD's connection (read sees EOF or a
# reset within 5 s, not a line).
expect_eof() {
    local line
    if read -r -t 5 line <&"$1"; then
        fail "$2: expected EOF after the stop, got '$line'"
    elif [ $? -gt 128 ]; then
        fail "$2: its connection was still open 5 s after the server exited"
    fi
}

@test "pool-stop: SIGTERM with idle workers only exits 0 within 3 s" {
    server_start "$SERVER_BIN" -p 0 -w 4
    client_echo "served, then gone"
    pool_stop_within 3
}

@test "pool-stop: SIGTERM with every worker busy, a client queued and the acceptor waiting exits 0 within 3 s" {
    local fds=() fd i
    pool_stop_when_full "$SERVER_BIN"
    for i in 0 1; do
        expect_eof "${fds[$i]}" "busy client $i"
    done
    for fd in "${fds[@]}"; do exec {fd}>&-; done
}

# ECHO_POOL_TEST_BEGIN_DELAY_MS holds the worker for a second between
# taking the client from the queue and publishing it in its `fd`: the stop
# comes then, finds no busy worker to shut down, and only the `stopping`
# flag (set under busy_lock) tells the worker not to start serving.
@test "pool-stop: a client taken from the queue just before the stop is closed, not served: exit 0 within 3 s" {
    local a i
    server_start env ECHO_POOL_TEST_BEGIN_DELAY_MS=1000 "$SERVER_BIN" -p 0 -w 1
    conn_open a
    for ((i = 0; i < 100; i++)); do
        grep -q 'test hook: took fd' "$SERVER_ERR" && break
        sleep 0.05
    done
    grep -q 'test hook: took fd' "$SERVER_ERR" || fail "the worker did not take the client within 5 s: $(cat "$SERVER_ERR")"
    pool_stop_within 3
    expect_eof "$a" "the client taken just before the stop"
    exec {a}>&-
}

@test "pool-stop: SIGTERM with one busy worker and three idle exits 0 within 3 s" {
    local a
    server_start "$SERVER_BIN" -p 0 -w 4
    conn_open a
    pool_echo "$a" "one busy worker"
    pool_stop_within 3
    expect_eof "$a" "the busy client"
    exec {a}>&-
}

@test "pool-stop: under spurious wake-ups, SIGTERM with a full pool still exits 0 within 3 s" {
    local fds=() fd POOL_PREFIX
    # shellcheck disable=SC2207 # faults_env prints words for env(1)
    POOL_PREFIX=(env $(faults_env FAULTS_SPURIOUS_WAKEUP=50))
    pool_stop_when_full "$SERVER_BIN"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    counted_positive faults_count "the faults shim" spurious
}
