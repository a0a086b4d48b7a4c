#!/usr/bin/env bats
# Exercise 13-mini-runtime/late-continuation (fix): a continuation handed to
# a future that has already completed must still run, from the run queue
# (rt/future.c: rt__future_on_done). Runs against $IMPL (solutions by
# default; `make ex` uses exercises).

load ../helpers/common

# rt_ex GROUP: the exercise's rt-test GROUP must pass.
rt_ex() {
    run timeout 20 "$(impl_bin late-continuation rt-test)" "$@"
    echo "$output" | sed 's/^/# /' >&3
    [ "$status" -ne 77 ] || skip "$output"
    course_note_exit "$status" "rt-test $*"
    [ "$status" -eq 0 ] || fail "rt-test $*: exit $status
$output"
    assert_output --partial "all checks passed"
}

@test "when_any over two promises where only the second has already finished completes at once with index 1" {
    rt_ex when-any
    assert_output --partial "when_any of 300, 50, 200 ms: index 1 after"
    assert_output --partial "when_any of two promises, only the second already finished: index 1"
}
@test "when_all over two promises that have already finished completes at once with 0, their results intact" {
    rt_ex when-all
    assert_output --partial "when_all of two promises already finished: 0 after"
}
@test "when_all passes a failed child's error (-ECONNREFUSED) on" {
    rt_ex errors
}
@test "when-all-demo: when_all twice as fast as one by one; when_all over the losers and a winner that has already finished completes" {
    run timeout 20 "$(impl_bin late-continuation when-all-demo)"
    course_note_exit "$status" when-all-demo
    [ "$status" -eq 0 ] || fail "when-all-demo: exit $status
$output"
    local seq all
    seq=$(echo "$output" | sed -n 's/^sequential: \([0-9]*\) ms/\1/p')
    all=$(echo "$output" | sed -n 's/^when_all: \([0-9]*\) ms/\1/p')
    [ -n "$seq" ] && [ -n "$all" ] || fail "no timings in: $output"
    [ $((seq * 10)) -ge $((all * 20)) ] || fail "sequential $seq ms, when_all $all ms"
    assert_line "results: a -125, b 100, c -125"
}
