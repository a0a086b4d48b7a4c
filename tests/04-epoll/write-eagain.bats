#!/usr/bin/env bats
# Exercise 04-epoll/write-eagain (fix): a full socket (write() fails with
# EAGAIN) is not an error. Runs against $IMPL (solutions by default: the
# chapter's own conn.c; `make ex` uses exercises, where the bug is planted).

load ../helpers/common
load ../helpers/echo_suite

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
    CLIENT_TIMEOUT=60 run_client -p "$PORT" --chunk 1M --read-delay 2 <"$in" >"$in.out" || true
    if ! cmp -s "$in" "$in.out"; then
        server_exited && server_gone "the server died"
        fail "sent $(stat -c %s "$in") bytes, got $(stat -c %s "$in.out") back; the server said:
$(tail -n 3 "$SERVER_ERR")"
    fi
    suite_stop_clean
}

@test "write-eagain: a half-closed client gets every byte, then EOF" {
    suite_half_close
}
