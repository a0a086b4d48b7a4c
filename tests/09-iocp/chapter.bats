#!/usr/bin/env bats
# Chapter 09: I/O completion ports. The programs are Windows executables,
# cross-compiled with mingw-w64 and run under Wine (see wine.bash: one Wine
# prefix per build folder; servers are stopped with SIGINT, which Wine
# delivers as Ctrl-C, because SIGTERM kills a Windows process outright).

load ../helpers/common
load ../helpers/echo_suite
load ../helpers/wine

setup_file() { wine_setup_file; }
teardown_file() { wine_teardown_file; }

setup() {
    wine_require
    SERVER_CMD=("$WINE" "$(chapter_bin echo-iocp.exe)" -w 2)
}

# The server's last line on stderr, after a clean shutdown:
#   echo-iocp: N connections served, M still allocated
require_all_freed() {
    grep -q '^echo-iocp: [0-9]* connections served, 0 still allocated' "$SERVER_ERR" ||
        fail "expected '0 still allocated' after shutdown; stderr:
$(cat "$SERVER_ERR")"
}

# ---- iocp-read -------------------------------------------------------------

# expect_block OUT FILE OFFSET SIZE: OUT has a completion line for OFFSET with
# the right length and the file's own first bytes there.
expect_block() {
    local out="$1" file="$2" off="$3" size="$4" total want bytes
    total=$(stat -c %s "$file")
    bytes=$((total - off < size ? total - off : size))
    want=$(od -An -tx1 -j "$off" -N 4 "$file" | xargs)
    grep -Eq "offset $off: $bytes bytes, first bytes $want\$" <<<"$out" ||
        fail "no line 'offset $off: $bytes bytes, first bytes $want' in:
$out"
}

@test "iocp-read: every block is read at its offset, with its length and its bytes" {
    local f="$BATS_TEST_TMPDIR/data" off
    payload "$f" 300000
    run wine_exec 60 "$(chapter_bin iocp-read.exe)" -s 65536 "$f"
    assert_success
    assert_line --index 0 "$f: 300000 bytes; 6 reads of 65536 bytes; main thread tid $(sed -n 's/.*main thread tid \([0-9]*\);.*/\1/p' <<<"${lines[0]}"); 3 pool threads"
    for off in 0 65536 131072 196608 262144; do
        expect_block "$output" "$f" "$off" 65536
    done
    # one read at the end of the file: it fails with ERROR_HANDLE_EOF (38),
    # either at once or through the port, and is reported with its text
    assert_output --regexp "offset 300000: .*\(error 38\)"
    assert_output --partial "done: every read accounted for"
}

@test "iocp-read: completions run on the pool's threads, not on the thread that issued the reads" {
    local f="$BATS_TEST_TMPDIR/data" main pool tids t
    payload "$f" 262144
    run wine_exec 60 "$(chapter_bin iocp-read.exe)" -t 3 -s 32768 "$f"
    assert_success
    main=$(sed -n 's/.*main thread tid \([0-9]*\);.*/\1/p' <<<"$output")
    pool=$(sed -n 's/^  pool thread tid \([0-9]*\) waits.*/\1/p' <<<"$output" | sort -u)
    [ "$(wc -l <<<"$pool")" -eq 3 ] || fail "expected 3 pool threads waiting on the port, got: $pool"
    tids=$(sed -n 's/^  \[pool tid \([0-9]*\)\].*/\1/p' <<<"$output" | sort -u)
    [ -n "$tids" ] || fail "no completion was handled by the pool: $output"
    for t in $tids; do
        grep -qx "$t" <<<"$pool" || fail "completion on tid $t, which is not a pool thread ($pool)"
        [ "$t" != "$main" ] || fail "the issuing thread ($main) ran a completion from the port"
    done
    echo "# main tid $main; completions ran on pool tids: $(echo $tids)" >&3
}

