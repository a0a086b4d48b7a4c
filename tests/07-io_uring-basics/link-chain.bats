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

@test "link-chain: uring-cp -l -d: a real short read at the end of the file breaks the link (-ECANCELED), the copy is exact" {
    direct_tail_breaks_link "$CP"
}

@test "link-chain: uring-cp -l with short writes (uring-short) finishes each block where it stopped" {
    local in="$BATS_TEST_TMPDIR/in"
    payload "$in" $((1024 * 1024 + 13))
    # shellcheck disable=SC2046
    env $(uring_short_env 0 30) "$CP" -l -b 16k "$in" "$in.copy" || fail "uring-cp -l under uring-short: exit $?"
    same_file "$in" "$in.copy" "uring-cp -l, 30% of writes made short"
}

@test "link-chain: uring-cp -l -q 8: a pair needs two SQ slots; the SQ fills, is submitted early, and the copy is exact" {
    linked_pairs_fill_sq "$CP"
}
