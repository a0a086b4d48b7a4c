# test-long: runs the runner itself on fixtures, several files at once, and times them (about 30 s)
# The test runner itself: its summary line is what learners and CI read, so
# it must count right and fail when anything fails.
load ../helpers/common

# The runner under test must not inherit the FILTER of the run that runs it.
setup() {
    unset FILTER LONG
}

make_fixture() {
    local t="$BATS_TEST_TMPDIR/fixture/tests/01-demo"
    mkdir -p "$t"
    cp "$BATS_TEST_DIRNAME/fixtures/demo.bats.txt" "$t/chapter.bats"
    echo "$BATS_TEST_TMPDIR/fixture"
}

@test "the runner counts passed, failed and skipped tests and exits non-zero on a failure" {
    local fx; fx=$(make_fixture)
    COURSE_TESTS="$fx" run "$TOP/common/mk/run-tests.sh"
    assert_failure
    assert_line --index -1 "tests: 1 passed, 1 failed, 1 skipped"
    assert_output --partial "01-demo/chapter.bats: 2 fails"
}

@test "the runner exits 0 when nothing fails, skips included" {
    local fx; fx=$(make_fixture)
    sed -i '/"fails"/d' "$fx/tests/01-demo/chapter.bats"
    COURSE_TESTS="$fx" run "$TOP/common/mk/run-tests.sh"
    assert_success
    assert_line --index -1 "tests: 1 passed, 0 failed, 1 skipped"
}

@test "a test file bats cannot run counts as a failure, not as nothing" {
    local fx; fx=$(make_fixture)
    cp "$BATS_TEST_DIRNAME/fixtures/broken.bats.txt" "$fx/tests/01-demo/broken.bats"
    sed -i '/"fails"/d' "$fx/tests/01-demo/chapter.bats"
    COURSE_TESTS="$fx" run "$TOP/common/mk/run-tests.sh"
    assert_failure
    [[ "${lines[-1]}" =~ ^tests:\ [0-9]+\ passed,\ [1-9][0-9]*\ failed ]] ||
        fail "expected at least one failure, got: ${lines[-1]}"
}

@test "CH selects one chapter, and an unknown chapter is a clear error" {
    local fx; fx=$(make_fixture)
    mkdir -p "$fx/tests/02-other"
    grep -v '"fails"\|"skips"' "$fx/tests/01-demo/chapter.bats" >"$fx/tests/02-other/chapter.bats"
    COURSE_TESTS="$fx" run "$TOP/common/mk/run-tests.sh" 02
    assert_success
    assert_line --index -1 "tests: 1 passed, 0 failed, 0 skipped"
    COURSE_TESTS="$fx" run "$TOP/common/mk/run-tests.sh" 07
    assert_equal "$status" 2
    assert_output --partial "no tests/07-*/ folder"
}

@test "CH=suite runs the suite files of every chapter, and nothing else" {
    local fx; fx=$(make_fixture)
    mkdir -p "$fx/tests/02-other" "$fx/tests/suite"
    grep -v '"fails"\|"skips"' "$fx/tests/01-demo/chapter.bats" >"$fx/tests/01-demo/suite-a.bats"
    cp "$fx/tests/01-demo/suite-a.bats" "$fx/tests/02-other/suite-b.bats"
    cp "$fx/tests/01-demo/chapter.bats" "$fx/tests/02-other/chapter.bats"
    COURSE_TESTS="$fx" run "$TOP/common/mk/run-tests.sh" suite
    assert_success
    assert_line "== tests/01-demo/suite-a.bats"
    assert_line "== tests/02-other/suite-b.bats"
    refute_output --partial "chapter.bats"
    assert_line --index -1 "tests: 2 passed, 0 failed, 0 skipped"
}

@test "FILTER reaches bats" {
    local fx; fx=$(make_fixture)
    FILTER=passes COURSE_TESTS="$fx" run "$TOP/common/mk/run-tests.sh"
    assert_success
    assert_line --index -1 "tests: 1 passed, 0 failed, 0 skipped"
}

