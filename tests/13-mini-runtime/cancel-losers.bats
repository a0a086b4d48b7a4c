#!/usr/bin/env bats
# Exercise 13-mini-runtime/cancel-losers: Task.WhenAny, then the losers
# cancelled and awaited (when-all-demo.c: any_step). Runs against $IMPL
# (solutions by default; `make ex` uses exercises).

load ../helpers/common
load exercise

# demo: run the exercise's when-all-demo; it must exit 0.
demo() {
    run timeout 20 "$(impl_bin cancel-losers when-all-demo)"
    echo "$output" | sed 's/^/# /' >&3
    [ "$status" -ne 77 ] || skip "$output"
    course_note_exit "$status" when-all-demo
    [ "$status" -eq 0 ] || fail "when-all-demo: exit $status
$output"
}

@test "when_any of 600, 100 and 400 ms: b wins with 100, and the two losers end with -ECANCELED" {
    demo
    assert_output --partial "when_any of 600, 100 and 400 ms: b first, the others cancelled"
    assert_line "results: a -125, b 100, c -125"
}

@test "all three fetches are done after about 100 ms, the winner's time, not the 400 or 600 ms of the losers" {
    demo
    local ms
    ms=$(sed -n 's/.*all three done after \([0-9]*\) ms$/\1/p' <<<"$output")
    [ -n "$ms" ] || fail "no 'all three done after N ms' line"
    [ "$ms" -ge 95 ] && [ "$ms" -lt 380 ] || fail "all three done after $ms ms; expected about 100 (at least 95, under 380)"
}

@test "when-all-demo: when_all still at least twice as fast as awaiting one by one" {
    demo
    when_all_faster
}
