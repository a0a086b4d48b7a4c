#!/usr/bin/env bats
# Exercise 13-mini-runtime/timer-cancel: taking a pending timer out of the
# middle of the heap (rt/timer.c: rt__timer_remove). Runs against $IMPL
# (solutions by default; `make ex` uses exercises).

load ../helpers/common
load exercise

setup() { rt_exercise timer-cancel 60; }

@test "5 of 10 delays cancelled from the middle of the heap complete with -ECANCELED at once and leave it; the other 5 fire in order" {
    rt_ex timer-cancel
    assert_output --partial "5 timers cancelled from the middle of the heap"
}
@test "300 timers cancelled in a scrambled order: the heap stays ordered after every removal and ends empty" {
    rt_ex timer-cancel
    assert_output --partial "300 timers cancelled in a scrambled order: the heap stayed ordered and ended empty"
}
@test "cancel_after moves and removes a token's deadline: a 10 s delay ends after about 100 ms, and freed tokens leave no timer behind" {
    rt_ex tokens
}
@test "http-rt closes a connection idle for 300 ms, and serves keep-alive requests in between (each wait's deadline is removed)" {
    http_rt_closes_idle
}
