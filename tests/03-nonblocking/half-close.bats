#!/usr/bin/env bats
# Exercise 03-nonblocking/half-close (fix): the chapter's echo-poll with a
# planted bug in conn.c. Runs against $IMPL (solutions: the chapter's own
# code; `make ex` uses the learner's copy).

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(impl_bin half-close echo-poll)")
}

# half_close_client PORT BYTES: send BYTES of random data without reading,
# half-close, wait 1.5 s, then read to EOF, slowly. Prints "sent N got M
# intact BOOL". Its receive buffer is tiny and it reads slowly, so what the
# server cannot send waits in the server: in its socket's send buffer (at
# most tcp_wmem's maximum) and in the connection's pending output. A server
# that stops reading above its bound reads the client's EOF only once it
# drained below it, and a slow reader keeps output pending even then: the
# half-close finds it there, every time, not only on a quiet machine.
half_close_client() {
    timeout 30 python3 - "$@" <<'PY'
import os, socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", port))
data = os.urandom(n)
s.sendall(data)
s.shutdown(socket.SHUT_WR)
time.sleep(1.5)
got = bytearray()
while True:
    b = s.recv(4096)
    if not b:
        break
    got += b
    time.sleep(0.0005)  # a slow reader: the server's last bytes wait for it
print("sent", n, "got", len(got), "intact", bytes(got) == data)
PY
}

@test "half-close: a client that sends, half-closes, then reads gets every byte back, then EOF" {
    local wmem n
    command -v python3 >/dev/null || skip "python3 is not installed"
    # more than the server's socket can hold: the rest (512 KiB) is still
    # pending in the server when it reads the client's EOF
    wmem=$(awk '{ print $3 }' /proc/sys/net/ipv4/tcp_wmem)
    n=$((wmem + 512 * 1024))
    suite_start
    run half_close_client "$PORT" "$n"
    [ "$status" -eq 0 ] || server_gone "the client failed (status $status): $output"
    [ "$output" = "sent $n got $n intact True" ] ||
        fail "$output: the echo still pending when the client half-closed was lost"
    suite_stop_clean
}

@test "half-close: a client that half-closes at once gets EOF at once" {
    suite_start
    run_client -p "$PORT" -t 5 </dev/null >"$BATS_TEST_TMPDIR/empty.out" ||
        server_gone "a client that sent nothing and half-closed did not see EOF (status $?)"
    [ ! -s "$BATS_TEST_TMPDIR/empty.out" ] || fail "got bytes back for an empty request"
    suite_stop_clean
}

@test "half-close: without a half-close the connection stays open and keeps echoing" {
    local a
    suite_start
    conn_open a
    expect_echo "$a" one
    expect_echo "$a" two
    exec {a}>&-
    suite_stop_clean
}
