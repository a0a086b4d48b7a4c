#!/usr/bin/env bats
# Exercise 10-threadpool/pool-submit: pool_submit() queues a job for the
# pool's threads under the pool's lock, refuses it when the queue is full
# (-EAGAIN) or the pool is stopping (-ESHUTDOWN), and wakes one thread. The
# loop thread calls it, so it never waits. Runs against $IMPL (solutions by
# default; `make ex` uses exercises).
#
# pool-check runs once, in setup_file; the tests read its verdicts. It stops
# at the first broken promise, so a test whose check did not run fails too.

load ../helpers/common
load files
load exercise

setup_file() { pool_exercise_setup_file pool-submit 20; }

setup() { pool_exercise_setup pool-submit; }

@test "pool-submit: every submitted job runs, and its done callback runs exactly once" {
    pool_check_ok "every job's done callback runs exactly once" \
        "a done callback can submit the next job (100 in a chain)"
}

# pool-check counts the voluntary context switches of the pool's threads
# (/proc/self/task/*/status) while it submits 200 jobs one at a time to 8
# idle threads: the reference measures 1.1 per job, a broadcast 6.5.
@test "pool-submit: one job submitted to 8 idle threads wakes one of them, not all 8" {
    pool_check_ok "one job submitted to 8 idle threads wakes one of them, not all 8"
}

@test "pool-submit: a full queue refuses a job with -EAGAIN at once, and the counters say so" {
    pool_check_ok "a full queue refuses a job with -EAGAIN" \
        "the counters show 1 busy, 0 idle, 2 queued, the oldest waiting >= 50 ms"
}

@test "pool-submit: a job submitted while the pool shuts down is refused with -ESHUTDOWN" {
    pool_check_ok "a job submitted by a callback during pool_shutdown() is refused with -ESHUTDOWN"
}

@test "pool-submit: queued jobs start in the order they were submitted" {
    pool_check_ok "queued jobs start in the order they were submitted"
}

@test "pool-submit: file-server with a full queue answers ERR BUSY instead of queueing without bound" {
    # each read slowed to 1 s (5 s under ThreadSanitizer): the queue stays
    # full while the test asks, however busy the machine
    full_queue_answers_busy $((1000 * $(san_slowdown))) 60
}

@test "pool-submit: 30 clients at once on 3 threads each get their file" {
    server_start "${SERVER[@]}" -p 0 -w 3
    fetch_together 30 30 f1.bin f4096.bin f65536.bin || server_gone "some of 30 clients did not get their file"
    stop_within 5
}
