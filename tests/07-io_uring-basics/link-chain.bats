#!/usr/bin/env bats
# Exercise 07-io_uring-basics/link-chain: uring-cp -l links each block's
# write to its read (IOSQE_IO_LINK). Runs against $IMPL (solutions by
# default: the chapter's own uring-cp.c). Skips, with the reason, where
# io_uring is refused.

bats_require_minimum_version 1.5.0
load ../helpers/common
load uring

setup_file() {
    uring_setup_file
}

setup() {
    uring_require
    CP="$(impl_bin link-chain uring-cp)"
}

@test "link-chain: uring-cp -l copies 0, 1, 4096, 100001 and 1 MiB + 13 bytes at queue depth 1, 4 and 32" {
    local size q in
    for size in 0 1 4096 100001 $((1024 * 1024 + 13)); do
        in="$BATS_TEST_TMPDIR/in$size"
        payload "$in" "$size"
        for q in 1 4 32; do
            "$CP" -l -q "$q" -b 16k "$in" "$in.q$q" || fail "uring-cp -l -q $q: exit $? on $size bytes"
            same_file "$in" "$in.q$q" "uring-cp -l -q $q, $size bytes"
        done
    done
}

@test "link-chain: uring-cp -l -d: a real short read at the end of the file breaks the link (-ECANCELED), the copy is exact" {
    local in="$BATS_TEST_TMPDIR/in"
    payload "$in" 100001 # not a multiple of 4096: O_DIRECT asks for the whole last sector
    run --separate-stderr "$CP" -v -l -d -b 8k "$in" "$in.copy"
    if [ "$status" -ne 0 ] && [[ "$stderr" == *"O_DIRECT): Invalid argument"* ]]; then
        skip "this filesystem ($(stat -f -c %T "$BATS_TEST_TMPDIR")) does not support O_DIRECT"
    fi
    assert_success
    same_file "$in" "$in.copy" "uring-cp -l -d"
    [[ "$stderr" == *"links broken 1,"* ]] ||
        fail "expected the last block's link to break (links broken 1), got: $stderr"
}

@test "link-chain: uring-cp -l with short writes (uring-short) finishes each block where it stopped" {
    local in="$BATS_TEST_TMPDIR/in"
    payload "$in" $((1024 * 1024 + 13))
    # shellcheck disable=SC2046
    env $(uring_short_env 0 30) "$CP" -l -b 16k "$in" "$in.copy" || fail "uring-cp -l under uring-short: exit $?"
    same_file "$in" "$in.copy" "uring-cp -l, 30% of writes made short"
}

@test "link-chain: uring-cp -l -q 8: a pair needs two SQ slots; the SQ fills, is submitted early, and the copy is exact" {
    local in="$BATS_TEST_TMPDIR/in"
    payload "$in" $((1024 * 1024))
    run --separate-stderr "$CP" -v -l -q 8 -b 16k "$in" "$in.copy"
    assert_success
    same_file "$in" "$in.copy" "uring-cp -l -q 8"
    [[ "$stderr" =~ SQ\ full\ ([0-9]+) ]] || fail "no SQ full count in: $stderr"
    [ "${BASH_REMATCH[1]}" -gt 0 ] || fail "expected the SQ to fill at least once, got: $stderr"
}
