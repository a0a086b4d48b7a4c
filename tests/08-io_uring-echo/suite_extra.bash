# SPDX-License-Identifier: MIT
# tests/08-io_uring-echo/suite_extra.bash: cases written for chapter 08's
# io_uring servers, in the shape of tests/helpers/echo_suite.bash (they use
# its suite_start, suite_stop_clean, traced_echo_load and calls_of), for any server
# that takes -K (check the kernel, exit 77 if it lacks something), -v
# (statistics on stderr at exit) and -S BYTES (SO_SNDBUF of accepted sockets).
#
#   load ../helpers/common
#   load ../helpers/echo_suite
#   load suite_extra
#
#   uring_server PROG [ARGS]   in setup(): SERVER_CMD, skipped where io_uring is refused

# shellcheck disable=SC2154 # output, status and stderr are set by bats' run

# uring_server PROGRAM [ARGS...]: in setup(), the server under test
# (SERVER_CMD), skipped with its reason where io_uring is refused.
uring_server() {
    SERVER_CMD=("$@")
    require_uring
}

# require_uring: skip, with the server's own reason, where io_uring is
# refused (a sysctl, a seccomp filter) or the kernel lacks a feature.
require_uring() {
    run "${SERVER_CMD[@]}" -K
    [ "$status" -ne 77 ] || skip "$output"
    [ "$status" -eq 0 ] || fail "${SERVER_CMD[*]} -K: expected exit 0 or 77, got $status: $output"
}

# stat_of NAME: a counter from the server's "stats: ..." line (-v), e.g.
# stat_of "short sends".
stat_of() {
    sed -n "s/^stats: .*$1 \([0-9]*\).*/\1/p" "$SERVER_ERR" | tail -n 1
}

# suite_ring_runs_dry SECONDS WHY: 16 clients of 200 KB share 8 buffers of
# 1 KiB (-B 8 -s 1024), so the ring runs dry (ENOBUFS) and multishot recvs
# end under load; every client must get its bytes back within SECONDS (WHY
# says what stalled if not), and the server must have counted ENOBUFS.
suite_ring_runs_dry() {
    local n
    server_start "${SERVER_CMD[@]}" -B 8 -s 1024 -v -p 0
    clients_at_once 16 200000 -t "$1" || server_gone "some of 16 clients sharing 8 buffers $2"
    suite_stop_clean
    n=$(stat_of ENOBUFS)
    echo "# 16 clients x 200 KB over 8 buffers of 1 KiB: $(grep '^stats:' "$SERVER_ERR")" >&3
    [ "${n:-0}" -gt 0 ] || fail "the ring never ran dry (ENOBUFS 0): the test proved nothing"
}

# suite_short_sends [ARGS...]: short sends without the shim. The server's
# sockets get a tiny send buffer (-S 4096), its buffers are large (ARGS, e.g.
# -s 262144: TCP queues a small send whole, even past SO_SNDBUF), and the
# client reads slowly, so sends complete with fewer bytes than asked. The
# server counts them (-v) and must send the rest, in order.
suite_short_sends() {
    local in="$BATS_TEST_TMPDIR/short" n
    server_start "${SERVER_CMD[@]}" -S 4096 -v "$@" -p 0
    payload "$in" $((4 * 1024 * 1024))
    slow_reader_echo "$in" 20
    suite_stop_clean
    n=$(stat_of "short sends")
    echo "# 4 MiB to a slow reader through SO_SNDBUF 4096: $n short sends, all resent" >&3
    [ -n "$n" ] || fail "no 'short sends N' in the server's stats line: $(cat "$SERVER_ERR")"
    [ "$n" -gt 0 ] || fail "no send completed short: the test did not exercise short sends"
}

# suite_uring_syscalls MAX_ENTERS_PER_100: under `strace -f -c`, 50
# connections echo 200 messages of 128 bytes each (10,000 messages). No
# read/write/recv/send/poll/epoll call may carry them (at most 1 per 100
# messages, for start-up and the "listening on" line), and io_uring_enter()
# may be called at most MAX_ENTERS_PER_100 times per 100 messages.
suite_uring_syscalls() {
    local max="$1" trace="$BATS_TEST_TMPDIR/strace-c" msgs=10000 enters rw
    traced_echo_load "$trace" 50 200
    enters=$(calls_of "$trace" io_uring_enter)
    rw=$(calls_of "$trace" read write readv writev recv recvfrom recvmsg send sendto sendmsg \
        poll ppoll select pselect6 epoll_wait epoll_pwait epoll_pwait2)
    echo "# $msgs messages over 50 connections: $enters io_uring_enter, $rw read/write/recv/send/poll/epoll calls" >&3
    [ "$enters" -gt 0 ] || fail "no io_uring_enter() in the summary: $(cat "$trace")"
    # a read/write data path makes about 2 per message; start-up makes a few
    # (a sanitizer's runtime some 30 more)
    [ "$rw" -le $((msgs / 100)) ] ||
        fail "$rw read/write/recv/send/poll calls for $msgs messages: the data path is not io_uring ($(cat "$trace"))"
    [ "$enters" -le $((msgs * max / 100)) ] ||
        fail "$enters io_uring_enter() calls for $msgs messages: more than $max per 100"
}
