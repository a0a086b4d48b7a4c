#!/usr/bin/env bats
# Exercise 13-mini-runtime/cancel-token: cancelling a token and moving its
# deadline (rt/cancel.c: rt_token_cancel, rt_token_cancel_after). Runs
# against $IMPL (solutions by default; `make ex` uses exercises).

load ../helpers/common
load exercise

setup() { rt_exercise cancel-token 20; }

@test "cancelling a parent cancels a grandchild's delay at once, not another token's; a child of a cancelled token is born cancelled" {
    rt_ex tokens
    assert_output --partial "cancelling a parent cancels its grandchild's delay at once, not another token's"
}
@test "cancel_after ends a 10 s delay after about 100 ms; a second cancel_after moves the deadline; cancelling by hand takes it out of the heap" {
    rt_ex tokens
    assert_output --partial "cancel_after(10000) then cancel_after(50): one deadline"
    assert_output --partial "a token cancelled by hand takes its deadline out of the heap"
}
@test "a recv and an accept cancelled in flight complete with -ECANCELED, and the socket still works" {
    rt_ex cancel-io
}
@test "SIGTERM cancels the root token: tasks waiting 60 s on it and on a child token finish at once" {
    rt_ex shutdown
}
@test "http-rt closes a connection idle for 300 ms (a deadline per request head), and serves keep-alive requests in between" {
    http_rt_closes_idle
}
