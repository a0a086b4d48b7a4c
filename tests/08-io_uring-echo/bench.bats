#!/usr/bin/env bats
# test-long: a quick run of the chapter's bench.sh keeps both CPUs busy for several seconds
# Chapter 08: the chapter's comparison script, bench.sh, in its quick mode:
# every server it compares echoes with no errors and gets its row. Its
# argument checks are in chapter.bats; make test-long runs this file.

load ../helpers/common
load ../helpers/echo_suite
load suite_extra

@test "bench.sh -q: every server of the comparison echoes with no errors, one row each" {
    case "$BUILD" in */san-*) skip "bench.sh measures the normal build" ;; esac
    SERVER_CMD=("$(chapter_bin echo-uring-basic)")
    require_uring # the server says whether io_uring is allowed here
    run timeout 120 "$TOP/chapters/08-io_uring-echo/bench.sh" -q -c 10
    assert_success
    refute_output --partial "errors"
    local s
    for s in echo-epoll-lt echo-uring-basic echo-uring "echo-uring -D" echo-uring-sqpoll; do
        grep -Eq "^$s +10 +[1-9][0-9]* " <<<"$output" || fail "no requests/s row for $s in:
$output"
    done
}
