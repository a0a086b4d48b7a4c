#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The shared echo suite's links: every server of common/servers.txt has its
# tests/NN-slug/suite-NAME.bats (and suite-NAME.faults.bats where the faults
# shim can see its I/O), each a link to tests/suite/echo.cases, none is left
# over; the links run the right server with its declared skips; and the
# table's mistakes are refused, naming the line.
load ../helpers/common
load ../helpers/echo_suite

@test "tests/*/suite-*.bats are exactly the links 'make suite' makes from common/servers.txt" {
    run "$TOP/common/mk/suite.sh" --check
    assert_success
    local n
    n=$(find "$TOP"/tests/[0-9][0-9]-* -name 'suite-*.bats' | wc -l)
    [ "$n" -ge 40 ] || fail "only $n suite links"
    # no generated copy is left: every one is a link
    n=$(find "$TOP"/tests/[0-9][0-9]-* -name 'suite-*.bats' -type f | wc -l)
    [ "$n" -eq 0 ] || fail "$n suite files are not links"
}

@test "every link has one test per case, named with its server, and the faults links are long and under the shim" {
    local cases n
    cases=$(grep -c '^ *suite_case ' "$TOP/tests/suite/echo.cases")
    [ "$cases" -ge 11 ] || fail "expected at least 11 cases in echo.cases, found $cases"
    run bats --count "$TOP/tests/04-epoll/suite-echo-epoll-lt.bats"
    assert_output "$cases"
    run bats --tap --filter 'half-closed' "$TOP/tests/01-blocking/suite-echo-blocking.faults.bats"
    assert_success
    assert_output --partial "ok 1 echo-blocking under faults: a half-closed client gets every byte, then EOF"
    # the runner leaves the faults links to make test-long, and runs the
    # Windows servers' links in its Wine pass
    run bash -c "sed -n '/^marked()/,/^}/p; /^is_wine()/,/^}/p' '$TOP/common/mk/run-tests.sh'"
    eval "$output"
    marked "$TOP/tests/04-epoll/suite-echo-epoll-lt.faults.bats" long || fail "a faults link is not long"
    ! marked "$TOP/tests/04-epoll/suite-echo-epoll-lt.bats" long || fail "a plain link is long"
    is_wine "$TOP/tests/09-iocp/suite-echo-iocp.bats" || fail "echo-iocp's link is not run by Wine"
    ! is_wine "$TOP/tests/04-epoll/suite-echo-epoll-lt.bats" || fail "echo-epoll-lt's link counts as Wine"
    # under the shim: the server's command preloads it, with the table's environment
    local CHAPTER=11-one-api
    suite_load_server suite-echo-aio-epoll.faults.bats
    suite_setup
    [[ "${SERVER_CMD[*]}" == "env LD_PRELOAD=$FAULTS_SHIM "*" FAULTS_EAGAIN=10 CIO_BACKEND=epoll $BUILD/chapters/11-one-api/echo-aio" ]] ||
        fail "under faults, the command is: ${SERVER_CMD[*]}"
    suite_load_server suite-echo-aio-epoll.bats
    suite_setup
    assert_equal "${SERVER_CMD[*]}" "env CIO_BACKEND=epoll $BUILD/chapters/11-one-api/echo-aio"
}

@test "a declared skip is shown with its reason when the suite runs" {
    local t="$BATS_TEST_TMPDIR/repo"
    mkdir -p "$t/tests/01-demo" "$t/tests/suite"
    ln -s "$TOP/common" "$t/common"
    ln -s "$TOP/tests/helpers" "$t/tests/helpers"
    cp "$TOP/tests/suite/echo.cases" "$t/tests/suite/"
    ln -s ../suite/echo.cases "$t/tests/01-demo/suite-demo.bats"
    printf 'demo 01-demo blocking chapter:demo\n    skip binary: a reason worth reading\n' >"$t/servers.txt"
    SERVERS_TABLE="$t/servers.txt" run bats --tap --filter 'binary data' "$t/tests/01-demo/suite-demo.bats"
    assert_success
    assert_output --partial "ok 1 demo: binary data with NUL bytes comes back intact # skip a reason worth reading"
}

@test "make suite refuses an unknown case, kind or program, naming the line, and changes nothing" {
    local table="$BATS_TEST_TMPDIR/servers.txt"
    check_refused() {
        SERVERS_TABLE="$table" run "$TOP/common/mk/suite.sh"
        assert_failure
        assert_output --partial "$1"
        refute_output --partial "linked"
        refute_output --partial "removed"
    }
    printf 'demo 01-blocking blocking chapter:demo\n    skip nosuchcase: why\n' >"$table"
    check_refused "line 2: skip nosuchcase: no such case"
    printf 'demo 01-blocking sideways chapter:demo\n' >"$table"
    check_refused "line 1: unknown kind 'sideways'"
    printf 'demo 01-blocking blocking build/demo\n' >"$table"
    check_refused "line 1: PROGRAM must be chapter:PROG or exercise:EX/PROG"
    printf 'demo 01-blocking blocking chapter:demo\n    skip binary:\n' >"$table"
    check_refused "line 2: expected 'skip CASE: REASON'"
    printf 'demo 99-nowhere blocking chapter:demo\n' >"$table"
    check_refused "line 1: no folder tests/99-nowhere"
    printf 'demo 01-blocking blocking chapter:demo\ndemo 01-blocking blocking chapter:demo\n' >"$table"
    check_refused "line 2: a second server named demo"
}

@test "every other link to a .cases file in tests/ names a server of the table" {
    local l name bad=""
    while IFS= read -r l; do
        name="${l##*/}" name="${name%.bats}" name="${name#suite-}" name="${name%.faults}"
        server_load "$name" || bad+="${l#"$TOP"/} ($name)"$'\n'
    done < <(find "$TOP"/tests/[0-9][0-9]-* -type l -name '*.bats')
    [ -z "$bad" ] || fail "links named for no server of common/servers.txt:
$bad"
}