@test "a file marked test-long is left out of make test, named, and is all that LONG=1 (make test-long) runs" {
    local fx; fx=$(make_fixture)
    sed -i '/"fails"/d' "$fx/tests/01-demo/chapter.bats"
    { echo '# test-long: a fixture of the long kind'; echo '@test "long one" { true; }'; } >"$fx/tests/01-demo/slow.bats"
    COURSE_TESTS="$fx" run "$TOP/common/mk/run-tests.sh"
    assert_success
    assert_line --index -1 "tests: 1 passed, 0 failed, 1 skipped"
    assert_output --partial "left out, for make test-long: tests/01-demo/slow.bats"
    refute_output --partial "long one"
    LONG=1 COURSE_TESTS="$fx" run "$TOP/common/mk/run-tests.sh"
    assert_success
    assert_line --index -1 "tests: 1 passed, 0 failed, 0 skipped"
    assert_output --partial "ok 1 long one"
    refute_output --partial "== tests/01-demo/chapter.bats"
}

@test "the first line says which limits the run has: the soft open-file limit raised to the hard one, before any test" {
    local fx hard low
    fx=$(make_fixture)
    hard=$(course_fd_hard)
    [ "$hard" -gt 64 ] || skip "the hard limit on open files is $hard here: nothing to raise from 64"
    low=64
    { echo '@test "sees the raised limit" { echo "# soft $(ulimit -Sn)" >&3; [ "$(ulimit -Sn)" -gt '"$low"' ]; }'; } \
        >"$fx/tests/01-demo/chapter.bats"
    COURSE_TESTS="$fx" run bash -c 'ulimit -Sn "$1" && exec "$2"' _ "$low" "$TOP/common/mk/run-tests.sh"
    assert_success
    assert_line --index 0 --regexp "^limits for $(id -un) \(uid $(id -u)\): open files $hard \(soft limit raised from $low[;) ].*, locked memory .*, processes .*\$"
    assert_line "# soft $hard"
    assert_line --index -1 "tests: 1 passed, 0 failed, 0 skipped"
    # under the hard limit the tests need, the second line says so and how to raise it
    if [ "$hard" -ge 2464 ]; then
        COURSE_TESTS="$fx" run bash -c 'ulimit -n 1000 && exec "$1"' _ "$TOP/common/mk/run-tests.sh"
        assert_success
        assert_line --index 0 --regexp "^limits for .*: open files 1000 \(soft limit = hard limit\), "
        assert_line --index 1 --regexp "^  the tests that hold 2,000 connections need up to 2464 open files, and skip with fewer; .*/etc/security/limits.conf.*LimitNOFILE="
    fi
}

@test "a test that hangs is stopped and reported, and a file that leaves a process running fails" {
    local fx; fx=$(make_fixture)
    cp "$BATS_TEST_DIRNAME/fixtures/hang.bats.txt" "$fx/tests/01-demo/chapter.bats"
    BATS_TEST_TIMEOUT=2 COURSE_TESTS="$fx" run timeout 60 "$TOP/common/mk/run-tests.sh"
    assert_failure 1
    assert_line --regexp '^not ok 2 hangs in [0-9]+ms # timeout after 2s$'
    assert_line "tests/01-demo/chapter.bats left 1 process(es) running; killing them:"
    assert_line --regexp '^  +[0-9]+ sleep 1000$'
    assert_line "  tests/01-demo/chapter.bats: left processes running after its tests"
    assert_line --index -1 "tests: 1 passed, 2 failed, 0 skipped"
    run pgrep -f '^sleep 1000$'
    assert_failure
}

# timeout(1) without --foreground follows the signal it passes on with a
# SIGCONT to the whole process group, which can hang a sanitized program in
# LeakSanitizer at exit (the note on timeout in tests/helpers/common.bash).
# A line that wants timeout's own process group says so in its comment.
@test "no test starts timeout(1) in the background without --foreground" {
    run bash -c "cd '$TOP' && grep -rnE 'timeout [0-9][^|]*[^&]&\s*(#.*)?\$' tests --include=*.bats --include=*.bash | grep -v -e --foreground -e '# its own process group, on purpose'"
    assert_output ""
}

# Under the runner, bats keeps a watchdog process beside each test (for
# BATS_TEST_TIMEOUT): a bare `wait` waits for it too, that is for 300 s.
@test "no test waits for every background job with a bare wait" {
    run bash -c "cd '$TOP' && grep -rnE '^\\s*wait\\s*(\$|[;|&#]|2>)' tests --include=*.bats --include=*.bash"
    assert_output ""
}

