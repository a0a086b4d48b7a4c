#!/usr/bin/env bats
# Chapter 10: a thread pool for blocking work; file-server and the demonstrations.

load ../helpers/common
load files

setup_file() {
    export ROOT="$BATS_FILE_TMPDIR/root"
    make_root "$ROOT"
}

setup() {
    SERVER=("$(chapter_bin file-server)" -r "$ROOT")
}

# ---- file-server: correct bytes ------------------------------------------------

@test "file-server: files of 0, 1, 4095, 4096, 4097, 65536 bytes and 5 MiB come back byte for byte" {
    server_start "${SERVER[@]}" -p 0
    fetch_cmp f0.bin f1.bin f4095.bin f4096.bin f4097.bin f65536.bin big.bin sub/deeper/hello.txt
    stop_within 5
}

@test "file-server: several requests on one connection get their replies in order" {
    local out="$BATS_TEST_TMPDIR/all"
    server_start "${SERVER[@]}" -p 0
    timeout 60 "$FILE_CLIENT" -p "$PORT" -o "$out" f4097.bin f0.bin big.bin f1.bin f4095.bin ||
        server_gone "file-client failed (status $?)"
    cat "$ROOT"/{f4097,f0,big,f1,f4095}.bin >"$BATS_TEST_TMPDIR/expected"
    cmp -s "$BATS_TEST_TMPDIR/expected" "$out" ||
        fail "the five replies differ from the five files in order: $(cmp "$BATS_TEST_TMPDIR/expected" "$out" 2>&1)"
    stop_within 5
}

