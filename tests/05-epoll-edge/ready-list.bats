#!/usr/bin/env bats
# Exercise 05-epoll-edge/ready-list: the loop's own FIFO of watches with work
# left that no edge will announce. Runs against $IMPL (solutions by default:
# the chapter's own loop.c; `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite
load ../04-epoll/event-loop

setup() {
    SERVER_CMD=("$(impl_bin ready-list echo-epoll-et)")
    gate_setup
}

teardown() {
    gate_teardown
}

# traced_pause, traced_resume: server_pause and server_resume for a server
# started under strace, whose pid ($SERVER_PID) is strace's: the traced
# program is the one to stop (traced_child finds it).
traced_pause() {
    local strace_pid=$SERVER_PID
    traced_child
    SERVER_PID=$TRACED_PID
    server_pause
    SERVER_PID=$strace_pid
}
traced_resume() {
    kill -CONT "$TRACED_PID"
}

@test "ready-list: messages come back, again and again on the same connection" {
    GATE=1
    suite_start
    echoes_on_one_conn 5
    suite_stop_clean
}

# The order of a turn, seen under strace. With -R 1 every read ends a
# connection's turn, and 96 KiB that arrive in one edge need three reads
# (64 KiB, 32 KiB, EAGAIN): the connection is requeued twice. A requeued
# watch waits for the next turn, and a turn begins with epoll_wait(): with
# work on the list it only looks (timeout 0), collecting what arrived
# meanwhile, so a client that keeps sending cannot keep the loop from the
# others. The reference makes one epoll_wait(..., 0) per requeue, run after
# run. A loop that serves what is pushed back in the same turn makes none.
@test "ready-list: -R 1: each requeued connection waits for the next turn, which begins with epoll_wait(..., 0) (strace)" {
    local trace="$BATS_TEST_TMPDIR/waits.log" fd in="$BATS_TEST_TMPDIR/msg" got requeued looks
    require_strace
    # LeakSanitizer cannot work under ptrace: no leak check in a sanitizer build here
    ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" server_start strace -qq -e trace=epoll_wait -o "$trace" "${SERVER_CMD[@]}" -R 1 -p 0
    conn_open fd
    expect_echo "$fd" "hello"
    payload "$in" 98304
    traced_pause
    cat "$in" >&"$fd"
    wait_server_queued 98304
    traced_resume
    timeout 5 head -c 98304 <&"$fd" >"$in.echoed" || true
    got=$(stat -c %s "$in.echoed")
    exec {fd}>&-
    traced_stop
    [ "$got" -eq 98304 ] || server_gone "$got of 98304 bytes came back within 5 s: the budget's leftover was not remembered"
    requeued=$(sed -n 's/.*; \([0-9]*\) turns ended at the read budget.*/\1/p' "$SERVER_OUT")
    looks=$(grep -c 'epoll_wait(.*, 0) *= ' "$trace" || true)
    echo "# $requeued requeues, $looks epoll_wait() calls with timeout 0" >&3
    [ "${requeued:-0}" -ge 2 ] || fail "expected at least 2 turns ended by the budget (-R 1, 96 KiB), the server said: $(cat "$SERVER_OUT")"
    [ "$looks" -ge "$requeued" ] ||
        fail "$requeued connections were requeued but only $looks turns began with epoll_wait(..., 0): what was pushed back was served again in the same turn, before the loop looked for new events. The waits:
$(grep -n 'epoll_wait' "$trace" | tail -n 12 | cut -c 1-100)"
}

# One look per turn, not one per watch. 20 connections, each served once (so
# each is accepted and registered), then the server is paused, each client
# sends a line, and the server resumes: its first epoll_wait() returns 20
# events, and one turn serves all 20. Each line takes one read and one
# write, no budget runs out, and the list is empty after that turn: no
# epoll_wait() with a timeout of 0 follows (the reference: 0, run after run;
# later waits, for the edges of the echoes' ACKs, sleep with -1). A loop
# that serves one watch per turn looks again, with a timeout of 0, for each
# of the 19 others.
@test "ready-list: 20 connections ready at once are served in one turn, not one per epoll_wait() (strace)" {
    local trace="$BATS_TEST_TMPDIR/waits.log" fds=() fd i n=20 looks
    require_strace
    # LeakSanitizer cannot work under ptrace: no leak check in a sanitizer build here
    ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" server_start strace -qq -e trace=epoll_wait -o "$trace" "${SERVER_CMD[@]}" -p 0
    for ((i = 0; i < n; i++)); do
        conn_open fd
        fds+=("$fd")
        expect_echo "$fd" "client $i"
    done
    traced_pause
    local line bytes=0
    for ((i = 0; i < n; i++)); do
        line="again $i"
        printf '%s\n' "$line" >&"${fds[$i]}"
        bytes=$((bytes + ${#line} + 1))
    done
    # every byte in the server's sockets: one edge each, all before the resume
    wait_server_queued "$bytes"
    traced_resume
    for ((i = 0; i < n; i++)); do
        expect_line "${fds[$i]}" "again $i" "after the resume"
    done
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    traced_stop
    looks=$(sed -n '/SIGCONT/,$p' "$trace" | grep -c 'epoll_wait(.*, 0) *= ' || true)
    echo "# from the resume to SIGTERM: $looks epoll_wait(..., 0) calls for $n connections ready at once (at most 2)" >&3
    [ "$looks" -le 2 ] ||
        fail "$looks turns began with epoll_wait(..., 0) to serve $n connections that were ready at once, and had no budget to spend: a turn must serve every watch on the list, not one. After the resume:
$(sed -n '/SIGCONT/,$p' "$trace" | head -n 8 | cut -c 1-100)"
}

@test "ready-list: -R 1: 96 KiB that need two reads, sent while the server is paused, come back whole (the budget's leftover is remembered)" {
    GATE=1
    SERVER_CMD+=(-R 1)
    suite_drains_message_sent_while_paused 98304
}

@test "ready-list: idle with a client connected, the server does not wake at all (the list empties, and epoll_wait() sleeps)" {
    # The reference: 0 wake-ups in 2 s, run after run; one allowed for luck.
    idle_wakeups_at_most 1
}

@test "ready-list: 100 clients that connect while the server is paused are all served within 5 s (the listener is requeued after a batch)" {
    GATE=1
    burst_while_paused 100
}

@test "ready-list: while one client floods, a ping-pong client's slowest echo stays under 200 ms" {
    suite_fair_under_flood 200
}

@test "ready-list: every byte survives short reads and writes and EINTR from the faults shim, within 10 s" {
    faults_echo_within 10
    faults_injected short_reads short_writes eintr
}
