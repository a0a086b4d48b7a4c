#!/usr/bin/env bats
# Exercise 13-mini-runtime/cancel-token: cancelling a token and moving its
# deadline (rt/cancel.c: rt_token_cancel, rt_token_cancel_after). Runs
# against $IMPL (solutions by default; `make ex` uses exercises).

load ../helpers/common

# rt_ex GROUP: the exercise's rt-test GROUP must pass.
rt_ex() {
    run timeout 20 "$(impl_bin cancel-token rt-test)" "$@"
    echo "$output" | sed 's/^/# /' >&3
    [ "$status" -ne 77 ] || skip "$output"
    course_note_exit "$status" "rt-test $*"
    [ "$status" -eq 0 ] || fail "rt-test $*: exit $status
$output"
    assert_output --partial "all checks passed"
}

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
    command -v curl >/dev/null || skip "curl is not installed (make deps)"
    mkdir -p "$BATS_TEST_TMPDIR/www"
    printf 'ok\n' >"$BATS_TEST_TMPDIR/www/index.html"
    server_start "$(impl_bin cancel-token http-rt)" -p 0 -r "$BATS_TEST_TMPDIR/www" -i 300
    run timeout 10 curl -s "http://127.0.0.1:$PORT/" "http://127.0.0.1:$PORT/"
    assert_output "ok
ok"
    local fd start ms
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
    start=$(date +%s%N)
    timeout 10 cat <&"$fd" >/dev/null || fail "an idle connection stayed open 10 s"
    ms=$((($(date +%s%N) - start) / 1000000))
    exec {fd}>&-
    [ "$ms" -ge 250 ] && [ "$ms" -lt 5000 ] || fail "closed after $ms ms, expected about 300"
    server_stop
    course_note_exit "$SERVER_STATUS" http-rt
    [ "$SERVER_STATUS" -eq 0 ] || fail "http-rt exit $SERVER_STATUS: $(cat "$SERVER_ERR")"
}
