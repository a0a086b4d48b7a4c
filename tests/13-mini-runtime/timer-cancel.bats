#!/usr/bin/env bats
# Exercise 13-mini-runtime/timer-cancel: taking a pending timer out of the
# middle of the heap (rt/timer.c: rt__timer_remove). Runs against $IMPL
# (solutions by default; `make ex` uses exercises).

load ../helpers/common

rt_ex() {
    run timeout 60 "$(impl_bin timer-cancel rt-test)" "$@"
    echo "$output" | sed 's/^/# /' >&3
    [ "$status" -ne 77 ] || skip "$output"
    course_note_exit "$status" "rt-test $*"
    [ "$status" -eq 0 ] || fail "rt-test $*: exit $status
$output"
    assert_output --partial "all checks passed"
}

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
    command -v curl >/dev/null || skip "curl is not installed (make deps)"
    mkdir -p "$BATS_TEST_TMPDIR/www"
    printf 'ok\n' >"$BATS_TEST_TMPDIR/www/index.html"
    server_start "$(impl_bin timer-cancel http-rt)" -p 0 -r "$BATS_TEST_TMPDIR/www" -i 300
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