@test "iocp-read: each part accounts for every read (pending, at once, or inline with FILE_SKIP_COMPLETION_PORT_ON_SUCCESS)" {
    local f="$BATS_TEST_TMPDIR/data" part n
    payload "$f" 200000
    run wine_exec 60 "$(chapter_bin iocp-read.exe)" -s 50000 "$f"
    assert_success
    assert_output --partial "part 1: every completion through the port"
    assert_output --partial "part 2: FILE_SKIP_COMPLETION_PORT_ON_SUCCESS"
    # 4 blocks and the read at the end, in each part
    [ "$(grep -c '^issued 5 reads from tid' <<<"$output")" -eq 2 ] || fail "expected two 'issued 5 reads' lines: $output"
    for part in 1 2; do
        # every offset is reported exactly once per part
        n=$(awk -v p="$part" '/^part /{cur=$2+0} cur==p && /offset [0-9]+: /' <<<"$output" | wc -l)
        [ "$n" -ge 5 ] || fail "part $part: expected 5 results, got $n: $output"
    done
    # a read that finished at once has no packet in part 2 and is handled inline
    if grep -q '= TRUE: finished at once' <<<"$output"; then
        assert_output --partial "no packet, handled inline"
    fi
    echo "# $(grep -m1 '^issued' <<<"$output")" >&3
}

@test "iocp-read: a missing file is reported with Windows' own text for the error, exit 1" {
    run wine_exec 30 "$(chapter_bin iocp-read.exe)" "$BATS_TEST_TMPDIR/no-such-file"
    assert_failure 1
    assert_output --regexp "CreateFile\(.*no-such-file, FILE_FLAG_OVERLAPPED\): .*\(error [23]\)"
}

@test "every program: bad arguments print usage on stderr and exit 2; -h exits 0" {
    local p args
    for p in iocp-read.exe echo-iocp.exe; do
        run wine_exec 30 "$(chapter_bin $p)" --bogus
        [ "$status" -eq 2 ] || fail "$p --bogus: expected exit 2, got $status: $output"
        assert_output --partial "usage:"
        run wine_exec 30 "$(chapter_bin $p)" -h
        [ "$status" -eq 0 ] || fail "$p -h: expected exit 0, got $status: $output"
        assert_output --partial "usage:"
    done
    for args in "-p 70000" "-w 0" "-w 65" "-w x" "-b nowhere" "-p" "extra"; do
        run wine_exec 30 "$(chapter_bin echo-iocp.exe)" $args
        [ "$status" -eq 2 ] || fail "echo-iocp $args: expected exit 2, got $status: $output"
    done
    run wine_exec 30 "$(chapter_bin iocp-read.exe)" -t 0 somefile
    assert_failure 2
    run wine_exec 30 "$(chapter_bin iocp-read.exe)"
    assert_failure 2
}

# ---- echo-iocp --------------------------------------------------------------
#
# The shared echo suite's cases (binary data, 16 MiB, 200 clients, resets,
# half-close, never-reading client, idle connections, SIGINT) run from
# suite-echo-iocp.bats, listed in common/servers.txt by make suite,
# under Wine like these. What follows is echo-iocp's own.

@test "echo-iocp: SIGINT (Ctrl-C under Wine) with clients connected exits 0, every connection freed" {
    suite_sigterm_with_clients
    require_all_freed
}

@test "echo-iocp: sends that complete short are resubmitted, and every byte arrives" {
    local in="$BATS_TEST_TMPDIR/large" n
    # Neither Windows nor Wine completes a WSASend short on a healthy
    # connection (Wine keeps the operation pending until every byte is
    # out), so the server cuts 50% of its sends in half itself: their
    # completions report fewer bytes than it had to send.
    server_start env FAULTS_SHORT_SEND=50 "${SERVER_CMD[@]}" -p 0
    payload "$in" $((16 * 1024 * 1024))
    slow_reader_echo "$in" 60
    run timeout 60 "$(tool_bin echo-load)" -p "$PORT" -c 10 -n 100 -l 3000
    assert_success
    assert_output --partial "errors 0"
    suite_stop_clean
    n=$(sed -n 's/.*short sends resubmitted: \([0-9]*\)$/\1/p' "$SERVER_ERR")
    [ "${n:-0}" -gt 0 ] || fail "no short send was resubmitted; stderr: $(cat "$SERVER_ERR")"
    echo "# $n short sends resubmitted" >&3
}

