#!/usr/bin/env bats
# Exercise 13-mini-runtime/when-any: the continuation of a combinator's arm
# (rt/when.c: when__arm_done), for when_any and when_all. Runs against $IMPL
# (solutions by default; `make ex` uses exercises).

load ../helpers/common
load exercise

setup() { rt_exercise when-any 60; }

@test "a combinator whose caller let go before its children finished: every arm runs, the combinator is freed after the last, and every child is released" {
    rt_ex when-lifetimes
}
@test "valgrind: no read of a freed combinator and no leak when arms run after the caller let go" {
    rt_ex_valgrind when-lifetimes
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
    when_all_demo
    when_all_faster
}
