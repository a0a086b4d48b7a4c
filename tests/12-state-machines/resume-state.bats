#!/usr/bin/env bats
# Exercise 12-state-machines/resume-state (fix): GetStringAsync by hand
# (get-string.c) must save its state before each await, or the resume
# starts it over. Runs against $IMPL (solutions by default; `make ex` uses
# exercises).

load ../helpers/common

setup() {
    FETCH_SM="$(impl_bin resume-state fetch-sm)"
    SUM_PAGES="$(impl_bin resume-state sum-pages)"
    HTTP_SERVER="$BUILD/chapters/$CHAPTER/http-server"
    require_bin "$HTTP_SERVER" "chapters/$CHAPTER"
}

# fetch_upper PATH [ENV...]: fetch-sm's output for PATH must be the body
# (read through bash's /dev/tcp) in upper case, byte for byte.
fetch_upper() {
    local path="$1" fd want="$BATS_TEST_TMPDIR/want" got="$BATS_TEST_TMPDIR/got" st=0
    shift
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || fail "could not connect to port $PORT"
    printf 'GET %s HTTP/1.0\r\n\r\n' "$path" >&"$fd"
    timeout 10 cat <&"$fd" | sed '1,/^\r$/d' | tr 'a-z' 'A-Z' >"$want"
    exec {fd}>&-
    [ -s "$want" ] || fail "the server sent no body for $path"
    timeout 10 env "$@" "$FETCH_SM" "http://127.0.0.1:$PORT$path" >"$got" 2>"$BATS_TEST_TMPDIR/err" || st=$?
    course_note_exit "$st" fetch-sm
    [ "$st" -eq 0 ] || fail "fetch-sm $path: exit status $st
--- stderr ---
$(cat "$BATS_TEST_TMPDIR/err")"
    cmp -s "$want" "$got" ||
        fail "fetch-sm $path: expected $(wc -c <"$want") bytes, the body in upper case; got $(wc -c <"$got")"
}

@test "fetch-sm: the body in upper case, from a server that answers at once" {
    server_start "$HTTP_SERVER" -p 0
    fetch_upper /hello
}

@test "fetch-sm: the body in upper case, from a slow server (200 ms): recv waits, then resumes where it stopped" {
    server_start "$HTTP_SERVER" -p 0 -d 200
    fetch_upper /slow/hello
}

@test "fetch-sm -v, slow server: GetStringAsync connects once and resumes in state 2, not from the top" {
    server_start "$HTTP_SERVER" -p 0 -d 200
    run timeout 10 "$FETCH_SM" -v "http://127.0.0.1:$PORT/trace"
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

@test "a 200 kB response cut into tiny recv()s, with EAGAIN at random, comes out whole (faults shim)" {
    server_start "$HTTP_SERVER" -p 0 -s 200000
    fetch_upper /big $(faults_env FAULTS_SHORT_READ=95 FAULTS_EAGAIN=30 FAULTS_SEED=7)
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
