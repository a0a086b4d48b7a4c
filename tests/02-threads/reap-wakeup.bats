#!/usr/bin/env bats
# Exercise 02-threads/reap-wakeup (fix): the chapter's echo-threads with a
# planted bug. Runs against $IMPL (solutions: the chapter's own code;
# `make ex` uses the learner's copy).

load ../helpers/common

setup() {
    SERVER_BIN="$(impl_bin reap-wakeup echo-threads)"
}

# vm_kb PID: the process's address space (VmSize) in KiB.
vm_kb() { awk '/^VmSize:/ { print $2 }' "/proc/$1/status"; }

@test "reap-wakeup: finished workers are joined as they go: 50 clients in turn leave no thread stacks behind" {
    local i vm0 vm1 out
    server_start "$SERVER_BIN" -p 0 -s 1024
    out=$(run_client -p "$PORT" -t 10 warm-up) || server_gone "echo-client failed (status $?)"
    sleep 0.2
    vm0=$(vm_kb "$SERVER_PID")
    for ((i = 0; i < 50; i++)); do
        out=$(run_client -p "$PORT" -t 10 "client $i") || server_gone "client $i: echo-client failed (status $?)"
        [ "$out" = "client $i" ] || fail "client $i: expected 'client $i', got '$out'"
    done
    # the last worker may still be on its way out: give the main thread a moment
    for ((i = 0; i < 20; i++)); do
        vm1=$(vm_kb "$SERVER_PID")
        [ $((vm1 - vm0)) -lt $((16 * 1024)) ] && break
        sleep 0.1
    done
    echo "# VmSize ${vm0} kB -> ${vm1} kB after 50 clients (1 MiB stacks)" >&3
    [ $((vm1 - vm0)) -lt $((16 * 1024)) ] ||
        fail "the address space grew by $((vm1 - vm0)) kB over 50 clients that came and went: their thread stacks were never released (joined)"
    stop_within 5
}

@test "reap-wakeup: 10 clients at once each get their bytes back" {
    server_start "$SERVER_BIN" -p 0
    clients_at_once 10 '500 + i * 20000' -t 20 || server_gone "some of 10 clients at once did not get their bytes back"
    stop_within 5
}

@test "reap-wakeup: SIGTERM with clients connected exits 0 within 5 s" {
    local a b
    server_start "$SERVER_BIN" -p 0
    conn_open a
    conn_open b
    expect_echo "$a" one
    expect_echo "$b" two
    stop_within 5
    exec {a}>&- {b}>&-
}
