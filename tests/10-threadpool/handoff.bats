#!/usr/bin/env bats
# Exercise 10-threadpool/handoff: finished jobs go back to the loop thread
# (a done list and an eventfd wake-up). Runs against $IMPL (solutions by
# default; `make ex` uses exercises).
#
# pool-check runs once, in setup_file; the tests read its verdicts. It stops
# at the first broken promise, so a test whose check did not run fails too.

load ../helpers/common
load files
load exercise

setup_file() { pool_exercise_setup_file handoff 20; }

setup() { pool_exercise_setup handoff; }

@test "handoff: every job's done callback runs exactly once, on the loop thread" {
    pool_check_ok "every job's done callback runs exactly once" \
        "every done callback runs on the loop thread"
}

@test "handoff: 8 jobs that finished together wrote one wake-up to the eventfd, not one each" {
    pool_check_ok "8 jobs that finished together wrote one wake-up, not one each"
}

@test "handoff: jobs that finished while the loop was busy all come back from one pool_drain()" {
    pool_check_ok "8 jobs that finished while the loop was busy come back in one pool_drain()"
}

@test "handoff: after a drain, the wake fd is quiet: the loop can sleep" {
    pool_check_ok "once everything is drained, pool_fd() is not readable"
}

# pool-check's hook finishes a job at the moment pool_drain() clears the
# wake fd, 1000 times over: a drain that took the list before it cleared
# swallows that job's wake-up, and the loop stalls.
@test "handoff: a job that finishes while the loop clears its wake fd is not lost (forced, 1000 rounds)" {
    pool_check_ok "pool_drain() clears the wake fd with handoff__clear()" \
        "a job that finishes while pool_drain() clears the wake fd is not lost (1000 rounds)"
}

@test "handoff: a done callback can submit more work; shutdown cancels what never started" {
    pool_check_ok "a done callback can submit the next job (100 in a chain)" \
        "POOL_CANCEL: the running job finishes, the queued one gets -ECANCELED, on the loop thread" \
        "POOL_FINISH: every queued job runs before shutdown returns"
}

@test "handoff: file-server sends a small file and a 5 MiB binary file intact" {
    server_start "${SERVER[@]}" -p 0
    fetch_cmp f4097.bin big.bin f0.bin
    stop_within 5
}

@test "handoff: slow reads finishing close together all reach their clients" {
    server_start "${SERVER[@]}" -p 0 -w 4 -s 200
    fetch_together 8 60 slow.bin || server_gone "some of 8 slow reads never reached their client"
    stop_within 5
}

@test "handoff: an idle file-server does not spin after serving" {
    server_start "${SERVER[@]}" -p 0
    fetch_cmp f4096.bin f1.bin
    idle_for_2s "the wake fd stays readable?"
    stop_within 5
}

@test "handoff: SIGTERM with reads in flight exits 0" {
    local i clients=()
    server_start "${SERVER[@]}" -p 0 -w 1 -s $((300 * $(san_slowdown)))
    fetch_cmp f1.bin
    for ((i = 0; i < 3; i++)); do
        timeout --foreground 30 "$FILE_CLIENT" -p "$PORT" -o /dev/null slow.bin 2>/dev/null &
        clients+=("$!")
    done
    wait_stat queued 2
    # the read that runs is never cut short: 5 s beyond it (under valgrind
    # it alone takes 6 s)
    stop_within $((5 + 300 * $(san_slowdown) / 1000))
    wait "${clients[@]}" || true # they fail: the server went away mid-file
}

@test "handoff: file-server frees every request it served (valgrind)" {
    leak_checked
    server_start "${VG[@]}" "${SERVER[@]}" -p 0 -w 2
    fetch_cmp f4097.bin f0.bin
    stop_within 20
}
