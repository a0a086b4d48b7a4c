# test-long: builds a scratch copy of the course and walks through the exercises (about 60 s)
# test-serial: make ex, make watch and make progress on a scratch copy build much of the course
# What a learner does with the exercises, end to end, on a scratch copy of the
# course: make progress, make hint, make ex, make watch (saves, swap files,
# Ctrl-C on a terminal), make reset, make solution, a wrong EX= for each of
# them, and bats on an unbuilt chapter.
load ../helpers/common

setup_file() {
    SCRATCH="$BATS_FILE_TMPDIR/course"
    mkdir -p "$SCRATCH"
    tar -C "$TOP" --exclude=./build --exclude=./.progress --exclude=./.git -cf - . |
        tar -C "$SCRATCH" -xf -
    export SCRATCH
    # in course order (chapter, then each exercise.txt's order:), as make progress lists them
    ALL_EX=$(bash -c '. "$1/common/mk/exercise-lib.sh" && exercise_list' - "$SCRATCH")
    FIRST_EX=$(head -n 1 <<<"$ALL_EX")
    # a write exercise (TODO, solution blocks) other than the first, which a
    # test solves early (the first one if it is the only one); the first fix
    # exercise, if any
    WRITE_EX="" FIX_EX=""
    local ex kind
    for ex in $ALL_EX; do
        kind=$(sed -n 's/^kind:[ \t]*//p' "$SCRATCH/solutions/$ex/exercise.txt" 2>/dev/null)
        [ -z "$WRITE_EX" ] && [ "${kind:-write}" = write ] && [ "$ex" != "$FIRST_EX" ] && WRITE_EX="$ex"
        [ -z "$FIX_EX" ] && [ "$kind" = fix ] && FIX_EX="$ex"
    done
    if [ -z "$WRITE_EX" ] && [ "$(sed -n 's/^kind:[ \t]*//p' "$SCRATCH/solutions/$FIRST_EX/exercise.txt" 2>/dev/null)" = write ]; then
        WRITE_EX="$FIRST_EX"
    fi
    export ALL_EX FIRST_EX WRITE_EX FIX_EX
}

teardown() {
    if [ -n "${WATCH_PID:-}" ] && kill -0 "$WATCH_PID" 2>/dev/null; then
        kill -TERM "$WATCH_PID" 2>/dev/null
        timeout 30 tail --pid="$WATCH_PID" -f /dev/null || kill -9 "$WATCH_PID" 2>/dev/null
        wait "$WATCH_PID" 2>/dev/null || true
    fi
    course_teardown
}

# make in the scratch copy, with its own build folder
smake() {
    env -u BUILD -u IMPL -u SAN -u MAKEFLAGS -u MAKELEVEL PATH="$(course_clean_path)" timeout 600 make --no-print-directory -C "$SCRATCH" "$@"
}

# a script of common/mk/ in the scratch copy, run as make runs it
sscript() {
    local s="$1"
    shift
    env -u BUILD -u IMPL -u SAN -u MAKEFLAGS -u MAKELEVEL PATH="$(course_clean_path)" timeout 600 "$SCRATCH/common/mk/$s" "$@"
}

# solve EX: make the learner's copy of EX the reference: the exercise
# folder's C files from solutions/, the from: files from the chapter
solve() {
    local ex="$1" ch="${1%%/*}" f
    (cd "$SCRATCH/solutions/$ex" && find . -type f \( -name '*.c' -o -name '*.h' \)) | while IFS= read -r f; do
        cp "$SCRATCH/solutions/$ex/$f" "$SCRATCH/exercises/$ex/$f"
    done
    for f in $(sed -n 's/^from:[ \t]*//p' "$SCRATCH/solutions/$ex/exercise.txt" 2>/dev/null); do
        cp "$SCRATCH/$f" "$SCRATCH/exercises/$ex/${f#chapters/"$ch"/}"
    done
}

# wait_for FILE ERE N SECONDS: until FILE has N lines matching ERE
wait_for() {
    local i
    for ((i = 0; i < $4 * 10; i++)); do
        local n
        n=$(grep -acE "$2" "$1" 2>/dev/null)
        [ "${n:-0}" -ge "$3" ] && return 0
        sleep 0.1
    done
    return 1
}

