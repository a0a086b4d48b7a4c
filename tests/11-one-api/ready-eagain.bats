#!/usr/bin/env bats
# Exercise 11-one-api/ready-eagain: on a readiness backend (epoll here), an
# op whose system call says EAGAIN is not over: it waits in its fd's queue
# for the next readiness event. Runs against $IMPL (solutions by default;
# `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite
load exercise

setup() { aio_exercise_setup ready-eagain 10; }

@test "ready-eagain: an accept and a recv with nothing to do yet waits, then completes: aio-test net on epoll" {
    aio_test_net "it hung"
}

@test "ready-eagain: echo-aio waits for clients: client A connects and stays silent, client B is served, then A" {
    local a out
    server_start "${SERVER_CMD[@]}" -p 0
    sleep 0.2 # no client yet: the accept must wait, not fail
    conn_open a
    out=$(run_client -p "$PORT" -t 5 "hello from B") ||
        server_gone "client B was not served while client A sat idle (echo-client status $?)"
    [ "$out" = "hello from B" ] || fail "expected 'hello from B', got '$out'"
    sleep 0.2 # A's recv has found nothing: it must wait for A's bytes
    expect_echo "$a" "A is still served"
    exec {a}>&-
    suite_stop_clean
}

# reset_while_echo_waits PORT: a client with a small receive buffer sends
# until the server stops reading it (its echo waits for room: the server's
# send is pending), then resets the connection (SO_LINGER 0). Prints the
# bytes it sent; exits 1 if the server never stopped reading.
reset_while_echo_waits() {
    python3 - "$1" <<'PY'
import socket, struct, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", int(sys.argv[1])))
s.setblocking(False)
chunk, sent, last = b"x" * 65536, 0, time.monotonic()
# nothing taken for 0.5 s: the server reads no more, its send waits for room
while time.monotonic() - last < 0.5:
    try:
        sent += s.send(chunk)
        last = time.monotonic()
    except BlockingIOError:
        time.sleep(0.01)
    if sent > 64 << 20:
        print("the server read 64 MiB without its echo being read")
        sys.exit(1)
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()
print(sent)
PY
}

@test "ready-eagain: only EAGAIN waits: a send to a client that reset fails, and the server closes the connection" {
    local i before after t0
    command -v python3 >/dev/null || skip "python3 is not installed"
    server_start "${SERVER_CMD[@]}" -p 0
    client_echo "warm up" 3
    before=$(fd_count "$SERVER_PID")
    for i in 1 2 3; do
        run timeout 20 bash -c "$(declare -f reset_while_echo_waits); reset_while_echo_waits $PORT"
        [ "$status" -eq 0 ] || server_gone "client $i: $output (status $status)"
    done
    # The reset makes the pending send fail (ECONNRESET, then EPIPE): the op
    # completes with the error and echo-aio closes the fd. An op sent back to
    # wait instead never completes: its fd, always ready, stays open.
    t0=$SECONDS
    while after=$(fd_count "$SERVER_PID") && [ "$after" -gt "$before" ] && [ $((SECONDS - t0)) -lt 3 ]; do
        sleep 0.1
    done
    [ "$after" -le "$before" ] ||
        fail "expected the server back to $before open fds once 3 clients reset with an echo pending, got $after: a send that failed was left waiting
$(ls -l "/proc/$SERVER_PID/fd" 2>/dev/null)"
    client_echo "still serving" 3
    suite_stop_clean
}
