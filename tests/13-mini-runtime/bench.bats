#!/usr/bin/env bats
# test-long: a quick run of the chapter's bench.sh keeps both CPUs busy for several seconds
# Chapter 13: the chapter's comparison script, bench.sh, in its quick mode:
# every server it compares echoes with no errors and gets its row. Its
# argument checks are in chapter.bats; make test-long runs this file.

load ../helpers/common

@test "bench.sh -q: echo-rt and its peers echo 50 connections with no errors, one row each" {
    case "$BUILD" in */san-*) skip "bench.sh measures the normal build" ;; esac
    run timeout 120 "$TOP/chapters/13-mini-runtime/bench.sh" -q
    assert_success
    refute_output --partial "errors"
    local s want=(echo-rt-epoll echo-epoll-lt)
    RT_BACKEND=uring timeout 10 "$BUILD/chapters/$CHAPTER/rt-test" probe >/dev/null 2>&1 &&
        want+=(echo-rt-uring echo-uring)
    [ -x "$BUILD/chapters/$CHAPTER/echo-uv" ] && want+=(echo-uv)
    for s in "${want[@]}"; do
        grep -Eq "^$s +50 +[1-9][0-9]* " <<<"$output" || fail "no requests/s at 50 connections for $s in:
$output"
    done
}
