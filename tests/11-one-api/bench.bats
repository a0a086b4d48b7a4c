#!/usr/bin/env bats
# test-long: a quick run of the chapter's bench.sh keeps both CPUs busy for several seconds
# Chapter 11: the chapter's comparison script, bench.sh, in its quick mode:
# every server it compares echoes with no errors and gets its row. Its
# argument checks are in chapter.bats; make test-long runs this file.

load ../helpers/common

uring_allowed() {
    CIO_BACKEND=uring timeout 10 "$(chapter_bin aio-test)" probe >/dev/null 2>&1
}

@test "bench.sh -q: echo-aio on every backend and the two reference servers echo 50 connections with no errors, one row each" {
    case "$BUILD" in */san-*) skip "bench.sh measures the normal build" ;; esac
    run timeout 120 "$TOP/chapters/11-one-api/bench.sh" -q
    assert_success
    refute_output --partial "errors"
    local s rows=(echo-aio-epoll echo-aio-kqueue echo-aio-poll echo-epoll-lt)
    uring_allowed && rows+=(echo-aio-uring echo-uring)
    for s in "${rows[@]}"; do
        grep -Eq "^$s +50 +[1-9][0-9]* " <<<"$output" ||
            fail "no requests/s row for $s in:
$output"
    done
}
