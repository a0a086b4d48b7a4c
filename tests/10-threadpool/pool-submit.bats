#!/usr/bin/env bats
# Exercise 10-threadpool/pool-submit: pool_submit() queues a job for the
# pool's threads under the pool's lock, refuses it when the queue is full
# (-EAGAIN) or the pool is stopping (-ESHUTDOWN), and wakes one thread. The
# loop thread calls it, so it never waits. Runs against $IMPL (solutions by
# default; `make ex` uses exercises).

load ../helpers/common
load files
load exercise

setup_file() { pool_exercise_setup_file pool-submit 30; }

setup() { pool_exercise_setup pool-submit; }

@test "pool-submit: every submitted job runs, and its done callback runs exactly once" {
    pool_check_ok "every job's done callback runs exactly once" \
        "a done callback can submit the next job (100 in a chain)"
}

@test "pool-submit: a full queue refuses a job with -EAGAIN at once, and the counters say so" {
    pool_check_ok "a full queue refuses a job with -EAGAIN" \
        "the counters show 1 busy, 0 idle, 2 queued, the oldest waiting >= 50 ms"
}

@test "pool-submit: file-server with a full queue answers ERR BUSY instead of queueing without bound" {
    full_queue_answers_busy 1000 30
}

@test "pool-submit: 30 clients at once on 3 threads each get their file" {
    server_start "${SERVER[@]}" -p 0 -w 3
    fetch_together 30 30 f1.bin f4096.bin f65536.bin || server_gone "some of 30 clients did not get their file"
    stop_within 5
}
