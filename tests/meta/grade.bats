#!/usr/bin/env bats
# test-long: grades exercises in a scratch copy of the course, which builds its own common/ (about 80 s)
# make grade: the classroom's score. In a scratch copy of the course (its own
# build/ and .progress/), one exercise is solved (its chapter's file put in
# place of the learner's copy) and one is started but wrong; the table, the
# "grade: N/M" line, the JUnit report and the exit statuses must say so.
load ../helpers/common

setup_file() {
    COPY="$BATS_FILE_TMPDIR/course"
    mkdir -p "$COPY"
    tar -C "$TOP" --exclude=./build --exclude=./.progress --exclude=./.git -cf - . | tar -C "$COPY" -xf -
    # as shipped, except two exercises of chapter 01: cat-loop solved (the
    # chapter's own file is its reference), write-all started and wrong
    # (its TODO replaced by code that compiles and does nothing)
    "$TOP/common/mk/gen-exercises.sh" "$COPY/solutions" "$COPY/exercises" 01-blocking/cat-loop 01-blocking/write-all
    cp "$TOP/chapters/01-blocking/blocking-cat.c" "$COPY/exercises/01-blocking/cat-loop/blocking-cat.c"
    local f
    f="$(grep -l 'TODO(' "$COPY"/exercises/01-blocking/write-all/*.c | head -n 1)"
    sed -i 's/^\([ \t]*\)TODO(".*");/\1(void)0;/' "$f"
    export COPY
}

grade() { # grade ARGS...: make grade in the copy, as a learner's shell runs it:
    # without this bats' variables (the tests it runs are bats files too) or
    # the helpers' TOP, BUILD and IMPL, which name this checkout, not the copy
    local v unset=()
    for v in $(compgen -e); do
        case "$v" in BATS_* | TOP | BUILD | IMPL | MAKEFLAGS | MAKELEVEL | MFLAGS) unset+=(-u "$v") ;; esac
    done
    run env "${unset[@]}" PATH="$(course_clean_path)" timeout 600 make -s -C "$COPY" grade "$@"
}

@test "make grade CH=01: one table row per exercise, its chapter's subtotal, and grade: N/M with warm-up 1, core 2, challenge 3" {
    grade CH=01
    assert_success
    assert_line --regexp '^  01-blocking/cat-loop +warm-up +1/1 +done$'
    assert_line --regexp '^  01-blocking/write-all +core +0/2 +failing \('
    assert_line --regexp '^  01-blocking/lost-signal +challenge +0/3 +not started$'
    assert_line --regexp '^  01-blocking, in all +1/8$'
    assert_line 'grade: 1/8'
    # the last line is the grade: a classroom reads it there
    [ "${lines[${#lines[@]} - 1]}" = "grade: 1/8" ]
}

@test "the JUnit report has a testsuite per chapter and a testcase per exercise, failing where no points were given" {
    grade CH=01
    assert_success
    run python3 - "$COPY/build/grade/junit.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
for suite in root:
    for case in suite:
        state = "failure" if case.find("failure") is not None else "skipped" if case.find("skipped") is not None else "pass"
        print(suite.get("name"), case.get("name"), state)
print("tests", root.get("tests"), "failures", root.get("failures"))
EOF
    assert_success
    assert_line '01-blocking cat-loop pass'
    assert_line '01-blocking write-all failure'
    assert_line '01-blocking eintr-read failure'
    assert_line 'tests 4 failures 3'
}

@test "make grade EX=: exit 0 only when that exercise passes (what an autograder gives points for)" {
    grade EX=01-blocking/cat-loop
    assert_success
    assert_line 'grade: 1/1'
    grade EX=01-blocking/write-all
    assert_failure
    assert_line 'grade: 0/2'
}

@test "make grade with a chapter or an exercise that does not exist: a clear message and exit 2" {
    grade CH=77
    assert_failure
    assert_output --partial "make grade CH=77: no chapter with exercises by that name"
    grade EX=no-such-exercise
    assert_failure
    assert_output --partial "no exercise named 'no-such-exercise'"
}
