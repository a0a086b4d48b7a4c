#!/usr/bin/env bats
# Exercise 10-threadpool/done-on-worker: a pool thread runs a job's work;
# the job's done callback must run on the loop thread, which owns the
# connections (pool.c hands the job over through handoff.c). Runs against
# $IMPL (solutions by default; `make ex` uses exercises).

load ../helpers/common
load files
load exercise

setup_file() { pool_exercise_setup_file done-on-worker 20; }

setup() { pool_exercise_setup done-on-worker; }

@test "done-on-worker: every done callback runs on the loop thread, exactly once" {
    pool_check_ok "every job's done callback runs exactly once" \
        "every done callback runs on the loop thread"
}

@test "done-on-worker: shutdown runs the last callbacks on the loop thread too" {
    pool_check_ok "POOL_CANCEL: the running job finishes, the queued one gets -ECANCELED, on the loop thread" \
        "POOL_FINISH: every queued job runs before shutdown returns"
}

@test "done-on-worker: 8 slow reads that finish together all reach their clients intact" {
    server_start "${SERVER[@]}" -p 0 -w 4 -s 200
    fetch_together 8 30 slow.bin || server_gone "some of 8 slow reads never reached their client"
    stop_within 5
}
