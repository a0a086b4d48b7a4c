# Chapter 15: mini-redis under injected faults, as every echo server of the
# course faces them (the shared suite's faults case). On epoll, the libc
# faults shim cuts reads and writes short and fails calls with EINTR and
# EAGAIN; on io_uring, chapter 07's uring-short.so cuts sends short and
# completes some receives and sends with -EINTR or -EAGAIN. The replies to
# the differential scripts must still be redis-server's, byte for byte, and
# 20,000 pipelined commands must all be answered; each test fails unless
# the shim injected each kind of fault it names.

load ../helpers/common
load ../helpers/echo_suite
load redis

setup() {
    require_redis
    redis_start
}

# scripts_and_pipe WHAT: the strings, lists and multi scripts against
# redis-server and the running mini-redis, the same bytes for each; then
# redis-cli --pipe with 20,000 SETs, every one answered.
scripts_and_pipe() {
    local s
    for s in strings lists multi; do
        timeout 10 redis-cli -s "$REDIS_SOCK" flushall >/dev/null
        timeout 10 redis-cli -p "$PORT" flushall >/dev/null || server_gone "FLUSHALL under $1"
        both "$SCRIPTS/$s.redis" </dev/null
        same_replies "$s.redis under $1"
    done
    untraced mass_insert >"$BATS_TEST_TMPDIR/mass"
    run timeout 60 redis-cli -p "$PORT" --pipe <"$BATS_TEST_TMPDIR/mass"
    [ "$status" -eq 0 ] && [[ "$output" == *"errors: 0, replies: 20000"* ]] ||
        server_gone "redis-cli --pipe under $1 (status $status): $output"
    run timeout 10 redis-cli -p "$PORT" get key:19999
    assert_output 19999
    server_stop
    [ "$SERVER_STATUS" -eq 0 ] || fail "mini-redis exited with $SERVER_STATUS under $1"
}

@test "epoll, under the faults shim (short reads and writes, EINTR, EAGAIN): redis-server's replies, 20,000 pipelined commands answered" {
    # shellcheck disable=SC2046 # faults_env prints words for env(1)
    RT_BACKEND=epoll server_start env $(faults_env FAULTS_SHORT_READ=30 FAULTS_SHORT_WRITE=50 \
        FAULTS_EINTR=10 FAULTS_EAGAIN=20) "$(chapter_bin mini-redis)" -p 0
    scripts_and_pipe "the faults shim"
    echo "# the faults shim: $(faults_count short_reads) short reads, $(faults_count short_writes) short writes, $(faults_count eintr) EINTR, $(faults_count eagain) EAGAIN" >&3
    faults_injected short_reads short_writes eintr eagain
}

@test "io_uring, under uring-short.so (short sends, -EINTR, -EAGAIN): redis-server's replies, 20,000 pipelined commands answered" {
    require_not_uring_under_valgrind
    RT_BACKEND=uring run timeout 10 "$BUILD/chapters/13-mini-runtime/rt-test" probe
    [ "$status" -ne 77 ] || skip "io_uring is not allowed here: $output"
    # shellcheck disable=SC2046 # suite_uring_short_env prints words for env(1)
    RT_BACKEND=uring server_start env $(suite_uring_short_env URING_SHORT_SEND=30 URING_SHORT_EINTR=10 \
        URING_SHORT_EAGAIN=10) "$(chapter_bin mini-redis)" -p 0
    scripts_and_pipe "uring-short"
    echo "# uring-short.so: $(suite_uring_short_count short_sends) short sends, $(suite_uring_short_count eintr) -EINTR, $(suite_uring_short_count eagain) -EAGAIN" >&3
    if grep -q 'inject_unsupported=1' "$BATS_TEST_TMPDIR/uring-short.log" 2>/dev/null; then
        counted_positive suite_uring_short_count "uring-short.so" short_sends
        skip "short sends proven; this kernel ($(uname -r)) cannot complete a NOP with an injected result, so uring-short cannot fake -EINTR or -EAGAIN"
    fi
    counted_positive suite_uring_short_count "uring-short.so" short_sends eintr eagain
}
