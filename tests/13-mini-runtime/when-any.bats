#!/usr/bin/env bats
# Exercise 13-mini-runtime/when-any: the continuation of a combinator's arm
# (rt/when.c: when__arm_done), for when_any and when_all. Runs against $IMPL
# (solutions by default; `make ex` uses exercises).

load ../helpers/common

# rt_ex GROUP: the exercise's rt-test GROUP must pass.
rt_ex() {
    run timeout 60 "$(impl_bin when-any rt-test)" "$@"
    echo "$output" | sed 's/^/# /' >&3
    [ "$status" -ne 77 ] || skip "$output"
    course_note_exit "$status" "rt-test $*"
    [ "$status" -eq 0 ] || fail "rt-test $*: exit $status
$output"
    assert_output --partial "all checks passed"
}

@test "when_any of 300, 50 and 200 ms completes with index 1 after about 50 ms; the other two still finish; of two where only the second is done, 1; of none, -EINVAL" {
    rt_ex when-any
    assert_output --partial "when_any of 300, 50, 200 ms: index 1 after"
}
@test "when_all of 200, 150 and 180 ms completes after about 200 ms, and a cancelled child's -ECANCELED comes out once all are done" {
    rt_ex when-all
}
@test "when_all passes a failed child's error (-ECONNREFUSED) on" {
    rt_ex errors
}
@test "when-all-demo: when_all at least twice as fast as awaiting one by one" {
    run timeout 20 "$(impl_bin when-any when-all-demo)"
    course_note_exit "$status" when-all-demo
    [ "$status" -eq 0 ] || fail "when-all-demo: exit $status
$output"
    local seq all
    seq=$(echo "$output" | sed -n 's/^sequential: \([0-9]*\) ms/\1/p')
    all=$(echo "$output" | sed -n 's/^when_all: \([0-9]*\) ms/\1/p')
    [ $((seq * 10)) -ge $((all * 20)) ] || fail "sequential $seq ms, when_all $all ms"
}
