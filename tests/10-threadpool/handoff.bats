#!/usr/bin/env bats
# Exercise 10-threadpool/handoff: finished jobs go back to the loop thread
# (a done list and an eventfd wake-up). Runs against $IMPL (solutions by
# default; `make ex` uses exercises).

load ../helpers/common
load files
load exercise

setup_file() { pool_exercise_setup_file handoff 60; }

setup() { pool_exercise_setup handoff; }

@test "handoff: every job's done callback runs exactly once, on the loop thread" {
    pool_check_ok "every job's done callback runs exactly once" \
        "every done callback runs on the loop thread"
}

@test "handoff: jobs that finished while the loop was busy all come back from one pool_drain()" {
    pool_check_ok "8 jobs that finished while the loop was busy come back in one pool_drain()"
}

@test "handoff: after a drain, the wake fd is quiet: the loop can sleep" {
    pool_check_ok "once everything is drained, pool_fd() is not readable"
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

@test "handoff: 30 clients at once each get their file" {
    server_start "${SERVER[@]}" -p 0 -w 3
    fetch_together 30 60 f1.bin f4096.bin f65536.bin || server_gone "some of 30 clients did not get their file"
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
    server_start "${SERVER[@]}" -p 0 -w 1 -s 300
    fetch_cmp f1.bin
    for ((i = 0; i < 3; i++)); do
        timeout --foreground 30 "$FILE_CLIENT" -p "$PORT" -o /dev/null slow.bin 2>/dev/null &
        clients+=("$!")
    done
    wait_stat queued 2
    stop_within 5
    wait "${clients[@]}" || true # they fail: the server went away mid-file
}
