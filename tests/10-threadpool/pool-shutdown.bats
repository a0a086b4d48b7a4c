#!/usr/bin/env bats
# Exercise 10-threadpool/pool-shutdown: pool_shutdown() stops the pool.
# POOL_CANCEL takes the jobs no thread has started; POOL_FINISH lets them
# run. Either way every thread is woken and joined (a running job cannot be
# interrupted, only waited for), and every job's done callback runs once,
# on the calling (loop) thread: -ECANCELED for the cancelled ones. Runs
# against $IMPL (solutions by default; `make ex` uses exercises).
#
# pool-check runs once, in setup_file; the tests read its verdicts. It stops
# at the first broken promise, so a test whose check did not run fails too;
# a pool_shutdown() that has not returned after 5 s ends it with a FAIL line.

load ../helpers/common
load files
load exercise

setup_file() { pool_exercise_setup_file pool-shutdown 20; }

setup() { pool_exercise_setup pool-shutdown; }

@test "pool-shutdown: shutdown wakes and joins 4 idle threads, and every job's callback has run once" {
    pool_check_ok "every job's done callback runs exactly once" \
        "a done callback can submit the next job (100 in a chain)"
}

@test "pool-shutdown: POOL_CANCEL lets the running job finish and cancels the queued one, on the loop thread" {
    pool_check_ok "POOL_CANCEL: the running job finishes, the queued one gets -ECANCELED, on the loop thread"
}

@test "pool-shutdown: POOL_FINISH runs every queued job before it returns, and every callback once" {
    pool_check_ok "POOL_FINISH: every queued job runs before shutdown returns"
}

# Under the faults shim, half of the pool threads' condition waits return
# at once with no signal (a spurious wake-up, which POSIX allows): the
# shutdown must still find each thread and join it.
@test "pool-shutdown: an idle file-server stops at once after serving, exit 0, even with spurious wake-ups" {
    # shellcheck disable=SC2046 # faults_env prints words for env(1)
    server_start env $(faults_env FAULTS_SPURIOUS_WAKEUP=50) "${SERVER[@]}" -p 0 -w 4
    fetch_cmp f4096.bin f65536.bin
    stop_within 5
    counted_positive faults_count "the faults shim" spurious
}

# A shutdown that sets `stopping`, or broadcasts, without the pool's mutex
# is lost when a thread has tested the queue and is not asleep yet. The
# faults shim's FAULTS_LATE_WAIT holds each waiter in that moment for half a
# second, mutex held (the scheduler may); SIGTERM comes while the one pool
# thread is there, in its second wait, after the first job.
@test "pool-shutdown: SIGTERM while the pool thread has tested the empty queue but is not asleep yet still wakes and joins it (FAULTS_LATE_WAIT)" {
    local mark="$BATS_TEST_TMPDIR/late"
    # shellcheck disable=SC2046 # faults_env prints words for env(1)
    server_start env $(faults_env FAULTS_LATE_WAIT=500 FAULTS_LATE_WAIT_MARK="$mark") "${SERVER[@]}" -p 0 -w 1
    fetch_cmp f4096.bin
    late_waits_reach "$mark" 2
    stop_within 3
}

@test "pool-shutdown: SIGTERM with one slow read running and 5 queued: the queued are cancelled, exit 0 soon" {
    local i clients=() t0 ms slow=$((1000 * $(san_slowdown)))
    server_start "${SERVER[@]}" -p 0 -w 1 -s "$slow"
    for ((i = 0; i < 6; i++)); do
        timeout --foreground 30 "$FILE_CLIENT" -p "$PORT" -o /dev/null slow.bin 2>/dev/null &
        clients+=("$!")
    done
    wait_stat queued 5
    t0=$(date +%s%N)
    stop_within $((10 * slow / 1000))
    ms=$((($(date +%s%N) - t0) / 1000000))
    wait "${clients[@]}" || true # they fail: the server went away mid-file
    # the running read takes up to $slow ms; the 5 queued would take 5 times as long again
    [ "$ms" -lt $((4 * slow)) ] || fail "the server took $ms ms to stop: the 5 queued reads ran instead of being cancelled"
}

# The read running at SIGTERM finishes during the join: its callback, run
# by the drain after the join, frees its request. Without it, valgrind sees
# the request (and its 1 MiB reply) lost.
@test "pool-shutdown: SIGTERM with a read running and one queued frees every request (valgrind)" {
    local a b
    leak_checked
    server_start "${VG[@]}" "${SERVER[@]}" -p 0 -w 1 -s 1000
    timeout --foreground 60 "$FILE_CLIENT" -p "$PORT" -o /dev/null slow.bin 2>/dev/null &
    a=$!
    wait_stat busy 1
    timeout --foreground 60 "$FILE_CLIENT" -p "$PORT" -o /dev/null f4096.bin 2>/dev/null &
    b=$!
    wait_stat queued 1
    stop_within $((20 * $(san_slowdown)))
    wait "$a" "$b" || true # they fail: the server went away
}
