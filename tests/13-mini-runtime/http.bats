#!/usr/bin/env bats
# Chapter 13: http-rt, the static file server on the runtime, checked with
# real clients (curl, wrk) and with fetch-rt, the runtime's own client.

load ../helpers/common

setup() {
    command -v curl >/dev/null || skip "curl is not installed (make deps)"
    ROOT="$BATS_TEST_TMPDIR/www"
    mkdir -p "$ROOT/sub"
    printf 'hello from http-rt\n' >"$ROOT/index.html"
    printf 'a text file\n' >"$ROOT/sub/a.txt"
    payload "$ROOT/big.bin" 300000
    printf 'not for the web\n' >"$BATS_TEST_TMPDIR/secret.txt"
    ln -s ../secret.txt "$ROOT/escape.txt" # a symbolic link that leaves the root
}

# http_start [ARGS]: http-rt on port 0 serving $ROOT; URL is its base.
http_start() {
    server_start "$(chapter_bin http-rt)" -p 0 -r "$ROOT" "$@"
    URL="http://127.0.0.1:$PORT"
}

# status PATH [CURL ARGS]: the status code curl gets.
status() {
    local path="$1"
    shift
    timeout 10 curl -s -o /dev/null -w '%{http_code}' "$@" "$URL$path"
}

@test "GET returns the file's exact bytes with Content-Length and keep-alive; / is index.html" {
    http_start
    timeout 10 curl -s -D "$BATS_TEST_TMPDIR/h" -o "$BATS_TEST_TMPDIR/got" "$URL/big.bin"
    cmp "$ROOT/big.bin" "$BATS_TEST_TMPDIR/got" || fail "the body differs from the file"
    grep -q '^HTTP/1.1 200 OK' "$BATS_TEST_TMPDIR/h"
    grep -qi '^Content-Length: 300000' "$BATS_TEST_TMPDIR/h" || fail "headers: $(cat "$BATS_TEST_TMPDIR/h")"
    grep -qi '^Connection: keep-alive' "$BATS_TEST_TMPDIR/h"
    run timeout 10 curl -s "$URL/"
    assert_output "hello from http-rt"
    server_stop
    [ "$SERVER_STATUS" -eq 0 ]
}

@test "HEAD sends the same headers and no body" {
    http_start
    run timeout 10 curl -s -I "$URL/sub/a.txt"
    assert_success
    assert_line --partial "HTTP/1.1 200 OK"
    assert_line --partial "Content-Length: 12"
    assert_line --partial "Content-Type: text/plain"
    # curl -I stops at the head; a raw HEAD shows nothing follows it
    run bash -c "printf 'HEAD /sub/a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' | timeout 5 socat - TCP:127.0.0.1:$PORT"
    refute_output --partial "a text file"
}

@test "404 for a missing file, 405 with Allow for POST, 400 for a malformed request" {
    http_start
    [ "$(status /missing)" = 404 ]
    [ "$(status /sub)" = 404 ] # a directory is not a file
    [ "$(status / -X POST)" = 405 ]
    run timeout 10 curl -s -i -X DELETE "$URL/"
    assert_output --partial "Allow: GET, HEAD"
    run bash -c "printf 'garbage\r\n\r\n' | timeout 5 socat - TCP:127.0.0.1:$PORT"
    assert_output --partial "HTTP/1.1 400 Bad Request"
}

@test "a path that climbs out of the root is refused: .. gets 400, a symbolic link out of it 404, and the secret never leaks" {
    http_start
    [ "$(status /../secret.txt --path-as-is)" = 400 ]
    [ "$(status /sub/../../secret.txt --path-as-is)" = 400 ]
    [ "$(status /%2e%2e/secret.txt --path-as-is)" = 400 ]
    [ "$(status /escape.txt)" = 404 ] # openat2 RESOLVE_BENEATH refuses it
    run timeout 10 curl -s --path-as-is "$URL/../secret.txt" "$URL/escape.txt"
    refute_output --partial "not for the web"
}

@test "keep-alive: curl reuses one connection for two requests; 'Connection: close' is honoured" {
    http_start
    run timeout 10 curl -sv "$URL/" "$URL/sub/a.txt"
    assert_output --partial "Re-using existing connection"
    run bash -c "printf 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' | timeout 5 socat -t 5 - TCP:127.0.0.1:$PORT"
    assert_success
    assert_output --partial "Connection: close"
}

@test "two pipelined requests in one write get two responses, in order" {
    http_start
    run bash -c "printf 'GET /sub/a.txt HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' | timeout 5 socat -t 5 - TCP:127.0.0.1:$PORT"
    assert_success
    [ "$(echo "$output" | grep -c '^HTTP/1.1 200 OK')" -eq 2 ] || fail "expected 2 responses: $output"
    [[ "$output" == *"a text file"*"hello from http-rt"* ]] || fail "out of order: $output"
}

@test "a connection that sends nothing is closed after the idle timeout (-i 300), by cancellation, not before" {
    http_start -i 300
    local fd start end
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
    start=$(date +%s%N)
    timeout 10 cat <&"$fd" >/dev/null || fail "the idle connection stayed open 10 s"
    end=$(date +%s%N)
    exec {fd}>&-
    local ms=$(((end - start) / 1000000))
    echo "# closed after $ms ms" >&3
    [ "$ms" -ge 250 ] || fail "closed after $ms ms, before the 300 ms idle timeout"
    [ "$ms" -lt 5000 ] || fail "closed only after $ms ms"
    require_server_alive
}

