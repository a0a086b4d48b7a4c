#!/usr/bin/env bats
# Exercise 10-threadpool/pool-shutdown: pool_shutdown() stops the pool.
# POOL_CANCEL takes the jobs no thread has started; POOL_FINISH lets them
# run. Either way every thread is woken and joined (a running job cannot be
# interrupted, only waited for), and every job's done callback runs once,
# on the calling (loop) thread: -ECANCELED for the cancelled ones. Runs
# against $IMPL (solutions by default; `make ex` uses exercises).

load ../helpers/common
load files
load exercise

setup_file() { pool_exercise_setup_file pool-shutdown 30; }

setup() { pool_exercise_setup pool-shutdown; }

@test "pool-shutdown: POOL_CANCEL lets the running job finish and cancels the queued one, on the loop thread" {
    pool_check_ok "POOL_CANCEL: the running job finishes, the queued one gets -ECANCELED, on the loop thread"
}

@test "pool-shutdown: POOL_FINISH runs every queued job before it returns, and every callback once" {
    pool_check_ok "POOL_FINISH: every queued job runs before shutdown returns" \
        "every job's done callback runs exactly once"
}

@test "pool-shutdown: SIGTERM with one slow read running and 5 queued: the queued are cancelled, exit 0 soon" {
    local i clients=() t0 ms
    server_start "${SERVER[@]}" -p 0 -w 1 -s 1000
    for ((i = 0; i < 6; i++)); do
        timeout --foreground 30 "$FILE_CLIENT" -p "$PORT" -o /dev/null slow.bin 2>/dev/null &
        clients+=("$!")
    done
    wait_stat queued 5
    t0=$(date +%s%N)
    stop_within 10
    ms=$((($(date +%s%N) - t0) / 1000000))
    wait "${clients[@]}" || true # they fail: the server went away mid-file
    # the running read takes up to 1 s; the 5 queued would take 5 s more
    [ "$ms" -lt 4000 ] || fail "the server took $ms ms to stop: the 5 queued reads ran instead of being cancelled"
}

@test "pool-shutdown: an idle file-server stops at once after serving, exit 0" {
    server_start "${SERVER[@]}" -p 0 -w 4
    fetch_cmp f4096.bin f65536.bin
    stop_within 5
}
