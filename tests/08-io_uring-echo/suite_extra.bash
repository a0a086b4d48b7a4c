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
#   ring_all_back WHEN   after a -v server stopped: every buffer of the ring is
#                        back in it by the server's own count
#   uring_shim_env VAR=VALUE...  env(1) arguments preloading chapter 07's
#                        uring-short.so, which changes SQEs before liburing
#                        submits them (URING_SHORT_SEND, _EINTR, _EAGAIN)
#   uring_shim_count NAME  short_sends, eintr or eagain done, from its log
#   uring_shim_injected NAME...  fail unless it did some of each NAME

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

# uring_shim_env VAR=VALUE...: the faults shim wraps libc, and an io_uring
# server moves its bytes with no libc call at all (suite_uring_faults shows
# it). Chapter 07's uring-short.so wraps liburing's io_uring_submit() and
# io_uring_submit_and_wait() instead: it shortens sends, and turns recvs and
# sends into NOPs that complete with -EINTR or -EAGAIN, before the kernel
# sees them (uring-short.c says how). `make ex` builds only the exercise: the
# library is then compiled here, as the chapter's Makefile would.
uring_shim_env() {
    local shim="$BUILD/chapters/07-io_uring-basics/uring-short.so"
    if [ ! -f "$shim" ]; then
        shim="$BATS_FILE_TMPDIR/uring-short.so"
        [ -f "$shim" ] || gcc -std=c11 -D_GNU_SOURCE -O1 -fPIC -shared -o "$shim" \
            "$TOP/chapters/07-io_uring-basics/uring-short.c" -ldl -luring ||
            fail "could not compile chapters/07-io_uring-basics/uring-short.c"
    fi
    echo "LD_PRELOAD=$shim URING_SHORT_LOG=$BATS_TEST_TMPDIR/uring-short.log ASAN_OPTIONS=verify_asan_link_order=0:${ASAN_OPTIONS:-} $*"
}

uring_shim_count() {
    log_total "$BATS_TEST_TMPDIR/uring-short.log" "$1"
}

# uring_shim_injected NAME...: uring-short.so did some of each NAME, or the
# test proved nothing; a kernel that cannot inject a NOP's result (an
# older one) makes the test skip, saying so.
uring_shim_injected() {
    if grep -q 'inject_unsupported=1' "$BATS_TEST_TMPDIR/uring-short.log" 2>/dev/null; then
        skip "this kernel ($(uname -r)) cannot complete a NOP with an injected result (IORING_NOP_INJECT_RESULT, recent kernels only), so uring-short cannot fake -EINTR or -EAGAIN"
    fi
    counted_positive uring_shim_count "uring-short.so" "$@"
}

# stat_of NAME: a counter from the server's "stats: ..." line (-v), e.g.
# stat_of "short sends".
stat_of() {
    sed -n "s/^stats: .*$1 \([0-9]*\).*/\1/p" "$SERVER_ERR" | tail -n 1
}

# ring_all_back WHEN: the server (run with -v) has stopped; at exit, with
# every request ended and every connection freed, all its buffers must be
# back in the ring by its own count ("buffers N, back in ring N"). A count
# that drifts (a buffer given twice, one never counted back, a publish that
# counts what it did not hand over) shows here even while every echo is
# right. WHEN says what the server went through.
ring_all_back() {
    local count back
    count=$(stat_of buffers) back=$(stat_of "back in ring")
    [ -n "$count" ] && [ -n "$back" ] ||
        fail "no 'buffers N, back in ring N' in the server's stats line: $(cat "$SERVER_ERR")"
    [ "$back" -eq "$count" ] ||
        fail "$1: expected all $count buffers back in the ring at exit, the server counts $back: $(grep '^stats:' "$SERVER_ERR")"
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
