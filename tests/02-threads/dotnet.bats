#!/usr/bin/env bats
# Chapter 02's C# program (chapters/02-threads/dotnet/): unblock-dotnet, what
# Socket.Dispose does on Linux to a thread blocked in a synchronous Receive
# (the chapter's .NET section). Each test skips, saying why, without the
# .NET SDK.

load ../helpers/common
load ../helpers/echo_suite

setup() {
    require_dotnet
}

# unblock_traced [-s]: run unblock-dotnet under strace (connect, shutdown),
# leaving its output in $output and the trace in $BATS_TEST_TMPDIR/trace.
unblock_traced() {
    require_strace
    run timeout 60 strace -f -qq -e trace=connect,shutdown -o "$BATS_TEST_TMPDIR/trace" "$(chapter_bin unblock-dotnet)" "$@"
    echo "# $(paste -sd '|' - <<<"$output")" >&3
    echo "# strace: $(grep -E 'AF_UNSPEC|shutdown\(' "$BATS_TEST_TMPDIR/trace" | sed 's/^[0-9]* *//' | paste -sd ' ' -)" >&3
}

@test "unblock-dotnet: Dispose wakes a thread blocked in Receive at once with a reset: connect() to AF_UNSPEC, and the peer sees ConnectionReset" {
    unblock_traced
    assert_success
    assert_line --regexp '^the Receive ended [0-9]+ ms after Dispose: SocketException \(ConnectionAborted\)$'
    assert_line "the peer's Receive: ConnectionReset (the connection was reset: RST)"
    grep -q 'connect([0-9]*, {sa_family=AF_UNSPEC' "$BATS_TEST_TMPDIR/trace" ||
        fail "expected a connect() to AF_UNSPEC (SystemNative_Disconnect), got: $(cat "$BATS_TEST_TMPDIR/trace")"
    ! grep -q 'SHUT_RDWR' "$BATS_TEST_TMPDIR/trace" ||
        fail "expected no shutdown(SHUT_RDWR) when the disconnect succeeds, got: $(cat "$BATS_TEST_TMPDIR/trace")"
}

@test "unblock-dotnet -s: after Shutdown(Send), Dispose wakes it with shutdown(SHUT_RDWR) instead, and the peer sees the end of the stream" {
    unblock_traced -s
    assert_success
    assert_line --regexp '^the Receive ended [0-9]+ ms after Dispose: SocketException \(ConnectionAborted\)$'
    assert_line "the peer's Receive: end of stream (an orderly close: FIN)"
    grep -q 'shutdown([0-9]*, SHUT_RDWR)' "$BATS_TEST_TMPDIR/trace" ||
        fail "expected shutdown(SHUT_RDWR), got: $(cat "$BATS_TEST_TMPDIR/trace")"
    ! grep -q 'AF_UNSPEC' "$BATS_TEST_TMPDIR/trace" ||
        fail "expected no connect() to AF_UNSPEC after Shutdown(Send), got: $(cat "$BATS_TEST_TMPDIR/trace")"
}

@test "unblock-dotnet: -h prints the usage, an unknown option exits 2 naming it" {
    run "$(chapter_bin unblock-dotnet)" -h
    assert_success
    assert_line --index 0 "usage: unblock-dotnet [-s]"
    run "$(chapter_bin unblock-dotnet)" -x
    [ "$status" -eq 2 ] || fail "expected exit status 2, got $status"
    assert_line --index 0 "unblock-dotnet: unknown option -x"
}