# the one-line verdict every make ex (and so every watch run) ends with
VERDICT='^[^ ]+: (all tests pass|not finished|some tests fail|does not compile|every test skipped)'

@test "on a fresh copy, make progress shows every exercise as not started" {
    [ -n "$FIRST_EX" ] || skip "the course has no exercises yet"
    run smake progress
    assert_success
    echo "$output" >"$BATS_FILE_TMPDIR/fresh-progress"
    local n; n=$(wc -l <<<"$ALL_EX")
    [ "$(grep -c 'not started$' <<<"$output")" -eq "$n" ] ||
        fail "expected $n exercises not started, got:
$output"
    assert_output --partial "next: $FIRST_EX, not started"
    assert_output --partial "the task: exercises/$FIRST_EX/README.md"
}

@test "make progress: a heading per chapter, its exercises in order: with their kind and level" {
    [ -n "$FIRST_EX" ] || skip "the course has no exercises yet"
    # what the first test printed, or a run of its own
    if [ -s "$BATS_FILE_TMPDIR/fresh-progress" ]; then
        output=$(cat "$BATS_FILE_TMPDIR/fresh-progress")
    else
        run smake progress
        assert_success
    fi
    # what progress listed: heading, exercise, kind, level
    local got want ex ch info heading
    got=$(awk '
        /^[^ ].*\([0-9]+ of [0-9]+ done\)$/ { h = $0; sub(/ +\([0-9]+ of [0-9]+ done\)$/, "", h); next }
        /^  [0-9][0-9]-[^ ]+\/[^ ]+ / { print h "|" $1 "|" $2 "|" $3 }' <<<"$output")
    want=$(for ex in $ALL_EX; do
        ch="${ex%%/*}" info="$SCRATCH/solutions/$ex/exercise.txt"
        heading=$(sed -n '1s/^#[ \t]*//p' "$SCRATCH/chapters/$ch/README.md" 2>/dev/null)
        echo "${heading:-$ch}|$ex|$(sed -n 's/^kind:[ \t]*//p' "$info")|$(sed -n 's/^level:[ \t]*//p' "$info")"
    done)
    [ "$got" = "$want" ] || fail "expected (heading|exercise|kind|level):
$want
got:
$got
from:
$output"
    # the course order is the chapter's, then each exercise.txt's order:
    want=$(for ex in $ALL_EX; do
        printf '%s %06d %s\n' "${ex%%/*}" "$(sed -n 's/^order:[ \t]*//p' "$SCRATCH/solutions/$ex/exercise.txt")" "$ex"
    done | LC_ALL=C sort -k1,1 -k2,2n -k3,3 | cut -d' ' -f3)
    [ "$want" = "$ALL_EX" ] || fail "not in order: order: $ALL_EX"
    # one heading per chapter
    local headings chapters
    headings=$(grep -cE '^[^ ].*\([0-9]+ of [0-9]+ done\)$' <<<"$output")
    chapters=$(cut -d/ -f1 <<<"$ALL_EX" | sort -u | wc -l)
    [ "$headings" -eq "$chapters" ] || fail "expected $chapters chapter headings, got $headings"
}

@test "make ex on an untouched exercise fails and names the TODO to write" {
    [ -n "$WRITE_EX" ] || skip "the course has no write exercise yet"
    run smake ex EX="$WRITE_EX"
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
    solve "$FIRST_EX"
    run smake progress
    assert_success
    assert_line --regexp "^  $FIRST_EX +[a-z]+ +[a-z-]+ +done$"
    refute_output --partial "next: $FIRST_EX,"
    # remembered: the next make progress tests nothing again
    [ -f "$SCRATCH/.progress/results/${FIRST_EX//\//__}" ] || fail "no result kept in .progress/results/"
    grep -q ' done$' "$SCRATCH/.progress/results/${FIRST_EX//\//__}"
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

@test "a wrong EX= exits 2 with the closest name, for ex, hint, watch, reset and solution" {
    [ -n "$WRITE_EX" ] || skip "the course has no exercises yet"
    local name="${WRITE_EX#*/}" typo s
    typo="${name:0:1}${name:2}" # one letter left out
    for s in ex hint watch reset solution; do
        run sscript "$s.sh" "$typo"
        [ "$status" -eq 2 ] || fail "$s.sh $typo: expected exit 2, got $status: $output"
        assert_output --partial "make $s: no exercise named '$typo'"
        assert_output --partial "$WRITE_EX"
        assert_output --regexp "[Dd]id you mean"
    done
    # the same through make
    run smake solution EX="$typo"
    assert_failure
    assert_output --partial "make solution: no exercise named '$typo'"
    assert_output --partial "$WRITE_EX"
    # a bare name that only one exercise has is taken for it, as is a path to it
    run smake hint EX="exercises/$WRITE_EX/" HINT=1
    assert_success
    assert_output --partial "$WRITE_EX: hint 1 of"
    if [ "$(grep -c "/$name\$" <<<"$ALL_EX")" -eq 1 ]; then
        run smake hint EX="$name" HINT=1
        assert_success
        assert_output --partial "$WRITE_EX: hint 1 of"
    fi
}

@test "make solution refuses before the exercise passes, shows the reference after, and with FORCE=1" {
    [ -n "$WRITE_EX" ] || skip "the course has no write exercise yet"
    [ "$WRITE_EX" != "$FIRST_EX" ] || skip "needs a write exercise that another test has not solved"
    # a line of the reference that the learner's copy does not have
    local line files=() f
    while IFS= read -r f; do files+=("$f"); done < <(find "$SCRATCH/solutions/$WRITE_EX" -name '*.[ch]')
    for f in $(sed -n 's/^from:[ \t]*//p' "$SCRATCH/solutions/$WRITE_EX/exercise.txt"); do files+=("$SCRATCH/$f"); done
    line=$(awk -v name="${WRITE_EX#*/}" '
        /EXERCISE BEGIN/ { inside = ($0 ~ ("EXERCISE BEGIN( " name ")?:")); next }
        /EXERCISE END/ { inside = 0 }
        inside && NF > 2' "${files[@]}" | head -n 1)
    [ -n "$line" ] || fail "found no reference line in $WRITE_EX's blocks"
    run smake solution EX="$WRITE_EX"
    assert_failure
    assert_output --partial "not yet: your copy of $WRITE_EX does not pass"
    assert_output --partial "FORCE=1"
    refute_output --partial "$line"
    run smake solution EX="$WRITE_EX" FORCE=1
    assert_success
    assert_output --partial "$line"
    solve "$WRITE_EX"
    run smake solution EX="$WRITE_EX"
    assert_success
    assert_output --partial "your copy passes"
    assert_output --partial "$line"
    assert_output --regexp 'TODO\("[^"]+"\)'
}

@test "make solution on a fix exercise shows the bug's diff against the chapter's file" {
    [ -n "$FIX_EX" ] || skip "the course has no fix exercise yet"
    run smake solution EX="$FIX_EX" FORCE=1
    assert_success
    assert_line --regexp "^--- exercises/$FIX_EX/.* \(as shipped\)$"
    assert_line --regexp "^\+\+\+ chapters/${FIX_EX%%/*}/"
    # the bug's lines, and nothing of the markers the generator leaves out
    assert_line --regexp '^[-+][^-+]'
    refute_line --regexp '^[-+].*(EXERCISE (BEGIN|END)|snippet: |end snippet)'
}

@test "make reset puts the exercise back as shipped, keeps the learner's copy in .progress/reset/, clears its hints" {
    [ -n "$WRITE_EX" ] || skip "the course has no write exercise yet"
    local ex="$WRITE_EX" fresh="$BATS_TEST_TMPDIR/fresh"
    solve "$ex"
    echo "/* mine */" >>"$(find "$SCRATCH/exercises/$ex" -name '*.c' | head -n 1)"
    smake hint EX="$ex" >/dev/null
    [ -f "$SCRATCH/.progress/hints/${ex//\//__}" ]
    run smake reset EX="$ex"
    assert_success
    assert_output --partial "exercises/$ex/ is back as shipped"
    assert_output --partial "Your copy is kept in .progress/reset/$ex.1/"
    # the learner's copy, whole, where it says
    grep -rq '/\* mine \*/' "$SCRATCH/.progress/reset/$ex.1" || fail "the kept copy lacks the learner's line"
    # the exercise is what the generator writes: no drift
    "$SCRATCH/common/mk/gen-exercises.sh" "$SCRATCH/solutions" "$fresh" "$ex" >/dev/null
    run diff -r "$fresh/$ex" "$SCRATCH/exercises/$ex"
    assert_success
    # nothing left in exercises/ that make exercises or the Makefile would take for an exercise
    run diff <(cd "$SCRATCH/solutions" && ls -d "${ex%%/*}"/*/) <(cd "$SCRATCH/exercises" && ls -d "${ex%%/*}"/*/)
    assert_success
    [ ! -e "$SCRATCH/.progress/hints/${ex//\//__}" ] || fail "its hint state was not cleared"
    run smake hint EX="$ex"
    assert_output --partial "hint 1 of"
    # a second reset keeps nothing (nothing is the learner's), a changed one keeps .2
    run smake reset EX="$ex"
    assert_success
    assert_output --partial "already as shipped"
    echo "/* again */" >>"$(find "$SCRATCH/exercises/$ex" -name '*.c' | head -n 1)"
    run smake reset EX="$ex"
    assert_output --partial ".progress/reset/$ex.2/"
    [ -d "$SCRATCH/.progress/reset/$ex.1" ]
}

@test "a stage of the capstone: its files are the program's; make reset on it puts the program back and keeps the learner's" {
    local stage prog fresh
    stage=$(grep -m1 '^[0-9][0-9]-[^/]*/stage-' <<<"$ALL_EX") || skip "the course has no capstone stage"
    run bash -c '. "$1/common/mk/exercise-lib.sh" && exercise_program "$2"' - "$SCRATCH" "$stage"
    assert_success
    prog=$output
    [ "$prog" != "$stage" ] && [ -d "$SCRATCH/exercises/$prog" ] || fail "stage $stage: no program folder ($prog)"
    # untouched: not started; a change to the program (not to the stage's
    # folder) is what starts a stage
    fresh="$(bash -c '. "$1/common/mk/exercise-lib.sh" && exercise_fresh_all' - "$SCRATCH")"
    run bash -c '. "$1/common/mk/exercise-lib.sh" && exercise_status "$2" "$3"' - "$SCRATCH" "$stage" "$fresh"
    assert_output "not started"
    echo "/* mine */" >>"$SCRATCH/exercises/$prog/mini-redis.c"
    run bash -c '. "$1/common/mk/exercise-lib.sh" && exercise_untouched "$3/$2" "$1/exercises/$2"' - "$SCRATCH" "$prog" "$fresh"
    assert_failure
    run smake reset EX="$stage"
    assert_success
    assert_output --partial "exercises/$prog/, the program every stage of ${stage%%/*} tests, is back as shipped"
    assert_output --partial "Your copy is kept in .progress/reset/$prog.1/"
    grep -q '/\* mine \*/' "$SCRATCH/.progress/reset/$prog.1/mini-redis.c" || fail "the kept copy lacks the learner's line"
    run diff -r "$fresh/$prog" "$SCRATCH/exercises/$prog"
    assert_success
}

@test "make watch re-runs the tests on a save (by rename too), not for a swap file, and SIGINT ends it with 0" {
    command -v inotifywait >/dev/null || skip "inotifywait is not installed (make deps installs inotify-tools)"
    env --default-signal=INT true 2>/dev/null || skip "env has no --default-signal here"
    [ -n "$WRITE_EX" ] || skip "the course has no write exercise yet"
    local ex="$WRITE_EX" log="$BATS_TEST_TMPDIR/watch.log" dir f
    dir="$SCRATCH/exercises/$ex"
    f=$(find "$dir" -name '*.c' | head -n 1)
    # a background job of this shell ignores SIGINT unless told otherwise
    (cd "$SCRATCH" && exec env --default-signal=INT -u BUILD -u IMPL -u SAN -u MAKEFLAGS -u MAKELEVEL \
        PATH="$(course_clean_path)" "$SCRATCH/common/mk/watch.sh" "$ex") >"$log" 2>&1 &
    WATCH_PID=$!
    wait_for "$log" "$VERDICT" 1 60 || fail "no verdict from the first run:
$(cat "$log")"
    assert_equal "$(grep -c ' run 1 at ' "$log")" 1
    # an editor's swap file is not a save
    : >"$dir/.$(basename "$f").swp"
    sleep 1.5 # inotifywait wakes at least once a second
    [ "$(grep -c ' run 2 at ' "$log")" -eq 0 ] || fail "a swap file started a run:
$(cat "$log")"
    # a save the way vim and many editors do it: a new file renamed over the old
    cp "$f" "$f.new"
    echo "/* saved */" >>"$f.new"
    mv "$f.new" "$f"
    wait_for "$log" "$VERDICT" 2 60 || fail "no second run after the save:
$(cat "$log")"
    grep -q " run 2 at .*saved: $(basename "$f")" "$log" || fail "run 2 does not name the saved file:
$(cat "$log")"
    # the run ends with the same verdict as make ex
    [ "$(grep -cE "$VERDICT" "$log")" -eq 2 ]
    kill -INT "$WATCH_PID"
    local st=0
    wait "$WATCH_PID" || st=$?
    WATCH_PID=""
    [ "$st" -eq 0 ] || fail "make watch exited $st after SIGINT:
$(cat "$log")"
    assert_equal "$(tail -n 1 "$log")" "make watch: stopped."
    rm -f "$dir/.$(basename "$f").swp"
}

@test "make watch on a terminal, no EX: takes the next exercise, re-runs on a save, Ctrl-C exits 0 (POLL=1)" {
    command -v script >/dev/null || skip "no script(1) (util-linux) to give make watch a terminal"
    script -qec true /dev/null </dev/null >/dev/null 2>&1 || skip "script(1) cannot open a pseudo-terminal here"
    [ -n "$FIRST_EX" ] || skip "the course has no exercises yet"
    local log="$BATS_TEST_TMPDIR/tty.log" st=0
    {
        local ex f
        if wait_for "$log" "$VERDICT" 1 60; then
            # the exercise it watches now: the one it took, or the one after
            # it when that one passed at once
            sleep 1
            ex=$(sed -n 's/.*watching the next unfinished exercise, \([^ ]*\) (make progress.*/\1/p; s/^make watch: next: \([^ ]*\) (.*/\1/p' "$log" | tail -n 1)
            f=$(find "$SCRATCH/exercises/$ex" -name '*.c' | head -n 1)
            # an unchanged save (same bytes, written anew) runs the tests too
            cp "$f" "$f.new" && mv "$f.new" "$f"
            wait_for "$log" "$VERDICT" 2 60
        fi
        printf '\003' # Ctrl-C
        wait_for "$log" 'make watch: stopped' 1 10
        sleep 1
    } | env -u BUILD -u IMPL -u SAN -u MAKEFLAGS -u MAKELEVEL PATH="$(course_clean_path)" \
        timeout 150 script -qefc "make --no-print-directory -C '$SCRATCH' watch POLL=1" /dev/null >"$log" 2>&1 || st=$?
    local out
    out=$(tr -d '\r' <"$log")
    [ "$st" -eq 0 ] || fail "make watch exited $st on Ctrl-C (expected 0):
$out"
    grep -q "no EX given: watching the next unfinished exercise, " <<<"$out" || fail "it did not say which exercise:
$out"
    [ "$(grep -cE "$VERDICT" <<<"$out")" -eq 2 ] || fail "expected two runs, each with its verdict:
$out"
    grep -q "once a second: POLL=1" <<<"$out"
    grep -q "make watch: stopped." <<<"$out"
    ! grep -q "make: \*\*\*" <<<"$out" || fail "make reported the Ctrl-C:
$out"
}

@test "bats on a chapter that was not built says which make command builds it" {
    local t
    t=$(ls "$TOP"/tests/[0-9][0-9]-*/chapter.bats 2>/dev/null | head -n 1)
    [ -n "$t" ] || skip "no chapter tests yet"
    BUILD="$BATS_TEST_TMPDIR/nothing-built" run timeout 120 bats --tap "$t"
    assert_failure
    assert_output --regexp "missing .*: build it first with: make"
}
