#!/usr/bin/env bats
# Chapter 12: state machines. FetchUpperAsync three ways (a hand-written
# state machine, stackless coroutine macros, a stackful fiber) against the
# chapter's http-server; the pitfalls of the macros; the cost table.

load ../helpers/common

FETCHERS=(fetch-sm fetch-co fetch-stackful)

setup() {
    HTTP_SERVER="$(chapter_bin http-server)"
}

# raw_get PATH: the body http-server sends for PATH, read through bash's
# /dev/tcp: the reference the fetch programs are compared with.
raw_get() {
    local fd
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || fail "could not connect to port $PORT"
    printf 'GET %s HTTP/1.0\r\n\r\n' "$1" >&"$fd"
    timeout 10 cat <&"$fd" | sed '1,/^\r$/d'
    exec {fd}>&-
}

# fetch_matches PROG PATH [ENV...]: PROG's output for PATH is the raw body in
# upper case, byte for byte.
fetch_matches() {
    local prog="$1" path="$2" want="$BATS_TEST_TMPDIR/want" got="$BATS_TEST_TMPDIR/got.$1"
    shift 2
    raw_get "$path" | tr 'a-z' 'A-Z' >"$want"
    [ -s "$want" ] || fail "the server sent no body for $path"
    timeout 30 env "$@" "$(chapter_bin "$prog")" "http://127.0.0.1:$PORT$path" >"$got" ||
        fail "$prog $path: exit status $?"
    cmp -s "$want" "$got" ||
        fail "$prog $path: expected $(wc -c <"$want") bytes, the body in upper case; got $(wc -c <"$got"): $(cmp "$want" "$got" 2>&1 | head -n 1)
first line expected: $(head -n 1 "$want")
first line got:      $(head -n 1 "$got")"
}

# a port nobody listens on: a server's, after it stopped
free_port() {
    server_start "$HTTP_SERVER" -p 0
    server_stop
    echo "$PORT"
}

# ---- the three fetchers ------------------------------------------------------------

@test "fetch-sm, fetch-co, fetch-stackful: the body comes back in upper case, byte for byte" {
    server_start "$HTTP_SERVER" -p 0
    local p
    for p in "${FETCHERS[@]}"; do
        fetch_matches "$p" /hello
        fetch_matches "$p" /a/longer/path
    done
    server_stop
    [ "$SERVER_STATUS" -eq 0 ] || fail "http-server: exit status $SERVER_STATUS after SIGTERM"
}

@test "a 200 kB response cut into tiny recv()s, with EAGAIN at random, comes out whole (faults shim)" {
    server_start "$HTTP_SERVER" -p 0 -s 200000
    local p reads
    for p in "${FETCHERS[@]}"; do
        fetch_matches "$p" /big $(faults_env FAULTS_SHORT_READ=95 FAULTS_EAGAIN=30 FAULTS_SEED=7)
    done
    reads=$(faults_count short_reads)
    # 200 kB read 4 KiB at most at a time, each read cut short: over 50 per program
    [ "$reads" -ge 150 ] || fail "expected the shim to cut at least 150 reads, it cut $reads"
    [ "$(faults_count eagain)" -gt 0 ] || fail "the shim injected no EAGAIN"
}

@test "fetch-sm -v: GetStringAsync suspends in recv, FetchUpperAsync suspends on its task and resumes in state 0" {
    server_start "$HTTP_SERVER" -p 0 -d 200
    run timeout 30 "$(chapter_bin fetch-sm)" -v "http://127.0.0.1:$PORT/trace"
    assert_success
    assert_output --partial "[fetch_upper] move_next(state -1)"
    assert_output --partial "[get_string] recv: EAGAIN after 0 bytes, suspend in state 2"
    assert_output --partial "[fetch_upper] GetStringAsync not completed: suspend in state 0"
    assert_output --partial "[main] fetch_upper_async returned, task not completed"
    assert_output --partial "[get_string] move_next(state 2)"
    assert_output --partial "[fetch_upper] move_next(state 0)"
    assert_output --partial "YOU ASKED FOR /TRACE"
    # the inner task completes first, and its completion runs the outer move_next
    local done_inner resume_outer
    done_inner=$(grep -n '\[get_string\] done' <<<"$output" | head -n 1 | cut -d: -f1)
    resume_outer=$(grep -n '\[fetch_upper\] move_next(state 0)' <<<"$output" | cut -d: -f1)
    [ "$done_inner" -lt "$resume_outer" ] ||
        fail "expected get_string to complete (line $done_inner) before fetch_upper resumes (line $resume_outer)"
}

@test "no server listening: each fetcher reports ECONNREFUSED and exits 1" {
    local port p
    port=$(free_port)
    for p in "${FETCHERS[@]}"; do
        run timeout 10 "$(chapter_bin "$p")" "http://127.0.0.1:$port/x"
        [ "$status" -eq 1 ] || fail "$p: expected exit 1, got $status: $output"
        assert_output --partial "connect("
        assert_output --partial "Connection refused (ECONNREFUSED)"
    done
}

@test "an HTTP 404 is an error, as GetStringAsync throws: message and exit 1" {
    server_start "$HTTP_SERVER" -p 0
    local p
    for p in "${FETCHERS[@]}"; do
        run timeout 10 "$(chapter_bin "$p")" "http://127.0.0.1:$PORT/status/404"
        [ "$status" -eq 1 ] || fail "$p: expected exit 1, got $status: $output"
        assert_output --partial "HTTP status 404"
    done
}

