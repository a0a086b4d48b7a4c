#!/usr/bin/env bats
# Exercise 07-io_uring-basics/short-read (fix): a short read is finished
# before the block is written. Runs against $IMPL (solutions by default: the
# chapter's own uring-cp.c; `make ex` uses exercises, where the bug is
# planted). Skips, with the reason, where io_uring is refused.

bats_require_minimum_version 1.5.0
load ../helpers/common
load uring

setup_file() {
    uring_setup_file
}

setup() {
    uring_require
    CP="$(impl_bin short-read uring-cp)"
}

@test "short-read: uring-cp copies 0, 1, 4096, 100001 and 1 MiB + 13 bytes at queue depth 4" {
    local size in
    for size in 0 1 4096 100001 $((1024 * 1024 + 13)); do
        in="$BATS_TEST_TMPDIR/in$size"
        payload "$in" "$size"
        "$CP" -q 4 -b 16k "$in" "$in.copy" || fail "uring-cp: exit $? on $size bytes"
        same_file "$in" "$in.copy" "uring-cp, $size bytes"
    done
}

@test "short-read: with short reads and writes (uring-short), the copy is exact" {
    local in="$BATS_TEST_TMPDIR/in" opts sr
    payload "$in" $((1024 * 1024 + 13))
    for opts in "" "-q 1"; do
        # shellcheck disable=SC2046,SC2086
        env $(uring_short_env 30 30) "$CP" $opts -b 16k "$in" "$in.copy" ||
            fail "uring-cp $opts under uring-short: exit $?"
        same_file "$in" "$in.copy" "uring-cp $opts, 30% of reads and writes made short"
    done
    sr=$(uring_short_count short_reads)
    [ "$sr" -gt 0 ] || fail "uring-short made no read short: the test proved nothing"
}

@test "short-read: a write that fails (/dev/full) is reported and exits 1, with no endless retry" {
    local in="$BATS_TEST_TMPDIR/in"
    payload "$in" 100001
    run timeout 20 "$CP" -b 16k "$in" /dev/full
    [ "$status" -eq 1 ] || fail "expected exit 1 writing to /dev/full, got $status: $output"
}
