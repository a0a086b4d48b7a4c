#!/usr/bin/env bats
# The shared echo suite's generated files: tests/NN-slug/suite-NAME.bats (and
# suite-NAME.faults.bats, the same under the faults shim) are
# exactly what `make suite` writes from tests/suite/servers.txt and
# tests/suite/cases.bats.in, none is left over from a server that left the
# list, and the generator refuses a list with mistakes in it.
load ../helpers/common

GEN="$TOP/common/mk/gen-suite.sh"

# generated_list DIR: the suite files under DIR, as NN-slug/suite-NAME.bats.
generated_list() {
    (cd "$1" && ls -1 [0-9][0-9]-*/suite-*.bats 2>/dev/null) | sort
}

@test "tests/*/suite-*.bats are exactly what 'make suite' generates from tests/suite/" {
    run "$GEN" "$BATS_TEST_TMPDIR/fresh"
    assert_success
    local want have f drift=""
    want=$(generated_list "$BATS_TEST_TMPDIR/fresh")
    have=$(generated_list "$TOP/tests")
    [ -n "$want" ] || fail "the generator wrote no file"
    [ "$want" = "$have" ] || drift="the generated files are:
$want
tests/ holds:
$have
"
    for f in $want; do
        [ -f "$TOP/tests/$f" ] || continue
        cmp -s "$BATS_TEST_TMPDIR/fresh/$f" "$TOP/tests/$f" ||
            drift+="$(diff -u "$TOP/tests/$f" "$BATS_TEST_TMPDIR/fresh/$f" | head -n 20)
"
    done
    [ -z "$drift" ] || fail "tests/*/suite-*.bats differ from what 'make suite' generates (run it and commit the result):
$drift"
}

@test "every server in servers.txt gets one test per case, named with the server, and declared skips carry their reason" {
    local f n cases
    cases=$(grep -c '^ *suite_case ' "$TOP/tests/suite/cases.bats.in")
    [ "$cases" -ge 11 ] || fail "expected at least the 11 cases of the issue in cases.bats.in, found $cases"
    for f in "$TOP"/tests/[0-9][0-9]-*/suite-*.bats; do
        local name="${f##*/suite-}"
        name="${name%.bats}"
        # suite-NAME.faults.bats: the same cases, the shim in the server
        [[ "$name" != *.faults ]] || name="${name%.faults} under faults"
        n=$(grep -c "^@test \"$name: " "$f")
        [ "$n" -eq "$cases" ] || fail "${f#"$TOP"/}: $n tests named '$name: ...', expected $cases"
    done
    # every server the shim can see has its long file, marked for make test-long
    for f in "$TOP"/tests/[0-9][0-9]-*/suite-*.faults.bats; do
        head -n 3 "$f" | grep -q '^# test-long: ' || fail "${f#"$TOP"/}: no '# test-long:' line at its top"
        grep -q '^    SERVER_CMD=(env $(faults_env ' "$f" || fail "${f#"$TOP"/}: the server does not start under the faults shim"
    done
    [ -f "$TOP/tests/04-epoll/suite-echo-epoll-lt.faults.bats" ] || fail "no suite-echo-epoll-lt.faults.bats"
    [ ! -e "$TOP/tests/08-io_uring-echo/suite-echo-uring.faults.bats" ] ||
        fail "suite-echo-uring.faults.bats: the shim cannot see an io_uring server's I/O; no such file is wanted"
    # echo-blocking serves one client at a time: its skips are declared, with why
    run grep -A3 '^suite_declared_skips' "$TOP/tests/01-blocking/suite-echo-blocking.bats"
    assert_output --partial "many_idle: one client at a time"
}

@test "a declared skip is shown with its reason when the suite runs" {
    local t="$BATS_TEST_TMPDIR/tests"
    mkdir -p "$t/01-demo"
    ln -s "$TOP/tests/helpers" "$t/helpers"
    sed -e 's/@NAME@/demo/g; s/@PROGRAM@/true/; s/@KIND@/blocking/; s/@FAULTS_TITLE@/faults/; s/@LONG@//' \
        -e '/@LOADS@/d; /@FILE_HOOKS@/d; /@SETUP@/d; s/@COMMAND@/true/' \
        -e 's/^@SKIPS@$/binary: a reason worth reading/' \
        "$TOP/tests/suite/cases.bats.in" >"$t/01-demo/suite-demo.bats"
    run bats --tap --filter 'binary data' "$t/01-demo/suite-demo.bats"
    assert_success
    assert_output --partial "ok 1 demo: binary data with NUL bytes comes back intact # skip a reason worth reading"
}

@test "the generator refuses an unknown case, an unknown kind and a bad program, naming the line" {
    local fx="$BATS_TEST_TMPDIR/repo"
    mkdir -p "$fx/common/mk" "$fx/tests/suite" "$fx/tests/01-demo"
    cp "$GEN" "$fx/common/mk/"
    cp "$TOP/tests/suite/cases.bats.in" "$fx/tests/suite/"
    printf 'demo 01-demo blocking chapter:demo\n    skip nosuchcase: why\n' >"$fx/tests/suite/servers.txt"
    run "$fx/common/mk/gen-suite.sh"
    assert_failure
    assert_output --partial "servers.txt:2: no case 'nosuchcase'"
    printf 'demo 01-demo sideways chapter:demo\n' >"$fx/tests/suite/servers.txt"
    run "$fx/common/mk/gen-suite.sh"
    assert_failure
    assert_output --partial "servers.txt:1: unknown kind 'sideways'"
    printf 'demo 01-demo blocking build/demo\n' >"$fx/tests/suite/servers.txt"
    run "$fx/common/mk/gen-suite.sh"
    assert_failure
    assert_output --partial "servers.txt:1: PROGRAM must be chapter:PROG or exercise:EX/PROG"
    printf 'demo 01-demo blocking chapter:demo\n    skip binary:\n' >"$fx/tests/suite/servers.txt"
    run "$fx/common/mk/gen-suite.sh"
    assert_failure
    assert_output --partial "servers.txt:2: skip binary: needs a reason"
    [ ! -e "$fx/tests/01-demo/suite-demo.bats" ] || fail "a refused list still wrote files"
    # and a good one writes its file; a server that leaves the list takes its file along
    printf 'demo 01-demo blocking chapter:demo -x 1\n' >"$fx/tests/suite/servers.txt"
    run "$fx/common/mk/gen-suite.sh"
    assert_success
    grep -q 'SERVER_CMD=("$(chapter_bin demo)" -x 1)' "$fx/tests/01-demo/suite-demo.bats"
    # a Windows program runs under Wine, set up as chapter 09 does, with no faults file
    printf 'demo 01-demo win32 chapter:demo.exe -w 2\n' >"$fx/tests/suite/servers.txt"
    run "$fx/common/mk/gen-suite.sh"
    assert_success
    run cat "$fx/tests/01-demo/suite-demo.bats"
    assert_line 'load ../helpers/wine'
    assert_line 'setup_file() { wine_setup_file; }'
    assert_line 'teardown_file() { wine_teardown_file; }'
    assert_line '    SERVER_CMD=("$WINE" "$(chapter_bin demo.exe)" -w 2)'
    assert_line '    wine_require'
    [ ! -e "$fx/tests/01-demo/suite-demo.faults.bats" ] || fail "a faults file for a Windows program"
    printf '# nobody\n' >"$fx/tests/suite/servers.txt"
    run "$fx/common/mk/gen-suite.sh"
    assert_success
    assert_output --partial "removed tests/01-demo/suite-demo.bats"
    [ ! -e "$fx/tests/01-demo/suite-demo.bats" ]
}
