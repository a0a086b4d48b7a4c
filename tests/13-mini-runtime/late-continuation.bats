#!/usr/bin/env bats
# Exercise 13-mini-runtime/late-continuation (fix): a continuation handed to
# a future that has already completed must still run, once, from the run
# queue (rt/future.c: rt__future_on_done). Runs against $IMPL (solutions by
# default; `make ex` uses exercises).

load ../helpers/common
load exercise

setup() { rt_exercise late-continuation 20; }

@test "a continuation hung on a future that has already finished runs once, from the run queue, not inside the call that hangs it" {
    rt_ex continuations
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
    when_all_demo
    when_all_faster
    assert_line "results: a -125, b 100, c -125"
}
