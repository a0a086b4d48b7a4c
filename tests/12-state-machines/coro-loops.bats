#!/usr/bin/env bats
# Exercise 12-state-machines/coro-loops: GetStringAsync's send and receive
# loops with coro.h's AWAIT (fetch-co.c: get_string_co). Runs against $IMPL
# (solutions by default; `make ex` uses exercises).

load ../helpers/common
load exercise

setup() {
    FETCH_CO="$(impl_bin coro-loops fetch-co)"
    require_http_server
}

@test "fetch-co: the body in upper case, byte for byte, from a server that answers at once" {
    server_start "$HTTP_SERVER" -p 0
    fetch_upper "$FETCH_CO" /hello
    fetch_upper "$FETCH_CO" /a/longer/path
}

@test "fetch-co, slow server (200 ms): the wait costs no calls: at most 12 socket calls in all, not a recv() per turn of a spinning loop" {
    server_start "$HTTP_SERVER" -p 0 -d 200
    # the shim injects nothing here: it only counts the socket calls. The
    # reference makes 4 (one send, a recv that says EAGAIN, the body, EOF);
    # a loop that retries recv() at once on EAGAIN makes thousands in 200 ms
    fetch_upper "$FETCH_CO" /slow/counted $(faults_env)
    local calls
    calls=$(faults_count calls)
    [ "$calls" -gt 0 ] || fail "the faults shim counted no call: it was not loaded"
    [ "$calls" -le 12 ] || fail "fetch-co made $calls socket calls against a server that answers after 200 ms; expected at most 12 (the reference makes 4): does it retry recv() at once on EAGAIN instead of awaiting EPOLLIN?"
}

@test "fetch-co, slow server (200 ms): the receive loop awaits, then reads on to the end" {
    server_start "$HTTP_SERVER" -p 0 -d 200
    fetch_upper "$FETCH_CO" /slow/hello
}

@test "fetch-co: a 200 kB response cut into tiny reads, with EAGAIN at random, comes out whole (faults shim)" {
    server_start "$HTTP_SERVER" -p 0 -s 200000
    # 5 s: the reference took 0.4 s here, on a machine busy with other work
    FETCH_SECS=5 fetch_upper "$FETCH_CO" /big $(faults_env FAULTS_SHORT_READ=95 FAULTS_EAGAIN=30 FAULTS_SEED=7)
    [ "$(faults_count short_reads)" -ge 50 ] || fail "the shim cut only $(faults_count short_reads) reads"
}

@test "fetch-co: the request sent in pieces, with EAGAIN at random, still arrives whole (faults shim)" {
    server_start "$HTTP_SERVER" -p 0
    # the reference takes a few ms; a send that awaits the wrong readiness
    # (EPOLLIN, which never comes before the request is whole) hangs
    FETCH_SECS=3 fetch_upper "$FETCH_CO" /a/path/long/enough/to/be/cut/into/several/pieces/by/the/shim \
        $(faults_env FAULTS_SHORT_WRITE=95 FAULTS_EAGAIN=40 FAULTS_SEED=5)
    [ "$(faults_count short_writes)" -ge 2 ] || fail "the shim cut only $(faults_count short_writes) sends"
    [ "$(faults_count eagain)" -ge 1 ] || fail "the shim injected no EAGAIN"
}

@test "fetch-co: an HTTP 404 is an error, as GetStringAsync throws: message and exit 1" {
    server_start "$HTTP_SERVER" -p 0
    run timeout 10 "$FETCH_CO" "http://127.0.0.1:$PORT/status/404"
    course_note_exit "$status" fetch-co
    [ "$status" -eq 1 ] || fail "expected exit 1, got $status: $output"
    assert_output --partial "HTTP status 404"
}

@test "valgrind: a fetch and a 404 leak no memory and leave no socket open" {
    server_start "$HTTP_SERVER" -p 0
    valgrind_clean "fetch-co /hello" "$FETCH_CO" "http://127.0.0.1:$PORT/hello"
    [ "$VG_STATUS" -eq 0 ] || fail "fetch-co /hello under valgrind: exit $VG_STATUS: $(cat "$BATS_TEST_TMPDIR/vg.err")"
    valgrind_clean "fetch-co /status/404" "$FETCH_CO" "http://127.0.0.1:$PORT/status/404"
    [ "$VG_STATUS" -eq 1 ] || fail "fetch-co /status/404 under valgrind: expected exit 1, got $VG_STATUS: $(cat "$BATS_TEST_TMPDIR/vg.err")"
}