# ---- the rules of stackless coroutines ------------------------------------------------

@test "coro-pitfalls: a local loses its value across AWAIT, a frame field keeps it" {
    run timeout 10 "$(chapter_bin coro-pitfalls)"
    assert_success
    assert_output --partial "25 bytes written in 3 bursts, the coroutine resumed 3 times"
    assert_output --regexp "counted in a field of the frame: 25 bytes"
    # only the last burst ("last", 4 bytes): each resume started the local at 0
    assert_output --regexp "counted in a local variable: +4 bytes"
}

@test "coro-pitfalls: an AWAIT inside a nested switch is never resumed, and ASYNC_END's default says so" {
    run timeout 10 "$(chapter_bin coro-pitfalls)"
    assert_success
    assert_output --regexp "suspended at line ([0-9]+) after step 1"
    assert_output --regexp "nested_switch: resumed at line [0-9]+, but its switch has no case [0-9]+"
    assert_output --partial "no case for that line, the coroutine is lost; last step run: 1 of 3"
}

# ---- the cost table --------------------------------------------------------------------

@test "coro-cost: 10,000 suspended tasks: a stackless frame is far smaller than a stackful task, resident and declared" {
    run timeout 120 "$(chapter_bin coro-cost)" -n 10000 -r 20000 -k 3
    assert_success
    echo "$output"
    local decl_less decl_stack res_less res_ful
    read -r decl_less decl_stack < <(sed -n 's/^declared per task (bytes) *\([0-9]*\) *\([0-9]*\) + .*/\1 \2/p' <<<"$output")
    read -r res_less res_ful < <(sed -n 's/^resident per task (bytes, RSS) *\([0-9]*\) *\([0-9]*\)$/\1 \2/p' <<<"$output")
    [ -n "$decl_less" ] && [ -n "$res_ful" ] || fail "could not read the table"
    [ "$decl_less" -le 64 ] || fail "a stackless frame of $decl_less bytes; expected a small struct"
    [ "$decl_stack" -eq 65536 ] || fail "expected a 64 KiB stack per fiber, got $decl_stack"
    [ "$res_ful" -ge 4096 ] || fail "a suspended fiber must have touched at least one 4 KiB stack page; RSS says $res_ful bytes"
    [ "$res_less" -ge 1 ] || fail "10,000 frames must cost some resident memory; RSS says $res_less bytes each"
    [ $((res_ful)) -ge $((10 * res_less)) ] ||
        fail "expected a stackful task to hold at least 10 times the resident memory of a stackless one: $res_ful vs $res_less bytes"
}

@test "coro-cost: resume+suspend times are positive, and a ucontext switch costs more than a stackless resume" {
    run timeout 120 "$(chapter_bin coro-cost)" -n 1000 -r 20000 -k 3
    assert_success
    local less ful
    read -r less ful < <(sed -n 's/^resume+suspend, one task (ns) *\([0-9.]*\) *\([0-9.]*\)$/\1 \2/p' <<<"$output")
    [ -n "$less" ] && [ -n "$ful" ] || fail "could not read the times: $output"
    awk -v a="$less" -v b="$ful" 'BEGIN { exit !(a > 0 && b > a && b < 1000000) }' ||
        fail "expected 0 < stackless ($less ns) < stackful ($ful ns) < 1 ms"
}

# ---- contracts --------------------------------------------------------------------------

@test "every program: bad arguments print usage on stderr and exit 2; -h exits 0" {
    local p
    usage_contract http-server fetch-sm fetch-co fetch-stackful coro-pitfalls coro-cost sum-pages
    for p in "${FETCHERS[@]}"; do
        run "$(chapter_bin $p)"
        [ "$status" -eq 2 ] || fail "$p with no URL: expected exit 2, got $status"
        run "$(chapter_bin $p)" "ftp://127.0.0.1/x"
        [ "$status" -eq 2 ] || fail "$p ftp://...: expected exit 2, got $status"
        assert_output --partial "bad URL"
        run "$(chapter_bin $p)" "http://127.0.0.1:99999/x"
        [ "$status" -eq 2 ] || fail "$p with port 99999: expected exit 2, got $status"
    done
    run "$(chapter_bin coro-cost)" -n 0
    [ "$status" -eq 2 ] || fail "coro-cost -n 0: expected exit 2, got $status"
    run "$(chapter_bin sum-pages)" -n 3
    [ "$status" -eq 2 ] || fail "sum-pages without -p: expected exit 2, got $status"
}

@test "http-server: SIGINT and SIGTERM, while it waits in accept() or in a delayed answer, exit 0" {
    server_start "$HTTP_SERVER" -p 0
    wait_blocked_in accept
    stop_within 5 INT
    server_start "$HTTP_SERVER" -p 0 -d 10000
    local fd
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
    printf 'GET /slow HTTP/1.0\r\n\r\n' >&"$fd"
    sleep 0.3
    stop_within 5 TERM
    exec {fd}>&-
}

@test "http-server: 40 starts, SIGTERM at another moment each time (just after listening, after a connect, mid-request, after 0-2 ms), all exit 0 within 3 s" {
    load ../helpers/echo_suite
    SERVER_CMD=("$HTTP_SERVER")
    suite_stop_anytime 40
}
