#!/usr/bin/env bats
# Exercise 04-epoll/write-eagain (fix): a full socket (write() fails with
# EAGAIN) is not an error. Runs against $IMPL (solutions by default: the
# chapter's own conn.c; `make ex` uses exercises, where the bug is planted).

load ../helpers/common
load ../helpers/echo_suite
load event-loop

setup() {
    SERVER_CMD=("$(impl_bin write-eagain echo-epoll-lt)")
}

@test "write-eagain: a message comes back" {
    suite_start
    client_echo "hello, epoll"
    suite_stop_clean
}

@test "write-eagain: 16 MiB to a slow reader come back intact (a full socket means: wait for EPOLLOUT)" {
    local in="$BATS_TEST_TMPDIR/large"
    suite_start
    payload "$in" $((16 * 1024 * 1024))
    # 1 MiB written per turn, 64 KiB read after a 2 ms nap: the echo piles up
    # in the server's socket until write() says EAGAIN.
    # The chapter's server takes under a second; a stall is reported after 10 s.
    CLIENT_TIMEOUT=$((10 * $(san_slowdown))) run_client -p "$PORT" --chunk 1M --read-delay 2 <"$in" >"$in.out" || true
    if ! cmp -s "$in" "$in.out"; then
        server_exited && server_gone "the server died"
        fail "sent $(stat -c %s "$in") bytes, got $(stat -c %s "$in.out") back; the server said:
$(tail -n 3 "$SERVER_ERR")"
    fi
    suite_stop_clean
}

@test "write-eagain: a client that sends and never reads holds up nobody: another client is served meanwhile" {
    # Its echo fills the server's socket for good. A server that waits for
    # room there (a blocking socket, or write() tried again at once until it
    # takes something) serves nobody else from then on.
    suite_never_reading_client
}

@test "write-eagain: every byte survives short writes, EINTR and EAGAIN made at random by the faults shim, within 10 s" {
    # The shim fails some write() calls with EAGAIN on a socket that has
    # room: the server must keep the rest and wait for EPOLLOUT, as for a
    # full socket. The shim's log proves it injected each kind. The
    # chapter's server takes about a second.
    faults_echo_within 10 FAULTS_SHORT_READ=30 FAULTS_SHORT_WRITE=50 FAULTS_EINTR=10 FAULTS_EAGAIN=10
    faults_injected short_writes eintr eagain
}

@test "write-eagain: a half-closed client gets every byte, then EOF" {
    suite_half_close
}
