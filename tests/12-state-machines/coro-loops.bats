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

@test "fetch-co, slow server (200 ms): the receive loop awaits, then reads on to the end" {
    server_start "$HTTP_SERVER" -p 0 -d 200
    fetch_upper "$FETCH_CO" /slow/hello
}

@test "fetch-co: a 200 kB response cut into tiny reads, with EAGAIN at random, comes out whole (faults shim)" {
    server_start "$HTTP_SERVER" -p 0 -s 200000
    fetch_upper "$FETCH_CO" /big $(faults_env FAULTS_SHORT_READ=95 FAULTS_EAGAIN=30 FAULTS_SEED=7)
    [ "$(faults_count short_reads)" -ge 50 ] || fail "the shim cut only $(faults_count short_reads) reads"
}

@test "fetch-co: the request sent in pieces, with EAGAIN at random, still arrives whole (faults shim)" {
    server_start "$HTTP_SERVER" -p 0
    fetch_upper "$FETCH_CO" /a/path/long/enough/to/be/cut/into/several/pieces/by/the/shim \
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
