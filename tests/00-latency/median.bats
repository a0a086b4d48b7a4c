#!/usr/bin/env bats
# Exercise 00-latency/median: bench_median() in bench.c, checked by
# median-check (which exists for this exercise). Runs against $IMPL
# (solutions: the chapter's own bench.c; `make ex` uses the learner's copy).

load ../helpers/common

setup_file() {
    local bin="$BUILD/$IMPL/00-latency/median/median-check" status=0
    if [ -x "$bin" ]; then
        timeout 30 "$bin" >"$BATS_FILE_TMPDIR/check.out" 2>&1 || status=$?
        echo "$status" >"$BATS_FILE_TMPDIR/check.status"
    fi
}

# median_ok CHECK...: median-check passed each named check.
median_ok() {
    local c out status
    impl_bin median median-check >/dev/null
    out="$(cat "$BATS_FILE_TMPDIR/check.out")"
    status="$(cat "$BATS_FILE_TMPDIR/check.status")"
    for c in "$@"; do
        grep -qxF "ok - $c" <<<"$out" || fail "median-check (status $status): expected 'ok - $c'
$out"
    done
}

@test "median: no value gives -1, one value gives itself" {
    median_ok "no value: -1" "one value: that value"
}

@test "median: an odd count gives the middle value, an even count the mean of the two middle ones" {
    median_ok "3 values, unsorted: the middle one once sorted" \
        "4 values, unsorted: the mean of the two middle ones" \
        "6 values with repeats: the mean of the two middle ones" \
        "5 values less than 1 apart: the middle one once sorted" \
        "1001 shuffled values 0..1000: 500"
}

@test "median: the values are sorted in place" {
    median_ok "the values are sorted in place, as latency.h promises"
}

@test "median: one huge value does not move it" {
    median_ok "one huge value among 5 does not move the median"
}

@test "median: bench_batch_ns ignores one run 200 times slower than the others" {
    median_ok "bench_batch_ns: one run 200 times slower than the others does not move the figure"
}
