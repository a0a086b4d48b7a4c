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

@test "uring-cp keeps DEPTH reads in flight and submits in batches: 8 reads in its first io_uring_enter, 130 requests in at most 80 calls" {
    local in="$BATS_TEST_TMPDIR/in" first enters
    require_strace
    payload "$in" $((1024 * 1024 + 13))
    strace_run -qq -e trace=io_uring_enter -o "$BATS_TEST_TMPDIR/trace" "$CP" -q 8 -b 16k "$in" \
        "$in.copy" || fail "uring-cp under strace: exit $?"
    same_file "$in" "$in.copy" "uring-cp -q 8 under strace"
    first="$(grep -m1 '^io_uring_enter(' "$BATS_TEST_TMPDIR/trace")"
    [[ "$first" =~ ^io_uring_enter\([0-9]+,\ 8,\ .*\)\ =\ 8$ ]] ||
        fail "expected the first io_uring_enter to submit 8 reads (one per slot), got: $first"
    # 65 blocks of 16 KiB: 65 reads and 65 writes. One io_uring_enter() per
    # turn of the loop submits what the last completions queued; the
    # reference makes 18 calls under strace, 18 to 48 without it on a busy
    # machine. A submit per request makes more than 130.
    enters=$(grep -c '^io_uring_enter(' "$BATS_TEST_TMPDIR/trace")
    [ "$enters" -le 80 ] ||
        fail "expected at most 80 io_uring_enter calls for 130 requests, got $enters: is each request submitted on its own?"
}

@test "uring-cp stops at a source that ends before its size (a read returns 0): reports it and exits 1" {
    local in="$BATS_TEST_TMPDIR/in" q
    payload "$in" $((1024 * 1024 + 13))
    for q in 4 1; do
        # uring-short.so makes the file end at byte 100000 for every read, as
        # if it had been truncated while uring-cp copied it
        # shellcheck disable=SC2046
        run --separate-stderr timeout 10 env $(uring_short_env 0 0 URING_SHORT_EOF=100000) \
            "$CP" -q "$q" -b 16k "$in" "$in.copy"
        [ "$status" -eq 1 ] ||
            fail "uring-cp -q $q on a source that ends at 100000 of its 1048589 bytes: expected exit 1, got $status (124: it never stopped): $stderr"
        [[ "$stderr" == *"read($in, offset "*"): end of file before its size (cqe->res = 0)"* ]] ||
            fail "expected read($in, offset N): end of file before its size (cqe->res = 0), got: $stderr"
    done
    uring_short_injected eof_reads
}

@test "uring-cp finishes short reads and short writes where they stopped, reading and writing each byte once" {
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
    uring_short_once $((2 * (1024 * 1024 + 13)))
}

@test "uring-cp reports a failed write with the file, the offset and cqe->res, and exits 1" {
    local in="$BATS_TEST_TMPDIR/in" line offsets=()
    payload "$in" 100000
    run --separate-stderr timeout 20 "$CP" -q 4 -b 16k "$in" /dev/full
    [ "$status" -eq 1 ] || fail "expected exit 1 for a copy to /dev/full, got $status: $stderr"
    [[ "$stderr" == *"write(/dev/full, offset "*"): No space left on device (cqe->res = -28)"* ]] ||
        fail "expected write(/dev/full, offset N): No space left on device (cqe->res = -28), got: $stderr"
    # Every write to /dev/full fails whole, so each report names where its
    # block starts: the 4 slots' first blocks, at 0, 16384, 32768 and 49152.
    # The error is not a byte count: added to the progress, it names an
    # offset past the end. After it no block is started, so 4 reports at most.
    while IFS= read -r line; do
        [[ "$line" =~ offset\ ([0-9]+)\) ]] && offsets+=("${BASH_REMATCH[1]}")
    done <<<"$stderr"
    [ "${#offsets[@]}" -ge 1 ] && [ "${#offsets[@]}" -le 4 ] ||
        fail "expected 1 to 4 reports (one per slot in flight, no block started after the error), got ${#offsets[@]}: $stderr"
    for line in "${offsets[@]}"; do
        case "$line" in
        0 | 16384 | 32768 | 49152) ;;
        *) fail "expected the failed writes at the slots' block starts (0, 16384, 32768, 49152), got offset $line: $stderr" ;;
        esac
    done
}