# jobs_fixture: a.bats passes only while b.bats runs beside it (it waits up
# to 3 s for b's mark), and c.bats, marked test-serial, passes only if it
# starts after a is done. (The test lines are written with a placeholder:
# bats would take a literal one in this file for a test of its own.)
jobs_fixture() {
    local fx t
    fx=$(make_fixture)
    t="$fx/tests/01-demo"
    rm "$t/chapter.bats"
    mkdir -p "$fx/marks"
    cat >"$t/a.bats" <<END
TEST_ "a sees b running beside it" {
    for i in \$(seq 30); do [ -f "$fx/marks/b" ] && { touch "$fx/marks/a"; return 0; }; sleep 0.1; done
    false
}
END
    cat >"$t/b.bats" <<END
TEST_ "b leaves its mark" { touch "$fx/marks/b"; sleep 1; }
END
    cat >"$t/c.bats" <<END
# test-serial: a fixture that must run alone
TEST_ "c starts after a is done" { [ -f "$fx/marks/a" ]; }
END
    sed -i 's/^TEST_ /@test /' "$t"/*.bats
    echo "$fx"
}

@test "JOBS files run at once, each file's output whole and in order; a test-serial file runs alone; a bad JOBS is refused" {
    local fx i a b ra bad
    fx=$(jobs_fixture)
    JOBS=3 COURSE_TESTS="$fx" run "$TOP/common/mk/run-tests.sh"
    assert_success
    assert_line --index -1 "tests: 3 passed, 0 failed, 0 skipped"
    # a's header, then a's result, before b's header: printed in order, whole
    for ((i = 0; i < ${#lines[@]}; i++)); do
        case "${lines[$i]}" in
        "== tests/01-demo/a.bats") a=$i ;;
        "ok 1 a sees b running beside it"*) ra=$i ;;
        "== tests/01-demo/b.bats") b=$i ;;
        esac
    done
    [ -n "${a:-}" ] && [ -n "${ra:-}" ] && [ -n "${b:-}" ] && [ "$a" -lt "$ra" ] && [ "$ra" -lt "$b" ] ||
        fail "expected a's header, a's result, then b's header, got: $output"
    # one file at a time: a waits for b in vain, and so c finds no mark of a
    rm -f "$fx"/marks/*
    JOBS=1 COURSE_TESTS="$fx" run "$TOP/common/mk/run-tests.sh"
    assert_failure
    assert_line --index -1 "tests: 1 passed, 2 failed, 0 skipped"
    # by default two files per CPU, said in the summary (JOBS= : not the
    # JOBS this run may have been given)
    rm -f "$fx"/marks/*
    JOBS= COURSE_TESTS="$fx" run "$TOP/common/mk/run-tests.sh"
    assert_success
    assert_output --partial "JOBS=$((2 * $(nproc))), "
    for bad in 0 x -1; do
        JOBS=$bad COURSE_TESTS="$fx" run "$TOP/common/mk/run-tests.sh"
        assert_equal "$status" 2
        assert_output --partial "JOBS=$bad: a number of test files to run at once, 1 or more"
    done
}

# A Wine file waits for the Wine file before it (they share a prefix), but
# the files after it must not wait with it: w1 passes only if x, which comes
# after w2, runs beside it; w2 passes only if w1 was done when it started.
# (wine.bash here is a stand-in: the runner knows a Wine file by its load line.)
@test "a Wine file waits for the one before it, and the files after it start meanwhile" {
    local fx t
    fx=$(make_fixture)
    t="$fx/tests/01-demo"
    rm "$t/chapter.bats"
    mkdir -p "$fx/marks" "$fx/tests/helpers"
    echo '# a stand-in for the course'"'"'s wine helpers' >"$fx/tests/helpers/wine.bash"
    cat >"$t/w1.bats" <<END
load ../helpers/wine
TEST_ "w1 sees x running beside it" {
    for i in \$(seq 50); do [ -f "$fx/marks/x" ] && { touch "$fx/marks/w1"; return 0; }; sleep 0.1; done
    touch "$fx/marks/w1"
    false
}
END
    cat >"$t/w2.bats" <<END
load ../helpers/wine
TEST_ "w2 starts after w1 is done" { [ -f "$fx/marks/w1" ]; }
END
    cat >"$t/x.bats" <<END
TEST_ "x leaves its mark" { touch "$fx/marks/x"; sleep 1; }
END
    sed -i 's/^TEST_ /@test /' "$t"/*.bats
    JOBS=3 COURSE_TESTS="$fx" run "$TOP/common/mk/run-tests.sh"
    assert_success
    assert_line --index -1 "tests: 3 passed, 0 failed, 0 skipped"
}
