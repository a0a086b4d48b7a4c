#!/usr/bin/env bats
# Chapter 11: the cio library's IOCP backend: the same aio-test.c (the API's
# promises) and echo-aio.c, cross-compiled with mingw-w64
# (chapters/11-one-api/win/) and run under Wine. Wine is set up as in chapter 09 (tests/helpers/wine.bash: one
# prefix per build folder, under build/wine/; servers stopped with SIGINT,
# which Wine delivers as Ctrl-C, because SIGTERM ends a Windows process at
# once).

load ../helpers/common
load ../helpers/echo_suite
load ../helpers/wine

setup_file() { wine_setup_file; }
teardown_file() { wine_teardown_file; }

setup() {
    wine_require
    SERVER_CMD=("$WINE" "$(chapter_bin win/echo-aio.exe)")
    export CLIENT_TIMEOUT=20
}

# The server's last lines on stderr after a clean shutdown.
require_all_freed() {
    grep -q '^echo-aio: [0-9]* connections served, 0 still open' "$SERVER_ERR" ||
        fail "expected '0 still open' after shutdown; stderr:
$(cat "$SERVER_ERR")"
}

# aio_test_exe NAME: one API test of aio-test.exe; exit 0 and "all checks passed".
aio_test_exe() {
    run wine_exec 120 "$(chapter_bin win/aio-test.exe)" "$1"
    echo "$output" | sed 's/^/# /' >&3
    [ "$status" -eq 0 ] || fail "aio-test.exe $1: exit $status
$output"
    assert_output --partial "backend iocp"
    assert_output --partial "all checks passed"
}

@test "cio (iocp): timeouts of 300, 100, 200 and 50 ms complete in order, none early or 1 s late; a cancelled one with -ECANCELED" {
    aio_test_exe timers
    assert_output --regexp "timeout 150 ms, cancelled: res -[0-9]+ \(cancelled\), 1 callback"
}
@test "cio (iocp): a recv cancelled with CancelIoEx completes once with -ECANCELED, its buffer untouched afterwards" {
    aio_test_exe cancel
    assert_output --partial "the cancelled recv's buffer is untouched"
    assert_output --partial 'the next recv: res 5, "after"'
}
@test "cio (iocp): overlapped ReadFile at 6 offsets in flight at once returns the file's bytes, 1000 at the tail, 0 at and past the end" {
    aio_test_exe files
    assert_output --partial "offset 99000 of 100000: res 1000, the file's bytes"
    assert_output --partial "offset 200000 of 100000: res 0"
}
@test "cio (iocp): AcceptEx, WSARecv and WSASend complete; an 8 MiB send completes once, whole; recv at end of stream is 0" {
    aio_test_exe net
    assert_output --partial "a send of 8388608 bytes: res 8388608, 1 callback, 8388608 bytes received, 0 wrong"
    assert_output --partial "recv after the peer's shutdown: res 0"
}

@test "cio (iocp): a WSARecv that waited beside a WSASend that waited for room: once the send completed, the idle loop sleeps (at most 3 wake-ups in 300 ms)" {
    aio_test_exe idle
    assert_output --regexp "idle with a recv waiting, after a send that waited for room: [123] wake-ups? in 300 ms"
}

@test "cio (iocp): a pooled recv (zero-byte WSARecv) holds no buffer while it waits; a full pool parks it until a release; 1000 recvs recycle 4 buffers" {
    aio_test_exe pool
    assert_output --partial "a pooled recv waiting on a silent client: 0 callbacks, 0 buffers held"
    assert_output --partial 'pooled recv: res 5, "hello" in a pool buffer, 1 held'
    assert_output --partial "pooled recv at end of stream: res 0, buf NULL, 0 held"
    assert_output --partial "5 pooled recvs with bytes waiting, 4 buffers: 4 completed, 4 held, 1 waiting"
    assert_output --regexp "a parked recv, cancelled: res -[0-9]+ \(cancelled\), buf NULL, 4 held"
    assert_output --partial "every buffer held, a recv on a silent client and one with bytes waiting; after a release: the one with bytes has them, the silent one waits"
    assert_output --regexp "1000 with the right bytes, [1-4] distinct buffers, 0 held"
}

@test "echo-aio.exe (iocp): runs on the IOCP backend: completion, file reads in the kernel, timeouts in the library" {
    suite_start
    suite_stop_clean
    grep -q '^echo-aio: backend iocp (completion; file reads asynchronous in the kernel; timeouts in a list in the library)' "$SERVER_ERR" ||
        fail "no 'echo-aio: backend iocp (...)' line: $(cat "$SERVER_ERR")"
}
@test "echo-aio.exe (iocp): a pooled recv is a zero-byte WSARecv, then a pool buffer (CIO_TRACE=1)" {
    local a
    CIO_TRACE=1 suite_start
    conn_open a
    expect_echo "$a" "traced"
    exec {a}>&-
    suite_stop_clean
    grep -Eq '^cio\[iocp\]: recv-pooled fd=[0-9]+ -> zero-byte receive, then a pool buffer' "$SERVER_ERR" ||
        fail "no zero-byte recv trace line: $(cat "$SERVER_ERR")"
    require_all_freed
}
@test "echo-aio.exe (iocp): 1,000 idle connections, each with a zero-byte receive posted, are all served" {
    suite_many_idle 1000
    require_all_freed
}
@test "echo-aio.exe (iocp): with a pool of one buffer (CIO_BUFS=1), 50 clients at once all get their bytes back" {
    CIO_BUFS=1 suite_many_clients
    require_all_freed
}
@test "echo-aio.exe (iocp): SIGINT (Ctrl-C) with clients connected cancels every op and exits 0, all freed" {
    suite_sigterm_with_clients
    require_all_freed
}
@test "echo-aio.exe (iocp): CIO_BACKEND=epoll is refused on Windows, exit 2" {
    CIO_BACKEND=epoll run wine_exec 30 "$(chapter_bin win/echo-aio.exe)" -p 0
    assert_failure 2
    assert_output --partial "CIO_BACKEND=epoll: no such backend in this program (it has: iocp)"
}