# ---- echo-iocp: the worker pool ---------------------------------------------

# serve_with_workers N: echo-load through a server with N workers; the exit
# report has one completion count per worker.
serve_with_workers() {
    local counts
    server_start "$WINE" "$(chapter_bin echo-iocp.exe)" -w "$1" -p 0
    grep -q "echo-iocp: $1 worker threads" "$SERVER_ERR" || fail "expected '$1 worker threads' on stderr: $(cat "$SERVER_ERR")"
    run timeout 60 "$(tool_bin echo-load)" -p "$PORT" -c 20 -n 200 -l 1000
    assert_success
    assert_output --partial "errors 0"
    suite_stop_clean
    counts=$(sed -n 's/^echo-iocp: completions per worker: \([0-9 ]*\);.*/\1/p' "$SERVER_ERR")
    [ "$(wc -w <<<"$counts")" -eq "$1" ] || fail "expected $1 completion counts, got '$counts'"
    echo "# -w $1: completions per worker: $counts" >&3
}

@test "echo-iocp -w 1: one worker thread serves 20 clients" {
    serve_with_workers 1
}
@test "echo-iocp -w 4: four worker threads serve 20 clients" {
    serve_with_workers 4
}

@test "echo-iocp -w 2: 200 connections open at once are all served by two worker threads" {
    # Unlike chapter 02's pool, a worker is not tied to a connection: it
    # handles one completion and goes back to the port, so 2 threads serve
    # 200 open connections. echo-load --idle opens all 200, echoes once on
    # each, and holds them open together.
    server_start "$WINE" "$(chapter_bin echo-iocp.exe)" -w 2 -p 0
    run timeout 120 "$(tool_bin echo-load)" -p "$PORT" -c 200 --idle -d 1
    assert_success
    assert_output --partial "holding 200 connections"
    # and with all 200 busy at once
    run timeout 120 "$(tool_bin echo-load)" -p "$PORT" -c 200 -n 20 -l 200
    assert_success
    assert_output --partial "errors 0"
    suite_stop_clean
}

@test "echo-iocp: client B is served while client A is connected and idle" {
    suite_serves_while_idle
}
@test "echo-iocp: an idle server with a connected client does not spin" {
    suite_idle_no_spin
}

@test "echo-iocp: SIGINT while a send can never finish: it is cancelled, drained, and everything freed" {
    local h wpid i
    server_start "${SERVER_CMD[@]}" -p 0
    # a client that sends and never reads: the server's WSASend to it stays
    # pending forever, until shutdown cancels it (CancelIoEx)
    conn_open h
    head -c $((32 << 20)) /dev/zero >&"$h" 2>/dev/null 3>&- &
    wpid=$!
    _course_pids+=("$wpid")
    sleep 2
    require_server_alive
    stop_within 5 INT
    require_all_freed
    kill "$wpid" 2>/dev/null || true
    wait "$wpid" 2>/dev/null || true
    exec {h}>&-
}

# The shared suite skips its fd-limit and fd-count cases for the Windows
# servers (common/servers.txt), saying that under Wine a socket's
# descriptor lives in wineserver, not in the server. This shows it: under
# `ulimit -n 64`, 100 connections are held open and each one echoes, and
# the server's own descriptor count does not grow with them.
@test "echo-iocp under Wine: 100 connections under ulimit -n 64, and the server's /proc/PID/fd does not grow with them" {
    local fds=() i fd before after
    server_start bash -c 'ulimit -n 64 && exec "$@"' _ "${SERVER_CMD[@]}" -p 0
    before=$(find "/proc/$SERVER_PID/fd" -mindepth 1 | wc -l)
    for ((i = 0; i < 100; i++)); do
        conn_open fd
        fds+=("$fd")
        expect_echo "$fd" "client $i"
    done
    after=$(find "/proc/$SERVER_PID/fd" -mindepth 1 | wc -l)
    echo "# 100 connections open under ulimit -n 64: the server holds $before fds before them, $after with them" >&3
    [ $((after - before)) -lt 10 ] ||
        fail "the server's fds went from $before to $after with 100 connections: its sockets are its own after all"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    suite_stop_clean
}