@test "rt_read_file: in the kernel on io_uring, on a pool thread on epoll (RT_TRACE=1)" {
    RT_BACKEND=epoll RT_TRACE=1 http_start
    timeout 10 curl -s -o /dev/null "$URL/big.bin"
    server_stop
    grep -q "http-rt: backend epoll, files read on the pool" "$SERVER_ERR"
    grep -Eq "rt\[epoll\]: read-file fd=[0-9]+ len=65536 offset=0 -> pool thread" "$SERVER_ERR" ||
        fail "no pool read in: $(cat "$SERVER_ERR")"
    RT_BACKEND=uring RT_TRACE=1 run timeout 10 "$(chapter_bin rt-test)" probe
    [ "$status" -ne 77 ] || skip "io_uring is not allowed here: $output"
    RT_BACKEND=uring RT_TRACE=1 http_start
    timeout 10 curl -s -o /dev/null "$URL/big.bin"
    server_stop
    grep -Eq "rt\[uring\]: read-file fd=[0-9]+ len=65536 offset=0 -> native" "$SERVER_ERR" ||
        fail "no native read in: $(cat "$SERVER_ERR")"
}

@test "fetch-rt fetches three URLs at once: two files whole and a 404" {
    http_start
    run timeout 20 "$(chapter_bin fetch-rt)" "$URL/big.bin" "$URL/sub/a.txt" "$URL/missing"
    assert_success
    assert_line "200 $URL/big.bin: 300000 bytes in ${lines[0]##* in }"
    assert_line --regexp "^200 $URL/sub/a.txt: 12 bytes in [0-9]+ ms$"
    assert_line --regexp "^404 $URL/missing: [0-9]+ bytes in [0-9]+ ms$"
    assert_line --regexp "^3 URLs fetched at once in [0-9]+ ms, 0 failed$"
    run timeout 20 "$(chapter_bin fetch-rt)" -o "$URL/big.bin"
    assert_success
    timeout 20 "$(chapter_bin fetch-rt)" -o "$URL/big.bin" 2>/dev/null | cmp - "$ROOT/big.bin"
}

@test "fetch-rt -t 300 against a server that never answers gives up with 'timed out' in time" {
    http_start
    kill -STOP "$SERVER_PID" # connects still succeed (the backlog), nothing answers
    local start=$(date +%s%N)
    run timeout 10 "$(chapter_bin fetch-rt)" -t 300 "$URL/" "$URL/sub/a.txt"
    local ms=$((($(date +%s%N) - start) / 1000000))
    kill -CONT "$SERVER_PID"
    assert_failure 1
    assert_output --partial "$URL/: timed out"
    [ "$ms" -lt 5000 ] || fail "took $ms ms"
}

@test "wrk: 2 s of load with 20 connections, every response a 200" {
    command -v wrk >/dev/null || skip "wrk is not installed (make deps)"
    http_start
    run timeout 30 wrk -t1 -c20 -d2s "$URL/sub/a.txt"
    assert_success
    echo "$output" | sed 's/^/# /' >&3
    refute_output --partial "Non-2xx"
    refute_output --partial "Socket errors"
    [[ "$output" =~ ([0-9]+)\ requests\ in ]] && [ "${BASH_REMATCH[1]}" -gt 100 ] ||
        fail "too few requests: $output"
    server_stop
    [ "$SERVER_STATUS" -eq 0 ]
}

@test "SIGTERM with an idle keep-alive connection and a request in progress exits 0" {
    http_start
    local a b
    exec {a}<>"/dev/tcp/127.0.0.1/$PORT"
    exec {b}<>"/dev/tcp/127.0.0.1/$PORT"
    printf 'GET / HTT' >&"$b" # half a request
    sleep 0.2
    stop_within 5
    exec {a}>&- {b}>&-
}

@test "valgrind: no leak, no error, no fd left open after requests on epoll (pool threads) and SIGTERM" {
    case "$BUILD" in */san-*) skip "valgrind does not run sanitized binaries" ;; esac
    command -v valgrind >/dev/null || skip "valgrind is not installed (make deps)"
    local log="$BATS_TEST_TMPDIR/valgrind.log" a leaked
    RT_BACKEND=epoll server_start valgrind -q --leak-check=full --errors-for-leak-kinds=all \
        --error-exitcode=1 --track-fds=yes --log-file="$log" "$(chapter_bin http-rt)" -p 0 -r "$ROOT"
    URL="http://127.0.0.1:$PORT"
    exec {a}<>"/dev/tcp/127.0.0.1/$PORT"
    timeout 30 curl -s -o "$BATS_TEST_TMPDIR/got" "$URL/big.bin" "$URL/missing" -o /dev/null
    cmp "$ROOT/big.bin" "$BATS_TEST_TMPDIR/got"
    server_stop TERM
    exec {a}>&-
    [ "$SERVER_STATUS" -eq 0 ] || fail "valgrind exit $SERVER_STATUS: $(cat "$log")"
    leaked=$(awk '/Open (file descriptor|AF_)/ { fd = $0; getline; if ($0 !~ /inherited from parent/) print fd }' "$log")
    [ -z "$leaked" ] || fail "fds left open at exit: $leaked"
}
