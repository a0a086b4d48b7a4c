#!/usr/bin/env bats
# Exercise 07-io_uring-basics/uring-cp: the queue-depth copy loop, written by
# the learner. Runs against $IMPL (solutions by default; `make ex` sets
# IMPL=exercises). Skips, with the reason, where io_uring is refused.

bats_require_minimum_version 1.5.0
load ../helpers/common
load ../helpers/echo_suite # require_strace
load uring

setup_file() { uring_setup_file; }

setup() { uring_exercise_setup uring-cp; }

@test "uring-cp copies 0, 1, 4096, 100001 and 1 MiB + 13 bytes at queue depth 1, 4 and 32" {
    # 1 MiB + 13 is more than 32 blocks of 16 KiB: slots are reused
    copies_exact "$CP" "1 4 32" -b 16k
}

@test "uring-cp keeps DEPTH reads in flight: its first io_uring_enter submits 8 of them" {
    local in="$BATS_TEST_TMPDIR/in" first
    require_strace
    payload "$in" $((1024 * 1024))
    strace_run -qq -e trace=io_uring_enter -o "$BATS_TEST_TMPDIR/trace" "$CP" -q 8 -b 16k "$in" \
        "$in.copy" || fail "uring-cp under strace: exit $?"
    same_file "$in" "$in.copy" "uring-cp -q 8 under strace"
    first="$(grep -m1 '^io_uring_enter(' "$BATS_TEST_TMPDIR/trace")"
    [[ "$first" =~ ^io_uring_enter\([0-9]+,\ 8,\ .*\)\ =\ 8$ ]] ||
        fail "expected the first io_uring_enter to submit 8 reads (one per slot), got: $first"
}

@test "uring-cp finishes short reads and short writes where they stopped" {
    local in="$BATS_TEST_TMPDIR/in" q
    payload "$in" $((1024 * 1024 + 13))
    for q in 4 1; do
        # uring-short.so makes 30% of the reads and 30% of the writes short
        # shellcheck disable=SC2046
        env $(uring_short_env 30 30) "$CP" -q "$q" -b 16k "$in" "$in.copy" ||
            fail "uring-cp -q $q with short reads and writes: exit $?"
        same_file "$in" "$in.copy" "uring-cp -q $q with short reads and writes"
    done
    uring_short_injected short_reads short_writes
}

@test "uring-cp reports a failed write with the file, the offset and cqe->res, and exits 1" {
    local in="$BATS_TEST_TMPDIR/in"
    payload "$in" 100000
    run --separate-stderr timeout 20 "$CP" -q 4 -b 16k "$in" /dev/full
    [ "$status" -eq 1 ] || fail "expected exit 1 for a copy to /dev/full, got $status: $stderr"
    [[ "$stderr" == *"write(/dev/full, offset "*"): No space left on device (cqe->res = -28)"* ]] ||
        fail "expected write(/dev/full, offset N): No space left on device (cqe->res = -28), got: $stderr"
}
