#!/usr/bin/env bats
# Exercise 13-mini-runtime/timer-cancel: taking a pending timer out of the
# middle of the heap (rt/timer.c: rt__timer_remove). Runs against $IMPL
# (solutions by default; `make ex` uses exercises). Each test runs another
# rt-test group: the removal on bare timers, then the heap under many
# removals, then the delays and tokens built on it.

load ../helpers/common
load exercise

setup() { rt_exercise timer-cancel 60; }

@test "each timer of a full heap taken out (the root, the middle, the last slot): out at once, marked idle, the heap ordered; a timer not in the heap, or whose old slot holds another, is left alone" {
    rt_ex heap-remove
    assert_output --partial "rt__timer_remove: each of 15 timers taken out of a full heap"
}
@test "300 timers cancelled in a scrambled order: the heap stays ordered after every removal and ends empty" {
    rt_ex heap-order
    assert_output --partial "300 timers cancelled in a scrambled order: the heap stayed ordered and ended empty"
}
@test "5 of 10 delays cancelled from the middle of the heap complete with -ECANCELED at once and leave it; the other 5 fire in order; cancelling one that fired changes nothing" {
    rt_ex timer-cancel
    assert_output --partial "5 timers cancelled from the middle of the heap"
    assert_output --partial "a token cancelled after its timer fired changes nothing"
}
@test "cancel_after moves and removes a token's deadline: a 10 s delay ends after about 100 ms, and freed tokens leave no timer behind" {
    rt_ex cancel-after
}
@test "http-rt closes a connection idle for 300 ms, and serves keep-alive requests in between (each wait's deadline is removed)" {
    http_rt_closes_idle
}
