#!/usr/bin/env bats
# Exercise 07-io_uring-basics/link-chain: uring-cp -l links each block's
# write to its read (IOSQE_IO_LINK). Runs against $IMPL (solutions by
# default: the chapter's own uring-cp.c). Skips, with the reason, where
# io_uring is refused.

bats_require_minimum_version 1.5.0
load ../helpers/common
load uring

setup_file() { uring_setup_file; }

setup() { uring_exercise_setup link-chain; }

@test "link-chain: uring-cp -l copies 0, 1, 4096, 100001 and 1 MiB + 13 bytes at queue depth 1, 4 and 32" {
    copies_exact "$CP" "1 4 32" -l -b 16k
}

@test "link-chain: uring-cp -l -q 32 sends each pair in the batch it joins: 130 requests in at most 50 io_uring_enter calls" {
    local in="$BATS_TEST_TMPDIR/in" sqes enters
    payload "$in" $((1024 * 1024 + 13))
    run --separate-stderr "$CP" -v -l -q 32 -b 16k "$in" "$in.copy"
    [ "$status" -eq 0 ] || fail "uring-cp -v -l -q 32: exit $status: $stderr"
    same_file "$in" "$in.copy" "uring-cp -v -l -q 32"
    [[ "$stderr" =~ ([0-9]+)\ SQEs\ in\ ([0-9]+)\ io_uring_enter ]] ||
        fail "no 'N SQEs in M io_uring_enter() calls' line in: $stderr"
    sqes=${BASH_REMATCH[1]} enters=${BASH_REMATCH[2]}
    # 65 blocks of 16 KiB, a read and a write each. The SQ holds 32 SQEs: a
    # submission is needed only when fewer than two are free (measured: the
    # reference 5 to 8 calls). Submitting before every pair makes 65 or more.
    [ "$sqes" -eq 130 ] || fail "expected 130 SQEs (65 reads, 65 writes), got $sqes: $stderr"
    [ "$enters" -le 50 ] ||
        fail "expected at most 50 io_uring_enter calls for 65 pairs, got $enters: is the SQ submitted before every pair, full or not? $stderr"
}

@test "link-chain: uring-cp -l -d: a real short read at the end of the file breaks the link (-ECANCELED), the copy is exact" {
    direct_tail_breaks_link "$CP"
}

@test "link-chain: uring-cp -l with short writes finishes each block where it stopped, and never cuts a pair between two submissions" {
    local in="$BATS_TEST_TMPDIR/in" q cut
    payload "$in" $((1024 * 1024 + 13))
    for q in 8 5 3; do
        # 30% of the writes come back short; each rest goes in unlinked, one
        # SQE, so the pairs no longer fall evenly into the SQ and it fills
        # between a read and its write unless room for both is made first
        # shellcheck disable=SC2046
        env $(uring_short_env 0 30) "$CP" -l -q "$q" -b 16k "$in" "$in.copy" ||
            fail "uring-cp -l -q $q under uring-short: exit $?"
        same_file "$in" "$in.copy" "uring-cp -l -q $q, 30% of writes made short"
    done
    uring_short_injected short_writes
    # uring-short counts the submissions whose last SQE carries IOSQE_IO_LINK:
    # a read whose write will only follow in the next submission, unlinked
    # (measured: the reference 0; without the room check 9 to 26 in 8 runs of these three)
    cut=$(uring_short_count links_cut)
    [ "$cut" -eq 0 ] ||
        fail "$cut submissions ended with a linked read whose write was left for the next one: make room for both SQEs before queueing the pair"
}

@test "link-chain: uring-cp -l -q 8: a pair needs two SQ slots; the SQ fills, is submitted early, and the copy is exact" {
    linked_pairs_fill_sq "$CP"
}
