#!/usr/bin/env bats
# Exercise 06-kqueue/idle-timer (fix): an idle timeout restarted by activity.
# Runs against $IMPL (solutions by default: the chapter's own echo-kqueue.c;
# `make ex` uses exercises, where the bug is planted).

load ../helpers/common
load ../helpers/echo_suite
load idle

setup() {
    SERVER_CMD=("$(impl_bin idle-timer echo-kqueue)")
}

@test "idle-timer: a message comes back" {
    echo_with_timer
}

# Under the faults shim (short reads and writes, EINTR, EAGAIN): a line may
# take several reads, and a read may fail with EAGAIN; every read that
# brings bytes counts as activity.
@test "idle-timer -t 1: an active client (a line every 0.3 s for 2.4 s) is not closed, even under short reads and EAGAIN" {
    local c i
    # shellcheck disable=SC2046 # one word per VAR=VALUE
    server_start env $(faults_env FAULTS_SHORT_READ=50 FAULTS_SHORT_WRITE=50 FAULTS_EINTR=10 FAULTS_EAGAIN=10) "${SERVER_CMD[@]}" -p 0 -t 1
    conn_open c
    for ((i = 0; i < 8; i++)); do
        sleep 0.3
        expect_echo "$c" "still here, message number $i"
    done
    exec {c}>&-
    suite_stop_clean
    faults_injected short_reads eagain
}

# Each connection has its own timer: one client's activity must not keep
# another, silent one alive.
@test "idle-timer -t 1: an idle client is closed while another one stays active" {
    idle_closed_active_kept 8 2
    echo "# the idle client saw EOF $IDLE_MS ms after the active one's last message" >&3
    suite_stop_clean
}

# The reference closes it 1.0 to 1.1 s after the message (the timer counts
# in whole seconds, from the read).
@test "idle-timer -t 1: an idle client is closed about a second after its last message" {
    local c ms
    server_start "${SERVER_CMD[@]}" -p 0 -t 1
    conn_open c
    sleep 0.5
    expect_echo "$c" "then silence"
    ms=$(wait_eof "$c" 4) || server_gone "the idle client was not closed within 4 s (-t 1)"
    echo "# closed $ms ms after its last message" >&3
    [ "$ms" -ge 700 ] && [ "$ms" -le 2000 ] ||
        fail "closed $ms ms after its last message: expected about 1000 (between 700 and 2000)"
    grep -q 'idle for 1 s' "$SERVER_ERR" || fail "expected 'closing fd=N: idle for 1 s' on stderr, got: $(cat "$SERVER_ERR")"
    exec {c}>&-
    suite_stop_clean
}
