#!/usr/bin/env bats
# Exercise 13-mini-runtime/cancel-token: cancelling a token and moving its
# deadline (rt/cancel.c: rt_token_cancel, rt_token_cancel_after). Runs
# against $IMPL (solutions by default; `make ex` uses exercises). Each
# rt-test group checks one part and ends by checking that every future it
# made was freed.

load ../helpers/common
load exercise

setup() { rt_exercise cancel-token 20; }

@test "a cancel that unregisters the next registration, or all the others, or reuses its own under another token: the walk calls exactly the ones still registered, each once" {
    rt_ex cancel-walk
    assert_output --partial "a cancel that unregisters the next registration: it is not called (5 3 2 1)"
    assert_output --partial "a cancel that unregisters all the others: only it is called"
    assert_output --partial "the walk stays in its own list"
}
@test "a cancel that starts something new under the token being cancelled is refused: the token is marked cancelled before any cancel runs" {
    rt_ex cancel-refuses
    assert_output --partial "a cancel that starts something new under the same token: refused"
}
@test "cancelling a parent cancels a grandchild's delay at once, not another token's; a child of a cancelled token is born cancelled" {
    rt_ex token-tree
    assert_output --partial "cancelling a parent cancels its grandchild's delay at once, not another token's"
    assert_output --partial "a child of a cancelled token is born cancelled"
}
@test "cancel_after: a 10 s delay ends after about 100 ms; a second call moves the deadline (one timer in the heap); a cancel by hand takes it out, and cancel_after then arms nothing" {
    rt_ex cancel-after
    assert_output --partial "cancel_after(10000) then cancel_after(50): one deadline"
    assert_output --partial "a token cancelled by hand takes its deadline out of the heap"
}
@test "a recv and an accept cancelled in flight complete with -ECANCELED in the backend, and the socket still works (io_uring, epoll, kqueue)" {
    rt_ex_backends cancel-io
}
@test "SIGTERM cancels the root token: tasks waiting 60 s on it and on a child token finish at once" {
    rt_ex shutdown
}
@test "http-rt closes a connection idle for 300 ms (a deadline per request head), and serves keep-alive requests in between" {
    http_rt_closes_idle
}
