#!/usr/bin/env bats
# Exercise 07-io_uring-basics/short-read (fix): a short read is finished
# before the block is written. Runs against $IMPL (solutions by default: the
# chapter's own uring-cp.c; `make ex` uses exercises, where the bug is
# planted). Skips, with the reason, where io_uring is refused.

bats_require_minimum_version 1.5.0
load ../helpers/common
load ../helpers/echo_suite # require_strace
load uring

setup_file() { uring_setup_file; }

setup() { uring_exercise_setup short-read; }

@test "short-read: uring-cp copies 0, 1, 4096, 100001 and 1 MiB + 13 bytes at queue depth 4" {
    copies_exact "$CP" 4 -b 16k
}

@test "short-read: with short reads and writes (uring-short), the copy is exact and each byte is read once" {
    local in="$BATS_TEST_TMPDIR/in" opts
    payload "$in" $((1024 * 1024 + 13))
    for opts in "" "-q 1"; do
        # shellcheck disable=SC2046,SC2086
        env $(uring_short_env 30 30) "$CP" $opts -b 16k "$in" "$in.copy" ||
            fail "uring-cp $opts under uring-short: exit $?"
        same_file "$in" "$in.copy" "uring-cp $opts, 30% of reads and writes made short"
    done
    uring_short_injected short_reads
    uring_short_once $((2 * (1024 * 1024 + 13)))
}

@test "short-read: the rest of a short read is asked of the ring too: no read() or pread() of the source" {
    local in="$BATS_TEST_TMPDIR/in" calls
    require_strace
    payload "$in" $((1024 * 1024 + 13))
    # -y names the file behind each descriptor: a read()/pread() of $in shows
    # as read(N</path/to/in>, ...)
    # uring_short_env sets ASAN_OPTIONS itself: LeakSanitizer must be off in
    # it too, or it stops the program with a fatal error under ptrace
    # shellcheck disable=SC2046
    strace_run -f -qq -y -e trace=read,pread64,readv,preadv,preadv2 -o "$BATS_TEST_TMPDIR/trace" \
        env $(ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" uring_short_env 30 0) "$CP" -b 16k "$in" "$in.copy" ||
        fail "uring-cp under strace and uring-short: exit $?"
    same_file "$in" "$in.copy" "uring-cp, 30% of reads made short, under strace"
    uring_short_injected short_reads
    calls=$(grep -c "<$in>" "$BATS_TEST_TMPDIR/trace" || true)
    [ "$calls" -eq 0 ] ||
        fail "expected no read()/pread() of the source (io_uring reads it), got $calls: $(grep -m 3 "<$in>" "$BATS_TEST_TMPDIR/trace")"
}

@test "short-read: a write that fails (/dev/full) is reported and exits 1, with no endless retry" {
    local in="$BATS_TEST_TMPDIR/in"
    payload "$in" 100001
    run timeout 20 "$CP" -b 16k "$in" /dev/full
    [ "$status" -eq 1 ] || fail "expected exit 1 writing to /dev/full, got $status: $output"
}