@test "file-server: 50 clients at once each get their file intact" {
    local i pids=() files=(f0.bin f1.bin f4095.bin f4096.bin f4097.bin f65536.bin big.bin) f failed=0
    server_start "${SERVER[@]}" -p 0
    for ((i = 0; i < 50; i++)); do
        f=${files[$((i % ${#files[@]}))]}
        timeout --foreground 60 "$FILE_CLIENT" -p "$PORT" -o "$BATS_TEST_TMPDIR/c$i" "$f" &
        pids+=($!)
    done
    for ((i = 0; i < 50; i++)); do
        f=${files[$((i % ${#files[@]}))]}
        wait "${pids[$i]}" || { echo "client $i ($f): status $?" >&2; failed=1; }
        cmp -s "$ROOT/$f" "$BATS_TEST_TMPDIR/c$i" || { echo "client $i: $f differs" >&2; failed=1; }
    done
    [ "$failed" -eq 0 ] || server_gone "some of 50 concurrent clients did not get their file"
    [ "$(stat_of completed)" -eq 50 ] || fail "expected 50 completed jobs, STATS says $(stat_of completed)"
    stop_within 5
}

@test "file-server: every byte arrives under short writes, EINTR and EAGAIN on its sockets" {
    server_start env $(faults_env FAULTS_SHORT_WRITE=50 FAULTS_SHORT_READ=50 FAULTS_EINTR=20 FAULTS_EAGAIN=20 FAULTS_SEED=10) "${SERVER[@]}" -p 0
    fetch_cmp big.bin f4097.bin f1.bin
    stop_within 5
    [ "$(faults_count short_writes)" -gt 0 ] || fail "the faults shim cut no write short: the test proved nothing"
}

# ---- file-server: what it refuses ------------------------------------------------

@test "file-server: paths that leave the root get ERR FORBIDDEN: '..', absolute, a symlink pointing out" {
    local p
    server_start "${SERVER[@]}" -p 0
    for p in ../secret.txt sub/../../secret.txt /etc/passwd link-outside link-absolute; do
        fetch "$p"
        [ "$status" -eq 1 ] || fail "$p: expected exit 1 (ERR reply), got $status: $output"
        assert_output --regexp "^$p: ERR FORBIDDEN "
        refute_output --partial "TOP SECRET" # the file outside never comes back
    done
    # a refused path does not end the connection: the next request is served
    fetch ../secret.txt sub/deeper/hello.txt
    assert_output --partial "hello from a subfolder"
    stop_within 5
}

@test "file-server: a symlink that stays inside the root, and '..' that stays inside, are served" {
    server_start "${SERVER[@]}" -p 0
    fetch link-inside
    assert_success
    assert_output "hello from a subfolder"
    fetch sub/deeper/../deeper/hello.txt
    assert_success
    assert_output "hello from a subfolder"
    stop_within 5
}

@test "file-server: a missing file is ERR NOTFOUND; a directory and a FIFO are ERR NOTFILE, and the FIFO blocks no thread" {
    server_start "${SERVER[@]}" -p 0 -w 2
    fetch no-such-file
    assert_failure 1
    assert_output --regexp "^no-such-file: ERR NOTFOUND no-such-file: No such file"
    fetch sub
    assert_failure 1
    assert_output --regexp "^sub: ERR NOTFILE "
    fetch fifo fifo fifo
    assert_failure 1
    assert_output --regexp "^fifo: ERR NOTFILE "
    [ "$(stat_of idle)" -eq 2 ] || fail "expected both threads idle after the FIFO requests, STATS idle: $(stat_of idle)"
    stop_within 5
}

@test "file-server: a line that is not a request, or is too long, gets ERR BADREQ and the connection closes" {
    local fd line rest
    server_start "${SERVER[@]}" -p 0
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
    printf 'HELLO there\nGET f1.bin\n' >&"$fd"
    read -r -t 10 line <&"$fd" || true
    [[ "$line" == "ERR BADREQ "* ]] || fail "expected 'ERR BADREQ ...', got '$line'"
    rest=$(timeout 10 cat <&"$fd" | wc -c)
    [ "$rest" -eq 0 ] || fail "expected the connection closed after BADREQ, got $rest more bytes"
    exec {fd}>&-
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
    (head -c 5000 /dev/zero | tr '\0' a >&"$fd") 2>/dev/null
    read -r -t 10 line <&"$fd" || true
    [[ "$line" == "ERR BADREQ request line longer than"* ]] || fail "expected 'ERR BADREQ request line longer than ...', got '$line'"
    exec {fd}>&-
    stop_within 5
}

@test "file-server: a file over the -m limit gets ERR TOOBIG" {
    server_start "${SERVER[@]}" -p 0 -m 1
    fetch big.bin
    assert_failure 1
    assert_output --regexp "^big.bin: ERR TOOBIG big.bin: 5242883 bytes"
    fetch_cmp slow.bin
    stop_within 5
}

@test "file-server: a full queue answers ERR BUSY at once instead of queueing without bound" {
    full_queue_answers_busy 2000 60
}

# ---- diagnostics -------------------------------------------------------------------

@test "file-server: STATS reports threads, busy, idle, queued, queue_cap and the longest queue wait" {
    server_start "${SERVER[@]}" -p 0 -w 3 -q 7
    fetch -S
    assert_success
    for k in threads busy idle queued queue_cap submitted completed rejected longest_wait_ms oldest_queued_ms; do
        assert_output --regexp "(^|$(printf '\n'))$k [0-9.]+"
    done
    assert_line "threads 3"
    assert_line "idle 3"
    assert_line "queue_cap 7"
    stop_within 5
}

@test "file-server: with its one thread blocked on a slow read, STATS shows busy 1, idle 0, a queued job waiting longer and longer, and the loop still answers" {
    local a b w1 w2
    server_start "${SERVER[@]}" -p 0 -w 1 -s 3000
    timeout --foreground 60 "$FILE_CLIENT" -p "$PORT" -o /dev/null slow.bin &
    a=$!
    wait_stat busy 1
    timeout --foreground 60 "$FILE_CLIENT" -p "$PORT" -o /dev/null f1.bin &
    b=$!
    wait_stat queued 1
    [ "$(stat_of idle)" -eq 0 ] || fail "expected idle 0"
    w1=$(stat_of oldest_queued_ms)
    sleep 0.5
    w2=$(stat_of oldest_queued_ms)
    awk -v a="$w1" -v b="$w2" 'BEGIN { exit !(b >= a + 300) }' ||
        fail "expected oldest_queued_ms to grow by ~500 ms in 0.5 s, got $w1 then $w2"
    stop_within 10
    wait "$a" "$b" 2>/dev/null || true
}

# ---- shutdown --------------------------------------------------------------------

@test "file-server: SIGTERM with reads running and queued exits 0 within 5 s; the clients see the connection end" {
    local i pids=() st
    server_start "${SERVER[@]}" -p 0 -w 1 -s 400
    for ((i = 0; i < 4; i++)); do
        timeout --foreground 30 "$FILE_CLIENT" -p "$PORT" -o /dev/null slow.bin 2>/dev/null &
        pids+=($!)
    done
    wait_stat queued 3
    stop_within 5
    for i in "${pids[@]}"; do
        st=0
        wait "$i" || st=$?
        [ "$st" -ne 124 ] || fail "a client still waited for its reply after the server exited"
    done
}

@test "file-server: SIGINT exits 0 like SIGTERM" {
    server_start "${SERVER[@]}" -p 0
    fetch_cmp f4096.bin
    wait_blocked_in epoll_wait
    stop_within 5 INT
}

@test "file-server: clients that leave or reset while their file is read do not take the server down" {
    local fd i
    server_start "${SERVER[@]}" -p 0 -w 2 -s 300
    for ((i = 0; i < 3; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
        printf 'GET slow.bin\n' >&"$fd"
        exec {fd}>&- # a plain close: the reply goes to a closed socket
        # a reset: the server closes the socket while the job may still be
        # queued or running (unless the reset arrived before the request was
        # read: the kernel then drops the request, which is fine too)
        printf 'GET slow.bin\n' | run_client -p "$PORT" --reset >/dev/null ||
            fail "echo-client --reset failed (status $?)"
    done
    wait_pool_idle
    require_server_alive
    fetch_cmp f4097.bin
    stop_within 5
}

@test "file-server: an idle server with a connected client does not spin" {
    local fd
    server_start "${SERVER[@]}" -p 0
    fetch_cmp f4096.bin
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
    idle_for_2s "it is spinning"
    exec {fd}>&-
    stop_within 5
}

@test "file-server: valgrind finds no leak and no open fd after SIGTERM with reads in flight" {
    case "$BUILD" in */san-*) skip "valgrind does not run sanitized binaries" ;; esac
    command -v valgrind >/dev/null || skip "valgrind is not installed (make deps)"
    local log="$BATS_TEST_TMPDIR/valgrind.log" fd leaked clients=()
    server_start valgrind -q --leak-check=full --errors-for-leak-kinds=all --error-exitcode=1 \
        --track-fds=yes --log-file="$log" "${SERVER[@]}" -p 0 -w 1 -s 300
    fetch_cmp f4097.bin
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
    printf 'GET slow.bin\n' >&"$fd"
    exec {fd}>&- # an orphaned job
    timeout --foreground 30 "$FILE_CLIENT" -p "$PORT" -o /dev/null slow.bin 2>/dev/null &
    clients+=("$!")
    timeout --foreground 30 "$FILE_CLIENT" -p "$PORT" -o /dev/null slow.bin 2>/dev/null &
    clients+=("$!")
    sleep 0.5
    server_stop TERM
    wait "${clients[@]}" || true # they fail: the server went away mid-file
    [ "$SERVER_STATUS" -eq 0 ] || fail "valgrind exit status $SERVER_STATUS:
$(cat "$log")"
    leaked=$(awk '/Open (file descriptor|AF_)/ { fd = $0; getline; if ($0 !~ /inherited from parent/) print fd }' "$log")
    [ -z "$leaked" ] || fail "fds left open at exit:
$leaked
$(cat "$log")"
}

# ---- the demonstrations ------------------------------------------------------------

# latency_during_slow W: run latency-probe against file-server -w W with a slow
# disk (1 MiB takes 60 ms: big.bin about 300 ms); print the max fast latency in ms.
latency_during_slow() {
    server_start "${SERVER[@]}" -p 0 -s 60 -w "$1"
    run timeout 60 "$(chapter_bin latency-probe)" -p "$PORT" -s big.bin -f f4096.bin
    [ "$status" -eq 0 ] || server_gone "latency-probe failed (status $status): $output"
    echo "$output" >&3
    stop_within 10
}

@test "demo 1: a file read on the loop thread (-w 0) stalls a fast request; on the pool it does not" {
    local loop_max pool_med pool_max
    latency_during_slow 0 3>"$BATS_TEST_TMPDIR/loop.txt"
    loop_max=$(sed -n 's/^fast requests while the slow one ran: .*max \([0-9.]*\) ms$/\1/p' "$BATS_TEST_TMPDIR/loop.txt")
    latency_during_slow 4 3>"$BATS_TEST_TMPDIR/pool.txt"
    pool_med=$(sed -n 's/^fast requests while the slow one ran: .*median \([0-9.]*\) ms.*/\1/p' "$BATS_TEST_TMPDIR/pool.txt")
    pool_max=$(sed -n 's/^fast requests while the slow one ran: .*max \([0-9.]*\) ms$/\1/p' "$BATS_TEST_TMPDIR/pool.txt")
    [ -n "$loop_max" ] && [ -n "$pool_med" ] ||
        fail "no figures: -w 0: $(cat "$BATS_TEST_TMPDIR/loop.txt") / -w 4: $(cat "$BATS_TEST_TMPDIR/pool.txt")"
    # -w 0: the fast request waits for most of the ~300 ms read
    awk -v l="$loop_max" 'BEGIN { exit !(l >= 150) }' ||
        fail "with -w 0 the fast request took only $loop_max ms while the slow file was read on the loop"
    # the pool: answered while the slow file is still being read, 5 times faster at least
    awk -v l="$loop_max" -v m="$pool_med" 'BEGIN { exit !(m * 5 <= l) }' ||
        fail "with the pool the fast request took $pool_med ms (median), against $loop_max ms with -w 0"
    echo "# -w 0: max $loop_max ms; pool: median $pool_med ms, max $pool_max ms" >&3
}

@test "demo 2: more blocking jobs than threads: the queue grows, waits exceed the work, the CPU stays idle" {
    run timeout 60 "$(chapter_bin pool-starve)"
    assert_success
    assert_output --partial "12 jobs, one every 50 ms, each blocking 200 ms, on 2 threads"
    assert_output --partial "starved: jobs waited longer than they ran"
    local peak maxwait cpu
    peak=$(sed -n 's/.*peak queue \([0-9]*\) jobs/\1/p' <<<"$output")
    maxwait=$(sed -n 's/^queue wait: .*max \([0-9]*\) ms.*/\1/p' <<<"$output")
    cpu=$(sed -n 's/.*(\([0-9.]*\)% of one core)/\1/p' <<<"$output")
    [ "$peak" -ge 3 ] || fail "expected the queue to reach 3 jobs or more, peak $peak"
    [ "$maxwait" -ge 250 ] || fail "expected a queue wait over 250 ms, max $maxwait ms"
    awk -v c="$cpu" 'BEGIN { exit !(c < 20) }' || fail "expected the CPU mostly idle, used $cpu% of one core"
}

@test "demo 2: with as many threads as jobs, nothing waits" {
    run timeout 60 "$(chapter_bin pool-starve)" -w 12
    assert_success
    assert_output --partial "not starved"
    local maxwait
    maxwait=$(sed -n 's/^queue wait: .*max \([0-9]*\) ms.*/\1/p' <<<"$output")
    [ "$maxwait" -lt 150 ] || fail "expected no real queue wait with 12 threads, max $maxwait ms"
}

@test "demo 3: sync over async deadlocks a 1-thread pool (and 4 threads with 4 requests); the stall is reported; the callback version completes" {
    run timeout 60 "$(chapter_bin sync-over-async)"
    assert_success
    assert_output --partial "every scenario behaved as described"
    assert_output --regexp "stall detected after [0-9]+ ms without progress: threads 1, busy 1, idle 0, queued 1"
    assert_output --regexp "stall detected after [0-9]+ ms without progress: threads 4, busy 4, idle 0, queued 4"
    assert_output --partial "the loop thread waited 1200 ms for a done callback that only the loop thread can run"
    assert_output --regexp "3\. the fix.*
  4 of 4 requests complete after [0-9]+ ms: no stall"
}

@test "demo 3: one scenario alone: a stall exits 1 (never hangs), the fix exits 0" {
    run timeout 30 "$(chapter_bin sync-over-async)" -m wait -w 1 -t 500 -d 200
    assert_failure 1
    assert_output --partial "STALLED"
    run timeout 30 "$(chapter_bin sync-over-async)" -m continue -w 1 -c 8
    assert_success
    assert_output --partial "8 of 8 requests complete"
}

@test "pool-check: the pool keeps every promise (one done per job, on the loop thread, cancel, -EAGAIN)" {
    run timeout 60 "$(chapter_bin pool-check)"
    assert_success
    assert_output --partial "every promise was kept"
    refute_output --partial "FAIL"
}

# ---- arguments --------------------------------------------------------------------

@test "every program: bad arguments print usage on stderr and exit 2; -h exits 0" {
    usage_contract file-server file-client latency-probe pool-starve sync-over-async pool-check
    run "$(chapter_bin file-server)" -p 0
    assert_failure 2
    assert_output --partial "-r DIR is required"
    run "$(chapter_bin file-server)" -r "$ROOT" -w lots
    assert_failure 2
    run "$(chapter_bin file-server)" -r "$BATS_TEST_TMPDIR/no-such-dir" -p 0
    assert_failure 1
    assert_output --partial "no-such-dir"
    run "$(chapter_bin sync-over-async)" -m sometimes
    assert_failure 2
}
