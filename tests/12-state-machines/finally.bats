#!/usr/bin/env bats
# Exercise 12-state-machines/finally: GetStringAsync's way out
# (get-string.c: get_string_finish), its try/finally: release the socket
# and the buffer on every path, set the result or the error, complete the
# task last. Runs against $IMPL (solutions by default; `make ex` uses
# exercises).

load ../helpers/common
load exercise

setup() {
    FETCH_SM="$(impl_bin finally fetch-sm)"
    SUM_PAGES="$(impl_bin finally sum-pages)"
    require_http_server
}

# fetch PATH: run fetch-sm on PATH (10 s at most); $status, $output (stdout
# and stderr).
fetch() {
    run timeout 10 "$FETCH_SM" "http://127.0.0.1:$PORT$1"
    course_note_exit "$status" "fetch-sm $1"
}

@test "fetch-sm: the body comes back in upper case, byte for byte" {
    server_start "$HTTP_SERVER" -p 0
    local fd want="$BATS_TEST_TMPDIR/want" got="$BATS_TEST_TMPDIR/got" st=0
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || fail "could not connect to port $PORT"
    printf 'GET /finally/hello HTTP/1.0\r\n\r\n' >&"$fd"
    timeout 10 cat <&"$fd" | sed '1,/^\r$/d' | tr 'a-z' 'A-Z' >"$want"
    exec {fd}>&-
    timeout 10 "$FETCH_SM" "http://127.0.0.1:$PORT/finally/hello" >"$got" 2>"$BATS_TEST_TMPDIR/err" || st=$?
    course_note_exit "$st" fetch-sm
    [ "$st" -eq 0 ] || fail "fetch-sm: exit status $st: $(cat "$BATS_TEST_TMPDIR/err")"
    cmp -s "$want" "$got" || fail "expected $(wc -c <"$want") bytes, the body in upper case; got $(wc -c <"$got"): $(head -c 200 "$got")"
}

@test "valgrind: a fetch, a 404 and a refused connection leak no memory (the response buffer is freed on every path), read no freed frame, and leave no socket open" {
    server_start "$HTTP_SERVER" -p 0
    # the error paths first: they are the ones a finally forgets
    valgrind_clean "fetch-sm /status/404" "$FETCH_SM" "http://127.0.0.1:$PORT/status/404"
    [ "$VG_STATUS" -eq 1 ] || fail "fetch-sm /status/404 under valgrind: expected exit 1, got $VG_STATUS: $(cat "$BATS_TEST_TMPDIR/vg.err")"
    valgrind_clean "fetch-sm /hello" "$FETCH_SM" "http://127.0.0.1:$PORT/hello"
    [ "$VG_STATUS" -eq 0 ] || fail "fetch-sm /hello under valgrind: exit $VG_STATUS: $(cat "$BATS_TEST_TMPDIR/vg.err")"
    server_stop
    valgrind_clean "fetch-sm, connection refused" "$FETCH_SM" "http://127.0.0.1:$PORT/x"
    [ "$VG_STATUS" -eq 1 ] || fail "fetch-sm, connection refused, under valgrind: expected exit 1, got $VG_STATUS: $(cat "$BATS_TEST_TMPDIR/vg.err")"
}

@test "fetch-sm: an HTTP 404 is an error (GetStringAsync throws): the status in the message, exit 1" {
    server_start "$HTTP_SERVER" -p 0
    fetch /status/404
    [ "$status" -eq 1 ] || fail "expected exit 1, got $status: $output"
    assert_output --partial "HTTP status 404 from 127.0.0.1:$PORT/status/404"
}

@test "fetch-sm: no server listening: the failed call and ECONNREFUSED in the message, exit 1" {
    server_start "$HTTP_SERVER" -p 0
    server_stop
    fetch /x
    [ "$status" -eq 1 ] || fail "expected exit 1, got $status: $output"
    assert_output --partial "connect(127.0.0.1:$PORT)"
    assert_output --partial "Connection refused (ECONNREFUSED)"
}

@test "sum-pages: 30 pages with only 12 descriptors allowed: every page's socket is closed once its page is read" {
    server_start "$HTTP_SERVER" -p 0
    local st=0
    (
        ulimit -n 12
        exec timeout 20 "$SUM_PAGES" -p "$PORT" -n 30 -d 0 -t 0
    ) >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" || st=$?
    course_note_exit "$st" sum-pages
    [ "$st" -eq 0 ] || fail "sum-pages -n 30 under ulimit -n 12: exit status $st (a socket left open per page runs out of descriptors)
$(cat "$BATS_TEST_TMPDIR/err")"
    [ "$(grep -c '^page ' "$BATS_TEST_TMPDIR/out")" -eq 30 ] || fail "expected 30 page lines: $(tail -n 3 "$BATS_TEST_TMPDIR/out")"
}
