#!/usr/bin/env bats
# Exercise 12-state-machines/sum-pages: SumPagesAsync (a loop, two awaits)
# as a hand-written state machine. Runs against $IMPL (solutions by default;
# `make ex` uses exercises).

load ../helpers/common
load exercise

setup() {
    SUM_PAGES="$(impl_bin sum-pages sum-pages)"
    require_http_server
}

# words_of PATH: the words http-server sends for PATH, counted by wc -w on a
# copy fetched through bash's /dev/tcp.
words_of() {
    local fd
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || fail "could not connect to port $PORT"
    printf 'GET %s HTTP/1.0\r\n\r\n' "$1" >&"$fd"
    timeout 10 cat <&"$fd" | sed '1,/^\r$/d' | wc -w
    exec {fd}>&-
}

# run_sum_pages SECONDS ARGS...: run it (SECONDS at most) into
# $BATS_TEST_TMPDIR/out; fail with its stderr (a TODO shows there) unless it
# exits 0. The limits are 10 times what a run takes here, so that a state
# machine that starts over at every resume fails soon.
run_sum_pages() {
    local st=0 limit="$1"
    shift
    timeout "$limit" "$SUM_PAGES" -p "$PORT" "$@" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" || st=$?
    course_note_exit "$st" sum-pages
    [ "$st" -eq 0 ] || fail "sum-pages $*: exit status $st$([ "$st" -eq 124 ] && echo " (timed out after $limit s: does it start over at every resume?)")
--- stderr ---
$(cat "$BATS_TEST_TMPDIR/err")
--- stdout (last lines) ---
$(tail -n 5 "$BATS_TEST_TMPDIR/out")"
}

# check_counts PAGES: every "page I: N words" line and the total are right.
check_counts() {
    local i want got total=0
    for ((i = 1; i <= $1; i++)); do
        want=$(words_of "/page/$i")
        total=$((total + want))
        got=$(sed -n "s/^page $i: \([0-9]*\) words$/\1/p" "$BATS_TEST_TMPDIR/out")
        [ "$got" = "$want" ] || fail "page $i: expected '$want' words (wc -w), got '$got'
$(grep -v '^tick' "$BATS_TEST_TMPDIR/out")"
    done
    [ "$(grep -c '^page ' "$BATS_TEST_TMPDIR/out")" -eq "$1" ] ||
        fail "expected $1 page lines, got: $(grep '^page ' "$BATS_TEST_TMPDIR/out")"
    grep -qx "total: $total words" "$BATS_TEST_TMPDIR/out" ||
        fail "expected 'total: $total words', got '$(grep '^total' "$BATS_TEST_TMPDIR/out")'"
}

# min_ticks_between_pages PAGES: the fewest tick lines between two page lines
# (and before the first: the first fetch).
min_ticks_between_pages() {
    awk -v pages="$1" '/^tick/ { n++ } /^page/ { if (min == "" || n < min) min = n; n = 0; seen++ }
        END { print (seen == pages ? min : -1) }' "$BATS_TEST_TMPDIR/out"
}

@test "sum-pages: each page's word count and the total are right" {
    server_start "$HTTP_SERVER" -p 0
    run_sum_pages 5 -n 4 -d 10 -t 0
    check_counts 4
    server_stop
}

@test "valgrind: three pages and their delays leak nothing (each awaited task freed), and no socket stays open" {
    server_start "$HTTP_SERVER" -p 0
    valgrind_clean "sum-pages" "$SUM_PAGES" -p "$PORT" -n 3 -d 10 -t 5
    [ "$VG_STATUS" -eq 0 ] || fail "sum-pages under valgrind: exit $VG_STATUS: $(cat "$BATS_TEST_TMPDIR/vg.err")"
    grep -q '^total: [1-9][0-9]* words$' "$BATS_TEST_TMPDIR/vg.out" || fail "no total under valgrind: $(cat "$BATS_TEST_TMPDIR/vg.out")"
}

@test "sum-pages: while it waits in Task.Delay, the loop keeps ticking (at least 5 ticks between pages)" {
    server_start "$HTTP_SERVER" -p 0
    # 300 ms delays, a tick every 10 ms: about 30 ticks between pages if the
    # state machine returns to the loop; a sleep() would leave 1 or 2
    run_sum_pages 10 -n 3 -d 300 -t 10
    check_counts 3
    local min
    min=$(awk '/^tick/ { n++ } /^page/ { if (seen++ && (min == "" || n < min)) min = n; n = 0 }
        END { print min }' "$BATS_TEST_TMPDIR/out")
    [ -n "$min" ] && [ "$min" -ge 5 ] ||
        fail "expected at least 5 ticks between two pages (300 ms delays, 10 ms ticks), got ${min:-none}:
$(tr '\n' ' ' <"$BATS_TEST_TMPDIR/out")"
}

@test "sum-pages: while it waits for a slow server, the loop keeps ticking (at least 5 ticks per page)" {
    server_start "$HTTP_SERVER" -p 0 -d 300
    run_sum_pages 10 -n 3 -d 0 -t 10
    check_counts 3
    local min
    min=$(min_ticks_between_pages 3)
    [ "$min" -ge 5 ] ||
        fail "expected at least 5 ticks while each 300 ms answer was awaited (10 ms ticks), got $min:
$(tr '\n' ' ' <"$BATS_TEST_TMPDIR/out")"
}

@test "sum-pages: responses cut into tiny reads, with EAGAIN at random, still add up (faults shim)" {
    server_start "$HTTP_SERVER" -p 0 -s 20000
    local st=0
    timeout 10 env $(faults_env FAULTS_SHORT_READ=95 FAULTS_EAGAIN=30 FAULTS_SEED=3) \
        "$SUM_PAGES" -p "$PORT" -n 3 -d 0 -t 0 >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" || st=$?
    course_note_exit "$st" sum-pages
    [ "$st" -eq 0 ] || fail "sum-pages under faults: exit status $st
$(cat "$BATS_TEST_TMPDIR/err")"
    check_counts 3
    [ "$(faults_count short_reads)" -ge 15 ] || fail "the shim cut only $(faults_count short_reads) reads"
}

@test "sum-pages: no server listening: ECONNREFUSED on stderr, exit 1" {
    server_start "$HTTP_SERVER" -p 0
    server_stop
    local st=0
    timeout 10 "$SUM_PAGES" -p "$PORT" -n 2 -t 5 >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" || st=$?
    course_note_exit "$st" sum-pages
    [ "$st" -eq 1 ] || fail "expected exit 1, got $st
$(cat "$BATS_TEST_TMPDIR/err")"
    grep -q "Connection refused (ECONNREFUSED)" "$BATS_TEST_TMPDIR/err" ||
        fail "expected ECONNREFUSED on stderr, got: $(cat "$BATS_TEST_TMPDIR/err")"
}

@test "sum-pages: zero pages complete at once with a total of 0" {
    server_start "$HTTP_SERVER" -p 0
    run_sum_pages 5 -n 0 -t 5
    grep -qx "total: 0 words" "$BATS_TEST_TMPDIR/out" || fail "expected 'total: 0 words': $(cat "$BATS_TEST_TMPDIR/out")"
}
