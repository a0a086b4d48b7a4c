#!/usr/bin/env bats
# Chapter 02: a thread per connection (echo-threads), what it costs
# (conn-cost), and a fixed pool of workers that starves (echo-pool).

bats_require_minimum_version 1.5.0

load ../helpers/common
load ../helpers/echo_suite
load pool

threads_bin() { chapter_bin echo-threads; }
pool_bin() { chapter_bin echo-pool; }

# threads_of PID: the Threads line of /proc/PID/status.
threads_of() {
    awk '$1 == "Threads:" { print $2 }' "/proc/$1/status"
}

# stop_with_stuck_writer SERVER [ARGS]: a client sends 8 MiB and never reads,
# so the server echoes until our receive buffer and its send buffer are full
# and its worker sleeps in write(). SIGTERM must still stop it, exit 0, in 5 s.
stop_with_stuck_writer() {
    local fd writer i q=0
    server_start "$@" -p 0
    payload "$BATS_TEST_TMPDIR/big" $((8 * 1024 * 1024))
    conn_open fd
    timeout --foreground 60 cat "$BATS_TEST_TMPDIR/big" >&"$fd" 2>/dev/null 3>&- &
    writer=$!
    # Bytes in the server's send queue that it cannot send: the worker is stuck.
    for ((i = 0; i < 100; i++)); do
        q=$(ss -Htn state established "( sport = :$PORT )" 2>/dev/null | awk '{ s += $2 } END { print s + 0 }')
        [ "$q" -gt 0 ] && break
        sleep 0.1
    done
    [ "$q" -gt 0 ] || echo "note: did not see the server's send queue fill (ss: $(command -v ss || echo missing))" >&2
    stop_within 5
    kill "$writer" 2>/dev/null || true
    wait "$writer" 2>/dev/null || true
    exec {fd}>&-
}

# The shared echo suite's cases (binary data, 16 MiB, 200 clients, resets,
# half-close, never-reading client, fd limit, fd growth, idle connections,
# SIGTERM, faults) run from suite-echo-threads.bats, listed in
# common/servers.txt by make suite. What follows is echo-threads's own.

# --- echo-threads: what a thread per connection buys ------------------------

@test "echo-threads serves 200 simultaneous idle connections, then echoes on every one" {
    local fds=() fd i n
    server_start "$(threads_bin)" -p 0
    for ((i = 0; i < 200; i++)); do
        conn_open fd
        fds+=("$fd")
    done
    # Every client idle at once, and none of them starves another.
    for ((i = 0; i < 200; i++)); do
        expect_echo "${fds[$i]}" "client $i"
    done
    n=$(threads_of "$SERVER_PID")
    [ "$n" -ge 201 ] || fail "expected at least 201 threads (200 workers + main), got $n"
    # The first one is still served after the last.
    expect_echo "${fds[0]}" "client 0 again"
    stop_within 5
    for fd in "${fds[@]}"; do exec {fd}>&-; done
}

@test "echo-threads: a client's thread ends when it leaves" {
    local a b before after i
    server_start "$(threads_bin)" -p 0
    conn_open a
    conn_open b
    expect_echo "$a" one
    expect_echo "$b" two
    before=$(threads_of "$SERVER_PID")
    exec {a}>&-
    exec {b}>&-
    # Joined by the main thread as soon as it finishes: no pile of dead threads.
    for ((i = 0; i < 100; i++)); do
        after=$(threads_of "$SERVER_PID")
        [ "$after" -le $((before - 2)) ] && break
        sleep 0.1
    done
    [ "$after" -le $((before - 2)) ] ||
        fail "expected the thread count to drop by 2 from $before after both clients left, got $after"
    stop_within 5
}

@test "echo-threads: SIGTERM with idle clients exits 0 within 5 s" {
    local fds=() fd i
    server_start "$(threads_bin)" -p 0
    for ((i = 0; i < 20; i++)); do
        conn_open fd
        fds+=("$fd")
    done
    expect_echo "${fds[19]}" "last"
    stop_within 5
    for fd in "${fds[@]}"; do exec {fd}>&-; done
}

@test "echo-threads: a client that never reads does not block shutdown" {
    stop_with_stuck_writer "$(threads_bin)"
}

@test "echo-threads: bad -s values exit 2 with usage" {
    local bin v
    bin=$(threads_bin)
    for v in 0 1 abc -5 99999999; do
        run -2 "$bin" -p 0 -s "$v"
        assert_output --partial "usage:"
    done
    run -2 "$bin" -p 0 -s
    assert_output --partial "usage:"
}

