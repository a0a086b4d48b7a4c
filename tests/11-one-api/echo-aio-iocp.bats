#!/usr/bin/env bats
# Chapter 11: echo-aio on the cio library's IOCP backend: the same
# echo-aio.c, cross-compiled with mingw-w64 (chapters/11-one-api/win/) and run
# under Wine. Wine is set up as in chapter 09 (tests/helpers/wine.bash: one
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

@test "echo-aio.exe (iocp): runs on the IOCP backend: completion, file reads in the kernel, timeouts in the library" {
    suite_start
    suite_stop_clean
    grep -q '^echo-aio: backend iocp (completion; file reads asynchronous in the kernel; timeouts in a list in the library)' "$SERVER_ERR" ||
        fail "no 'echo-aio: backend iocp (...)' line: $(cat "$SERVER_ERR")"
}
@test "echo-aio.exe (iocp): a pooled recv is a zero-byte WSARecv, then a pool buffer (AIO_TRACE=1)" {
    local a
    AIO_TRACE=1 suite_start
    conn_open a
    expect_echo "$a" "traced"
    exec {a}>&-
    suite_stop_clean
    grep -Eq '^aio\[iocp\]: recv-pooled fd=[0-9]+ -> zero-byte receive, then a pool buffer' "$SERVER_ERR" ||
        fail "no zero-byte recv trace line: $(cat "$SERVER_ERR")"
    require_all_freed
}
@test "echo-aio.exe (iocp): 1,000 idle connections, each with a zero-byte receive posted, are all served" {
    suite_many_idle 1000
    require_all_freed
}
@test "echo-aio.exe (iocp): binary data comes back intact" {
    suite_binary_data
    require_all_freed
}
@test "echo-aio.exe (iocp): 50 clients at once all get their bytes back" {
    suite_many_clients
    require_all_freed
}
@test "echo-aio.exe (iocp): with a pool of one buffer (AIO_BUFS=1), 50 clients at once all get their bytes back" {
    AIO_BUFS=1 suite_many_clients
    require_all_freed
}
@test "echo-aio.exe (iocp): a half-closed client gets every byte, then EOF" {
    suite_half_close
    require_all_freed
}
@test "echo-aio.exe (iocp): a 16 MiB payload comes back intact" {
    suite_large_payload
    require_all_freed
}
@test "echo-aio.exe (iocp): SIGINT (Ctrl-C) with clients connected cancels every op and exits 0, all freed" {
    suite_sigterm_with_clients
    require_all_freed
}
@test "echo-aio.exe (iocp): AIO_BACKEND=epoll is refused on Windows, exit 2" {
    AIO_BACKEND=epoll run timeout 30 "$WINE" "$(chapter_bin win/echo-aio.exe)" -p 0
    assert_failure 2
    assert_output --partial "AIO_BACKEND=epoll: no such backend in this program (it has: iocp)"
}
