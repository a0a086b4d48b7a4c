# test-long: builds a scratch copy of the course and walks through the exercises (about 15 s)
# test-serial: make ex and make progress on a scratch copy build much of the course
# What a learner does with the exercises, end to end, on a scratch copy of the
# course: make progress, make hint, make ex, and bats on an unbuilt chapter.
load ../helpers/common

setup_file() {
    SCRATCH="$BATS_FILE_TMPDIR/course"
    mkdir -p "$SCRATCH"
    tar -C "$TOP" --exclude=./build --exclude=./.progress --exclude=./.git -cf - . |
        tar -C "$SCRATCH" -xf -
    export SCRATCH
    FIRST_EX=$(cd "$SCRATCH/solutions" && ls -d [0-9][0-9]-*/*/ | head -n 1)
    export FIRST_EX="${FIRST_EX%/}"
}

# make in the scratch copy, with its own build folder
smake() {
    env -u BUILD -u IMPL -u SAN -u MAKEFLAGS -u MAKELEVEL PATH="$(course_clean_path)" timeout 600 make --no-print-directory -C "$SCRATCH" "$@"
}

@test "on a fresh copy, make progress shows every exercise as not started" {
    [ -n "$FIRST_EX" ] || skip "the course has no exercises yet"
    run smake progress
    assert_success
    local n; n=$(cd "$SCRATCH/solutions" && ls -d [0-9][0-9]-*/*/ | wc -l)
    [ "$(grep -c 'not started$' <<<"$output")" -eq "$n" ] ||
        fail "expected $n exercises not started, got:
$output"
    assert_output --partial "next: exercises/$FIRST_EX/README.md"
}

@test "make ex on an untouched exercise fails and names the TODO to write" {
    [ -n "$FIRST_EX" ] || skip "the course has no exercises yet"
    run smake ex EX="$FIRST_EX"
    assert_failure
    assert_output --partial "stopped at a TODO you still have to write"
    assert_output --regexp "TODO at .*\.c:[0-9]+: "
}

@test "make ex IMPL=solutions passes: the reference solves the exercise" {
    [ -n "$FIRST_EX" ] || skip "the course has no exercises yet"
    run smake ex EX="$FIRST_EX" IMPL=solutions
    assert_success
    assert_output --partial "all tests pass"
}

@test "after copying the solution over the exercise, make progress shows it done" {
    [ -n "$FIRST_EX" ] || skip "the course has no exercises yet"
    cp -r "$SCRATCH/solutions/$FIRST_EX/." "$SCRATCH/exercises/$FIRST_EX/"
    run smake progress
    assert_success
    assert_line --regexp "^$FIRST_EX +done$"
    refute_output --partial "next: exercises/$FIRST_EX/"
}

@test "make hint shows hint 1, then hint 2, and remembers between calls" {
    [ -n "$FIRST_EX" ] || skip "the course has no exercises yet"
    run smake hint EX="$FIRST_EX"
    assert_success
    assert_output --partial "hint 1 of"
    assert_output --partial "## Hint 1"
    refute_output --partial "## Hint 2"
    run smake hint EX="$FIRST_EX"
    assert_success
    assert_output --partial "hint 2 of"
    assert_output --partial "## Hint 2"
    [ "$(cat "$SCRATCH/.progress/hints/${FIRST_EX//\//__}")" = 2 ]
}

@test "make ex and make hint without a valid EX list the exercises and exit 2" {
    [ -n "$FIRST_EX" ] || skip "the course has no exercises yet"
    run smake ex EX=99-nope/nothing
    assert_failure
    assert_output --partial "no exercise named '99-nope/nothing'"
    assert_output --partial "$FIRST_EX"
    run smake hint
    assert_failure
    assert_output --partial "usage: make hint EX="
}

@test "bats on a chapter that was not built says which make command builds it" {
    local t
    t=$(ls "$TOP"/tests/[0-9][0-9]-*/chapter.bats 2>/dev/null | head -n 1)
    [ -n "$t" ] || skip "no chapter tests yet"
    BUILD="$BATS_TEST_TMPDIR/nothing-built" run timeout 120 bats --tap "$t"
    assert_failure
    assert_output --regexp "missing .*: build it first with: make"
}