@test "echo-threads: a stack of -s 64 KiB still echoes" {
    server_start "$(threads_bin)" -p 0 -s 64
    payload "$BATS_TEST_TMPDIR/p" 100000
    suite_echo_file "$BATS_TEST_TMPDIR/p"
    stop_within 5
}

# --- conn-cost -------------------------------------------------------------

# conn_cost_row N: the table row for N connections from $output.
conn_cost_row() {
    awk -v n="$1" '$1 == n' <<<"$output"
}

@test "conn-cost at 200 connections: 200+ threads and some resident memory per connection" {
    local row threads rss
    run timeout 120 "$(chapter_bin conn-cost)" -n 200
    assert_success
    row=$(conn_cost_row 200)
    [ -n "$row" ] || fail "no row for 200 connections in:
$output"
    threads=$(awk '{ print $2 }' <<<"$row")
    rss=$(awk '{ print $5 }' <<<"$row")
    [ "$threads" -ge 200 ] || fail "expected at least 200 server threads, got $threads"
    # Order of magnitude only: more than nothing, less than a default stack.
    awk -v r="$rss" 'BEGIN { exit !(r > 0 && r < 8192) }' ||
        fail "expected 0 < RSS per connection < 8192 KiB, got $rss"
    assert_output --partial "exit 0"
}

@test "conn-cost: a default stack reserves megabytes of address space, -s 64 far less" {
    local big small
    run timeout 120 "$(chapter_bin conn-cost)" -n 100
    assert_success
    big=$(conn_cost_row 100 | awk '{ print $6 }')
    run timeout 120 "$(chapter_bin conn-cost)" -n 100 -s 64
    assert_success
    small=$(conn_cost_row 100 | awk '{ print $6 }')
    awk -v b="$big" -v s="$small" 'BEGIN { exit !(b > 1024 && s < b / 4) }' ||
        fail "expected VmSize per connection > 1024 KiB by default and under a quarter of it with -s 64; got $big and $small"
}

@test "conn-cost: more connections than the hard descriptor limit is refused with how to raise it" {
    # ulimit -n sets the soft and the hard limit together.
    run bash -c "ulimit -n 100 && exec '$(chapter_bin conn-cost)' -n 1000"
    assert_failure 1
    assert_output --partial "ulimit -Hn"
}

@test "conn-cost: bad arguments exit 2 with usage" {
    local bin
    bin=$(chapter_bin conn-cost)
    run -2 "$bin" -n 0
    assert_output --partial "usage:"
    run -2 "$bin" -n 500,100
    assert_output --partial "usage:"
    run -2 "$bin" -s x
    assert_output --partial "usage:"
    run -2 "$bin" extra
    assert_output --partial "usage:"
}

# The shared echo suite's cases (binary data, 16 MiB, 200 clients, resets,
# half-close, never-reading client, fd limit, fd growth, idle connections,
# SIGTERM, faults) run from suite-echo-pool.bats, listed in
# common/servers.txt by make suite. What follows is echo-pool's own.

# --- echo-pool: a fixed pool starves ---------------------------------------

@test "with a pool of 2, the third client waits until one of the first two leaves" {
    pool_third_client_waits "$(pool_bin)" "two again"
}

@test "echo-pool: with the queue full, later clients wait in the backlog and are served in turn" {
    pool_served_in_turn "$(pool_bin)" d "the fourth client"
}

@test "echo-pool: SIGTERM with busy workers, a full queue and a waiting acceptor exits 0 within 5 s" {
    local fds=() fd
    pool_stop_when_full "$(pool_bin)"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
}

@test "echo-pool: a client that never reads does not block shutdown" {
    stop_with_stuck_writer "$(pool_bin)"
}

@test "echo-pool: SIGTERM with idle workers and no clients exits 0 within 5 s" {
    server_start "$(pool_bin)" -p 0 -w 8
    stop_within 5
}

@test "echo-pool: bad -w and -q values exit 2 with usage" {
    local bin v
    bin=$(pool_bin)
    for v in 0 -1 abc 5000; do
        run -2 "$bin" -p 0 -w "$v"
        assert_output --partial "usage:"
    done
    run -2 "$bin" -p 0 -q 0
    assert_output --partial "usage:"
    run -2 "$bin" -p 0 -w
    assert_output --partial "usage:"
}
