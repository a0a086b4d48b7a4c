#!/usr/bin/env bats
# test-long: a quick run of the chapter's bench.sh keeps both CPUs busy for several seconds
# Chapter 06: the chapter's comparison script, bench.sh, in its quick mode:
# every server it compares echoes with no errors and gets its row. Its
# argument checks are in chapter.bats; make test-long runs this file.

load ../helpers/common

@test "bench.sh -q: every Part II server echoes 50 connections with no errors, one row each" {
    case "$BUILD" in */san-*) skip "bench.sh measures the normal build" ;; esac
    run timeout 120 "$TOP/chapters/06-kqueue/bench.sh" -q -c 50
    assert_success
    refute_output --partial "errors"
    local s
    for s in echo-poll echo-epoll-lt echo-epoll-et echo-epoll-oneshot echo-epoll-reuseport echo-kqueue; do
        grep -Eq "^$s +50 +[1-9][0-9]* " <<<"$output" || fail "no requests/s row for $s in:
$output"
    done
}
