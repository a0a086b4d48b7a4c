# SPDX-License-Identifier: MIT
# tests/02-threads/pool.bash: scenarios of echo-pool's starvation and
# shutdown that chapter.bats checks on the chapter's echo-pool, and the
# exercise files (worker-pool, pool-stop) on theirs; and what the exercise
# files of both servers share.
#
#   load ../helpers/common
#   load pool
#
#   pool_third_client_waits BIN [LINE]   2 workers, 2 clients: the third waits
#   pool_served_in_turn BIN QUIET WHO    1 worker, 1 slot: 4 clients served in turn
#   pool_stop_when_full BIN              2 workers busy, 1 slot taken, SIGTERM: exit 0
#   pool_echo FD LINE                    send LINE, require it back within $POOL_SECS
#   pool_line FD LINE WHEN               a LINE sent earlier comes back within $POOL_SECS
#   pool_stop_within SECONDS             SIGTERM: exit 0 within SECONDS, or fail then
#   hold_idle N                          one echo-load holds N idle connections ($LOAD_PID)
#
# Each starts the server as "${POOL_PREFIX[@]}" BIN ...: a test sets
# POOL_PREFIX (say, to env(1) and the faults shim's settings) to run the
# same scenario under the shim. An echo on loopback comes back within a
# millisecond; POOL_SECS (10 unless set) is how long a scenario waits for one
# before it fails: the exercises' files set it lower, so that a wrong answer
# fails in seconds, not after every wait's 10 s.

# pool_echo FD LINE: send one line, require the same line back within
# $POOL_SECS seconds.
pool_echo() {
    local line=""
    (printf '%s\n' "$2" >&"$1") 2>/dev/null # a subshell: SIGPIPE must not kill the test
    read -r -t "${POOL_SECS:-10}" line <&"$1" || true
    [ "$line" = "$2" ] || server_gone "expected the echo '$2' within ${POOL_SECS:-10} s, got '$line'"
}

# pool_line FD LINE WHEN: the LINE, sent earlier, comes back within $POOL_SECS seconds.
pool_line() {
    local line=""
    read -r -t "${POOL_SECS:-10}" line <&"$1" || true
    [ "$line" = "$2" ] || server_gone "expected the echo '$2' $3 within ${POOL_SECS:-10} s, got '$line'"
}

# pool_stop_within SECONDS: SIGTERM, then exit 0 within SECONDS (times
# san_slowdown); a server still running then is killed and the test fails
# at once (stop_within would wait 10 s more).
pool_stop_within() {
    local i t0 ms secs=$(($1 * $(san_slowdown)))
    t0=$(date +%s%N)
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for ((i = 0; i < secs * 20; i++)); do
        server_exited && break
        sleep 0.05
    done
    ms=$((($(date +%s%N) - t0) / 1000000))
    if ! server_exited; then
        kill -9 "$SERVER_PID" 2>/dev/null
        fail "expected an exit within $secs s of SIGTERM; still running after $ms ms, killed
--- stderr ---
$(cat "$SERVER_ERR")"
    fi
    stop_within "$secs"
}

# hold_idle N: one echo-load process holds N connections to $PORT, each
# checked with one echo, then idle (their workers asleep in read()); its
# pid is LOAD_PID. Killing it makes the N clients leave together.
hold_idle() {
    local i
    rm -f "$BATS_TEST_TMPDIR/load.out" # an earlier one's line must not count
    timeout --foreground 60 "$(tool_bin echo-load)" -p "$PORT" -c "$1" --idle \
        >"$BATS_TEST_TMPDIR/load.out" 2>&1 3>&- &
    LOAD_PID=$!
    _course_pids+=("$LOAD_PID")
    for ((i = 0; i < 200; i++)); do
        grep -qs "^holding $1 connections" "$BATS_TEST_TMPDIR/load.out" && return 0
        kill -0 "$LOAD_PID" 2>/dev/null || break
        sleep 0.05
    done
    fail "echo-load did not hold $1 connections within 10 s: $(cat "$BATS_TEST_TMPDIR/load.out")"
}

# pool_third_client_waits BIN [LINE]: echo-pool BIN with 2 workers serves
# clients a and b; a third, c, connects (the kernel accepts it) and sends a
# line, which no worker reads until a leaves: then it comes back. With
# LINE, b is still served too: LINE comes back on it. SIGTERM then exits 0
# within 5 s.
pool_third_client_waits() {
    local a b c
    server_start "${POOL_PREFIX[@]}" "$1" -p 0 -w 2
    conn_open a
    conn_open b
    pool_echo "$a" one
    pool_echo "$b" two
    # The handshake completes (the kernel accepts), yet no worker reads.
    conn_open c
    printf 'three\n' >&"$c"
    expect_no_echo "$c" "the third client"
    exec {a}>&-
    pool_line "$c" three "on the third client once the first left"
    [ -z "${2:-}" ] || pool_echo "$b" "$2"
    pool_stop_within 5
    exec {b}>&- {c}>&-
}

# pool_served_in_turn BIN QUIET WHO: echo-pool BIN with one worker and one
# queue slot (-w 1 -q 1): client a is served, b is queued, the main thread
# sleeps in push with c, and d waits in the kernel's accept backlog; each
# sends its own letter. Client QUIET (b, c or d; WHO names it in a failure)
# gets no echo yet. Then each leaves in turn and the next one gets its
# letter back; SIGTERM exits 0 within 5 s.
pool_served_in_turn() {
    local a b c d
    server_start "${POOL_PREFIX[@]}" "$1" -p 0 -w 1 -q 1
    conn_open a
    pool_echo "$a" a
    conn_open b
    conn_open c
    conn_open d
    printf 'b\n' >&"$b"
    printf 'c\n' >&"$c"
    printf 'd\n' >&"$d"
    expect_no_echo "${!2}" "$3"
    exec {a}>&-
    pool_line "$b" b "once a left"
    exec {b}>&-
    pool_line "$c" c "once b left"
    exec {c}>&-
    pool_line "$d" d "once c left"
    pool_stop_within 5
    exec {d}>&-
}

# pool_stop_when_full BIN: echo-pool BIN with 2 workers and 1 queue slot,
# and 5 clients, their fds added to the test's fds array: clients 0 and 1
# are served, 2 is queued, the main thread waits in push with 3, and 4 waits
# in the kernel's backlog. SIGTERM then exits 0 within 5 s. The test closes
# the fds.
pool_stop_when_full() {
    local i fd
    server_start "${POOL_PREFIX[@]}" "$1" -p 0 -w 2 -q 1
    for ((i = 0; i < 5; i++)); do
        conn_open fd
        fds+=("$fd")
    done
    pool_echo "${fds[0]}" first
    pool_echo "${fds[1]}" second
    pool_stop_within 5
}
