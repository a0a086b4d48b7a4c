#!/usr/bin/env bats
# Exercise 12-state-machines/resume-state (fix): GetStringAsync by hand
# (get-string.c) must save its state before each await, or the resume
# starts it over. Runs against $IMPL (solutions by default; `make ex` uses
# exercises).

load ../helpers/common
load exercise

setup() {
    FETCH_SM="$(impl_bin resume-state fetch-sm)"
    SUM_PAGES="$(impl_bin resume-state sum-pages)"
    require_http_server
}

@test "fetch-sm -v, slow server: GetStringAsync connects once and resumes in state 2, not from the top" {
    server_start "$HTTP_SERVER" -p 0 -d 200
    # 3 s: the reference takes 200 ms; one that starts over at each resume
    # reconnects for ever
    run timeout 3 "$FETCH_SM" -v "http://127.0.0.1:$PORT/trace"
    course_note_exit "$status" fetch-sm
    local connects
    connects=$(grep -c '\[get_string\] move_next(state -1)' <<<"$output" || true)
    [ "$connects" -eq 1 ] || fail "GetStringAsync started from the top $connects times (once expected):
$output"
    assert_output --partial "[get_string] recv: EAGAIN after 0 bytes, suspend in state 2"
    assert_output --partial "[get_string] move_next(state 2)"
    assert_output --partial "YOU ASKED FOR /TRACE"
    assert_success
}

@test "fetch-sm: the body in upper case, from a server that answers at once" {
    server_start "$HTTP_SERVER" -p 0
    fetch_upper "$FETCH_SM" /hello
}

@test "fetch-sm: the body in upper case, from a slow server (200 ms): recv waits, then resumes where it stopped" {
    server_start "$HTTP_SERVER" -p 0 -d 200
    FETCH_SECS=5 fetch_upper "$FETCH_SM" /slow/hello
}

@test "a 200 kB response cut into tiny recv()s, with EAGAIN at random, comes out whole (faults shim)" {
    server_start "$HTTP_SERVER" -p 0 -s 200000
    fetch_upper "$FETCH_SM" /big $(faults_env FAULTS_SHORT_READ=95 FAULTS_EAGAIN=30 FAULTS_SEED=7)
    [ "$(faults_count eagain)" -gt 0 ] || fail "the shim injected no EAGAIN"
}

@test "sum-pages, slow server: three pages fetched one after another, each once, and a total" {
    server_start "$HTTP_SERVER" -p 0 -d 100
    local st=0
    timeout 10 "$SUM_PAGES" -p "$PORT" -n 3 -d 0 -t 0 >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" || st=$?
    course_note_exit "$st" sum-pages
    [ "$st" -eq 0 ] || fail "sum-pages: exit status $st
$(cat "$BATS_TEST_TMPDIR/err")"
    [ "$(grep -c '^page ' "$BATS_TEST_TMPDIR/out")" -eq 3 ] || fail "expected 3 page lines: $(cat "$BATS_TEST_TMPDIR/out")"
    grep -q '^total: [1-9][0-9]* words$' "$BATS_TEST_TMPDIR/out" || fail "no total: $(cat "$BATS_TEST_TMPDIR/out")"
}

@test "valgrind, slow server: no leak, no socket left open (one connection, closed at the end)" {
    server_start "$HTTP_SERVER" -p 0 -d 200
    valgrind_clean "fetch-sm, slow server" "$FETCH_SM" "http://127.0.0.1:$PORT/slow/valgrind"
    [ "$VG_STATUS" -eq 0 ] || fail "fetch-sm under valgrind: exit $VG_STATUS: $(cat "$BATS_TEST_TMPDIR/vg.err")"
}
