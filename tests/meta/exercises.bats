# test-long: regenerates every exercise and runs each one's tests untouched (about 3 minutes)
# test-serial: it builds every exercise and runs their tests, a whole run's worth of load
# The exercise machinery: exercises/ is generated from solutions/ and must not
# drift; the generator must do exactly what its header (common/mk/gen-exercises.sh)
# and CONTRIBUTING.md's "Adding an exercise" say; and every exercise,
# as shipped, must fail its tests for the right reason: the program stopped
# at TODO (exit 99), not a crash, a hang or a compile error.
load ../helpers/common

GEN="$TOP/common/mk/gen-exercises.sh"
FIXTURE="$BATS_TEST_DIRNAME/fixtures/gen/solutions"

@test "exercises/ is exactly what 'make exercises' generates from solutions/" {
    run "$GEN" "$TOP/solutions" "$BATS_TEST_TMPDIR/fresh"
    assert_success
    run diff -r "$BATS_TEST_TMPDIR/fresh" "$TOP/exercises"
    [ "$status" -eq 0 ] && return 0
    local drift="$output"
    if [ "${COURSE_STRICT:-0}" != 1 ]; then
        # A learner's own work is not drift: skip files that no longer match
        # the checksum the generator recorded (exercises/.checksums), and
        # fail on anything else.
        local f other=() changed
        changed=$(cd "$TOP/exercises" && sha256sum --quiet -c .checksums 2>/dev/null | sed -n 's/: FAILED$//p')
        while IFS= read -r f; do
            [ -f "$TOP/exercises/$f" ] && grep -qxF -- "$f" <<<"$changed" || other+=("$f")
        done < <(diff -rq "$BATS_TEST_TMPDIR/fresh" "$TOP/exercises" |
            sed -n "s|^Files $BATS_TEST_TMPDIR/fresh/\(.*\) and .* differ$|\1|p; s|^Only in .*|ONLY|p")
        [ ${#other[@]} -eq 0 ] && skip "exercises/ holds your own work; drift is checked on a clean clone"
    fi
    fail "exercises/ differs from what 'make exercises' generates (run it and commit the result):
$drift"
}

@test "the generator turns each block into TODO(task) at the block's indentation" {
    run "$GEN" "$FIXTURE" "$BATS_TEST_TMPDIR/out"
    assert_success
    local c="$BATS_TEST_TMPDIR/out/01-demo/greet/greet.c"
    run grep -c 'EXERCISE' "$c"
    assert_output 0
    run grep -n 'TODO(' "$c"
    assert_line '9:        TODO("print a greeting for who");'
    assert_line '16:    TODO("call greet for the world");'
    refute_output --partial 'printf("hello'
    # everything else is copied as it is
    cmp "$FIXTURE/01-demo/greet/hints.md" "$BATS_TEST_TMPDIR/out/01-demo/greet/hints.md"
    cmp "$FIXTURE/01-demo/greet/Makefile" "$BATS_TEST_TMPDIR/out/01-demo/greet/Makefile"
}

@test "the generated exercise compiles and stops at TODO with exit 99 and file:line" {
    run "$GEN" "$FIXTURE" "$BATS_TEST_TMPDIR/out"
    assert_success
    gcc -std=c11 -D_GNU_SOURCE -Wall -Wno-unused-function -I"$TOP/common" -o "$BATS_TEST_TMPDIR/greet" \
        "$BATS_TEST_TMPDIR/out/01-demo/greet/greet.c"
    run "$BATS_TEST_TMPDIR/greet"
    assert_equal "$status" 99
    assert_output --regexp 'TODO at .*greet\.c:16: call greet for the world'
}

broken_fixture() { # broken_fixture SED-EXPRESSION: a fixture copy with one edit, in $BROKEN
    rm -rf "$BATS_TEST_TMPDIR/btop"
    cp -r "$FIXTURE/.." "$BATS_TEST_TMPDIR/btop"
    BROKEN="$BATS_TEST_TMPDIR/btop/solutions"
    sed -i "$1" "$BROKEN/01-demo/greet/greet.c"
}

@test "the generator refuses an EXERCISE BEGIN that never ends, naming file and line" {
    broken_fixture '/EXERCISE END/d'
    run "$GEN" "$BROKEN" "$BATS_TEST_TMPDIR/out"
    assert_failure
    assert_output --regexp 'greet\.c:[0-9]+: EXERCISE BEGIN (inside another block|never ended)'
    [ ! -e "$BATS_TEST_TMPDIR/out" ] || fail "a failed run must not write the output folder"
}

@test "the generator refuses a task with a double quote, and adds #include \"todo.h\" where it is missing" {
    broken_fixture 's/call greet for the world/call "greet"/'
    run "$GEN" "$BROKEN" "$BATS_TEST_TMPDIR/out"
    assert_failure
    assert_output --partial 'may not contain a double quote'
    broken_fixture '/#include "todo.h"/d'
    run "$GEN" "$BROKEN" "$BATS_TEST_TMPDIR/out"
    assert_success
    run grep -c '^#include "todo.h"$' "$BATS_TEST_TMPDIR/out/01-demo/greet/greet.c"
    assert_output 1
}

@test "a chapter file on the from: line: the exercise's named blocks are cut, another exercise's keep their code" {
    run "$GEN" "$FIXTURE" "$BATS_TEST_TMPDIR/out"
    assert_success
    local c="$BATS_TEST_TMPDIR/out/01-demo/greet/counter.c"
    run grep -c EXERCISE "$c"
    assert_output 0
    grep -q '^    TODO("add 1 to n into sum, and say so");$' "$c" || fail "the greet block was not cut: $(cat "$c")"
    grep -q '^    while (n > 0)$' "$c" || fail "the other exercise's code went: $(cat "$c")"
    grep -q '^#include "todo.h"$' "$c" || fail "no #include \"todo.h\" where a block was cut"
    # and the chapter file itself is untouched
    grep -q 'EXERCISE BEGIN greet' "$(dirname "$FIXTURE")/chapters/01-demo/counter.c"
}

@test "a fix exercise: the chapter file with its patch applied and every marker gone, nothing cut" {
    run "$GEN" "$FIXTURE" "$BATS_TEST_TMPDIR/out"
    assert_success
    local c="$BATS_TEST_TMPDIR/out/01-demo/fix-count/counter.c"
    grep -q 'for (i = 1; i < n; i++)' "$c" || fail "the bug was not planted: $(cat "$c")"
    run grep -c 'EXERCISE\|TODO' "$c"
    assert_output 0
    [ ! -e "$BATS_TEST_TMPDIR/out/01-demo/fix-count/exercise.txt" ] || fail "exercise.txt is not for the learner"
}

@test "the generator refuses a bad exercise.txt, a patch that does not apply, and a write exercise with nothing to cut" {
    cp -r "$FIXTURE/.." "$BATS_TEST_TMPDIR/top"
    local sol="$BATS_TEST_TMPDIR/top/solutions"
    sed -i 's/^kind: write/kind: guess/' "$sol/01-demo/greet/exercise.txt"
    run "$GEN" "$sol" "$BATS_TEST_TMPDIR/out"
    assert_failure
    assert_output --partial "kind must be write, fix, predict, stage or program, not 'guess'"
    sed -i 's/^kind: guess/kind: write/' "$sol/01-demo/greet/exercise.txt"
    sed -i 's/i <= n/i <= 2 * n/' "$BATS_TEST_TMPDIR/top/chapters/01-demo/counter.c"
    run "$GEN" "$sol" "$BATS_TEST_TMPDIR/out"
    assert_failure
    assert_output --partial "mutants/fix-count.patch does not apply"
    cp "$FIXTURE/../chapters/01-demo/counter.c" "$BATS_TEST_TMPDIR/top/chapters/01-demo/counter.c"
    sed -i '/EXERCISE/d' "$sol/01-demo/greet/greet.c" "$BATS_TEST_TMPDIR/top/chapters/01-demo/counter.c"
    run "$GEN" "$sol" "$BATS_TEST_TMPDIR/out"
    assert_failure
    assert_output --regexp "a write exercise with no EXERCISE BEGIN greet block|does not apply"
    [ ! -e "$BATS_TEST_TMPDIR/out" ] || fail "a failed run must not write the output folder"
}

@test "a capstone: its program folder is copied with its blocks cut, its stages have no code of their own, and a stage must name a program" {
    cp -r "$FIXTURE/.." "$BATS_TEST_TMPDIR/top"
    local sol="$BATS_TEST_TMPDIR/top/solutions" out="$BATS_TEST_TMPDIR/out"
    mkdir -p "$sol/01-demo/mine" "$sol/01-demo/stage-1"
    printf 'kind: program\n' >"$sol/01-demo/mine/exercise.txt"
    printf 'PROGS := mine\n' >"$sol/01-demo/mine/Makefile"
    printf '# yours\n' >"$sol/01-demo/mine/README.md"
    printf 'int main(void)\n{\n    /* EXERCISE BEGIN: stage 1 */\n    return 0;\n    /* EXERCISE END */\n}\n' >"$sol/01-demo/mine/mine.c"
    printf 'kind: stage\nlevel: core\norder: 3\ntitle: the first stage\nprogram: mine\n' >"$sol/01-demo/stage-1/exercise.txt"
    printf 'include ../stage.mk\n' >"$sol/01-demo/stage-1/Makefile"
    printf '# stage 1\n' >"$sol/01-demo/stage-1/README.md"
    printf '## Hint 1\n## Hint 2\n## Hint 3\n' >"$sol/01-demo/stage-1/hints.md"
    run "$GEN" "$sol" "$out"
    assert_success
    run diff -r -x exercise.txt -x mine.c "$sol/01-demo/mine" "$out/01-demo/mine"
    assert_success
    # its blocks are cut as an exercise's own files' are: a whole program in
    # solutions/, a TODO in the learner's copy
    grep -q 'TODO("stage 1");' "$out/01-demo/mine/mine.c" || fail "the program's block was not cut: $(cat "$out/01-demo/mine/mine.c")"
    ! grep -q 'return 0;' "$out/01-demo/mine/mine.c" || fail "the block's code was left in the learner's copy"
    [ ! -e "$out/01-demo/mine/exercise.txt" ] || fail "the program's exercise.txt was copied"
    assert_equal "$(cd "$out/01-demo/stage-1" && ls | paste -sd' ')" "Makefile README.md hints.md"
    # a stage naming no program, or a folder that is not one, is refused
    sed -i 's/^program: mine/program: greet/' "$sol/01-demo/stage-1/exercise.txt"
    run "$GEN" "$sol" "$BATS_TEST_TMPDIR/out2"
    assert_failure
    assert_output --partial "a stage needs program: NAME, a folder of 01-demo whose exercise.txt says kind: program (not 'greet')"
    # a stage with code to cut is refused: its code is its program's
    sed -i 's/^program: greet/program: mine/' "$sol/01-demo/stage-1/exercise.txt"
    printf '/* EXERCISE BEGIN: x */\nint x;\n/* EXERCISE END */\n' >"$sol/01-demo/stage-1/extra.c"
    run "$GEN" "$sol" "$BATS_TEST_TMPDIR/out3"
    assert_failure
    assert_output --partial "a stage has no code of its own to cut"
}

@test "the generator with EX names regenerates only those, and leaves the rest of the folder alone" {
    run "$GEN" "$FIXTURE" "$BATS_TEST_TMPDIR/out"
    assert_success
    echo "mine" >"$BATS_TEST_TMPDIR/out/01-demo/greet/greet.c"
    echo "mine too" >"$BATS_TEST_TMPDIR/out/01-demo/fix-count/counter.c"
    run "$GEN" "$FIXTURE" "$BATS_TEST_TMPDIR/out" 01-demo/fix-count
    assert_success
    assert_equal "$(cat "$BATS_TEST_TMPDIR/out/01-demo/greet/greet.c")" mine
    grep -q 'i < n' "$BATS_TEST_TMPDIR/out/01-demo/fix-count/counter.c"
    run "$GEN" "$FIXTURE" "$BATS_TEST_TMPDIR/out" 01-demo/nothing
    assert_failure
    assert_output --partial "no exercise 01-demo/nothing"
}

@test "no README or book page prints an exercise's answer (3 lines in a row of a cut, or of what a fix patch takes out)" {
    run python3 "$TOP/common/mk/check-answers.py" "$TOP"
    [ "$status" -eq 0 ] || fail "$output"
}

@test "the answers check finds an answer pasted into a chapter README" {
    cp -r "$FIXTURE/.." "$BATS_TEST_TMPDIR/top"
    local t="$BATS_TEST_TMPDIR/top"
    run python3 "$TOP/common/mk/check-answers.py" "$t"
    assert_success
    mkdir -p "$t/chapters/01-demo"
    cat >"$t/chapters/01-demo/README.md" <<'END'
# 01

The loop:

```c
for (i = 1; i <= n; i++)

    sum += i;
printf("the sum of 1 to %d is %d\n", n, sum);
```
END
    run python3 "$TOP/common/mk/check-answers.py" "$t"
    assert_failure
    assert_output --partial "chapters/01-demo/README.md"
    assert_output --partial "prints the answer of exercise 01-demo/greet"
}

@test "the answers check finds a one-line fix printed in a README, and make snippets leaves answers out of an excerpt" {
    cp -r "$FIXTURE/.." "$BATS_TEST_TMPDIR/top"
    local t="$BATS_TEST_TMPDIR/top"
    mkdir -p "$t/common/mk" "$t/chapters/01-demo"
    cp "$TOP/common/mk/check-answers.py" "$TOP/common/mk/snippets.sh" "$t/common/mk/"
    # the fix exercise fix-count takes out one line of counter.c's loop
    sed -i 's|^\(    \)/\* EXERCISE BEGIN greet|\1/* snippet: loop */\n&|; s|^\(    \)/\* EXERCISE END \*/|&\n\1/* end snippet */|' \
        "$t/chapters/01-demo/counter.c"
    printf '# 01\n\n<!-- snippet: chapters/01-demo/counter.c loop -->\n```c\nold\n```\n' >"$t/chapters/01-demo/README.md"
    run "$t/common/mk/snippets.sh" --fix
    assert_success
    run cat "$t/chapters/01-demo/README.md"
    # the write exercise's block around it is left out too: neither the fix
    # nor the block's code, one "/* ... */" in their place
    refute_output --partial "i <= n"
    refute_output --partial "sum += i"
    refute_output --partial 'printf("the sum'
    assert_output --partial "/* ... */"
    # without the block, only the fix goes, and the header takes its body
    # with it: no orphan "sum += i;"
    sed -i '/EXERCISE /d' "$t/chapters/01-demo/counter.c"
    run "$t/common/mk/snippets.sh" --fix
    assert_success
    run cat "$t/chapters/01-demo/README.md"
    refute_output --partial "i <= n"
    refute_output --partial "sum += i"
    assert_output --partial 'printf("the sum of 1 to %d is %d\n", n, sum);'
    assert_output --partial "/* ... */"
    run python3 "$t/common/mk/check-answers.py" "$t"
    assert_success
    # the same line pasted by hand: found
    printf '\n```c\n    for (i = 1; i <= n; i++)\n```\n' >>"$t/chapters/01-demo/README.md"
    run python3 "$t/common/mk/check-answers.py" "$t"
    assert_failure
    assert_output --partial "prints the answer of exercise 01-demo/fix-count: for (i = 1; i <= n; i++)"
}

@test "the generator will not overwrite a learner's finished TODO unless FORCE=1" {
    run "$GEN" "$FIXTURE" "$BATS_TEST_TMPDIR/out"
    assert_success
    local c="$BATS_TEST_TMPDIR/out/01-demo/greet/greet.c"
    sed -i 's/TODO("call greet for the world");/return greet("world");/' "$c"
    run "$GEN" "$FIXTURE" "$BATS_TEST_TMPDIR/out"
    assert_failure
    assert_output --partial "holds your own work"
    grep -q 'return greet("world");' "$c"
    FORCE=1 run "$GEN" "$FIXTURE" "$BATS_TEST_TMPDIR/out"
    assert_success
    grep -q 'TODO("call greet for the world");' "$c"
}

@test "the generator will not overwrite a fixed bug either (a change with no TODO in it), and single exercises keep .checksums true" {
    run "$GEN" "$FIXTURE" "$BATS_TEST_TMPDIR/out"
    assert_success
    (cd "$BATS_TEST_TMPDIR/out" && sha256sum --quiet -c .checksums) || fail ".checksums does not match what was written"
    local c="$BATS_TEST_TMPDIR/out/01-demo/fix-count/counter.c"
    sed -i 's/i < n; i++/i <= n; i++/' "$c"
    run "$GEN" "$FIXTURE" "$BATS_TEST_TMPDIR/out"
    assert_failure
    assert_output --partial "01-demo/fix-count/counter.c"
    grep -q 'i <= n; i++' "$c"
    # regenerating that one exercise (make reset does) puts it back, checksums included
    run "$GEN" "$FIXTURE" "$BATS_TEST_TMPDIR/out" 01-demo/fix-count
    assert_success
    (cd "$BATS_TEST_TMPDIR/out" && sha256sum --quiet -c .checksums) || fail ".checksums is stale after one exercise was regenerated"
    run "$GEN" "$FIXTURE" "$BATS_TEST_TMPDIR/out"
    assert_success
}

# is_program EX: is solutions/EX the capstone's program (kind: program), which
# its stages test, rather than an exercise?
is_program() {
    grep -q '^kind:[ \t]*program[ \t]*$' "$TOP/solutions/$1/exercise.txt" 2>/dev/null
}

@test "every exercise has a task, at least three graded hints, and a test file" {
    local ex ch name bad=()
    for ex in $(cd "$TOP/solutions" && ls -d [0-9][0-9]-*/*/); do
        ex="${ex%/}" ch="${ex%%/*}" name="${ex#*/}"
        if is_program "$ex"; then
            [ -s "$TOP/solutions/$ex/README.md" ] || bad+=("$ex: no README.md")
            continue
        fi
        [ -s "$TOP/solutions/$ex/README.md" ] || bad+=("$ex: no README.md")
        local hints
        hints=$(grep -c '^## Hint [0-9]' "$TOP/solutions/$ex/hints.md" 2>/dev/null || true)
        [ "${hints:-0}" -ge 3 ] ||
            bad+=("$ex: hints.md needs '## Hint 1', '## Hint 2', ...")
        [ -f "$TOP/tests/$ch/$name.bats" ] || bad+=("$ex: no tests/$ch/$name.bats")
        grep -q '^@test' "$TOP/tests/$ch/$name.bats" 2>/dev/null || bad+=("$ex: no @test in its test file")
    done
    [ ${#bad[@]} -eq 0 ] || fail "$(printf '%s\n' "${bad[@]}")"
}

# The solutions pass their tests: make test runs every tests/NN-*/<exercise>.bats
# with IMPL=solutions. This test proves the untouched exercises fail, and why.
@test "every untouched exercise fails for the right reason: write at a TODO (exit 99), fix in the test it names; never a crash or a hang" {
    run "$GEN" "$TOP/solutions" "$BATS_TEST_TMPDIR/fresh"
    assert_success
    local ex ch name problems=() checked=0
    for ex in $(cd "$TOP/solutions" && ls -d [0-9][0-9]-*/*/); do
        ex="${ex%/}" ch="${ex%%/*}" name="${ex#*/}"
        is_program "$ex" && continue
        # a stage of the capstone: its tests run the program every stage grows
        local prog
        prog=$(sed -n 's/^program:[ \t]*//p' "$TOP/solutions/$ex/exercise.txt")
        prog="$ch/${prog:-$name}"
        if ! diff -rq "$BATS_TEST_TMPDIR/fresh/$ex" "$TOP/exercises/$ex" >/dev/null 2>&1 ||
            ! diff -rq "$BATS_TEST_TMPDIR/fresh/$prog" "$TOP/exercises/$prog" >/dev/null 2>&1; then
            echo "# $ex: your copy has changes; 'make ex EX=$ex' tests it" >&3
            continue
        fi
        [ -d "$BUILD/exercises/$prog" ] || fail "exercises/$prog is not built: run make"
        local todo_log="$BATS_TEST_TMPDIR/$ch-$name.todo" exit_log="$BATS_TEST_TMPDIR/$ch-$name.exit"
        local start=$SECONDS
        COURSE_TODO_LOG="$todo_log" COURSE_EXIT_LOG="$exit_log" IMPL=exercises \
            run timeout 600 bats --tap "$TOP/tests/$ch/$name.bats"
        local took=$((SECONDS - start))
        checked=$((checked + 1))
        local kind fails
        kind=$(sed -n 's/^kind:[ \t]*//p' "$TOP/solutions/$ex/exercise.txt")
        fails=$(sed -n 's/^fails:[ \t]*//p' "$TOP/solutions/$ex/exercise.txt")
        if [ "$kind" = fix ]; then
            # a fix exercise runs, and fails the test its exercise.txt names
            if [ "$status" -eq 0 ] && ! grep -E '^ok [0-9]+ ' <<<"$output" | grep -vq '# skip'; then
                echo "# $ex: its tests all skip here: $(grep -m1 -o '# skip.*' <<<"$output")" >&3
            elif [ "$status" -eq 0 ]; then
                problems+=("$ex: its tests PASS with the bug planted: they prove nothing")
            elif [ -z "$fails" ]; then
                problems+=("$ex: a fix exercise needs 'fails: WORDS' in exercise.txt (a part of the failing test's name)")
            elif ! grep -E '^not ok [0-9]+ ' <<<"$output" | grep -qF -- "$fails"; then
                problems+=("$ex: expected a failing test named with '$fails'; failed instead:
$(grep -E '^not ok' <<<"$output" | head -n 5)")
            fi
            [ ! -s "$todo_log" ] || problems+=("$ex: a fix exercise reached a TODO: $(head -n 1 "$todo_log")")
            [ ! -s "$exit_log" ] || problems+=("$ex: a program crashed: $(cat "$exit_log")")
            [ "$status" -ne 124 ] || problems+=("$ex: the tests hung (killed after 600 s)")
            [ "$took" -lt 180 ] || problems+=("$ex: took ${took}s to fail: something waits for a timeout")
            echo "# $ex: fails $(grep -E -m1 '^not ok' <<<"$output" | cut -c1-100) (${took}s)" >&3
            continue
        fi
        if [ "$status" -eq 0 ] && ! grep -E '^ok [0-9]+ ' <<<"$output" | grep -vq '# skip'; then
            # every test skipped (no Wine, no io_uring here): nothing ran, nothing to judge
            echo "# $ex: its tests all skip here: $(grep -m1 -o '# skip.*' <<<"$output")" >&3
            continue
        elif [ "$status" -eq 0 ]; then
            problems+=("$ex: its tests PASS on the untouched exercise: they prove nothing")
        elif [ ! -s "$todo_log" ]; then
            problems+=("$ex: its tests fail but no program reached TODO (wrong reason):
$(grep -A5 '^not ok' <<<"$output" | head -n 20)")
        fi
        [ ! -s "$exit_log" ] || problems+=("$ex: a program crashed: $(cat "$exit_log")")
        [ "$status" -ne 124 ] || problems+=("$ex: the tests hung (killed after 600 s)")
        [ "$took" -lt 180 ] || problems+=("$ex: took ${took}s to fail: something waits for a timeout")
        echo "# $ex: fails at $(sort -u "$todo_log" 2>/dev/null | sed 's/^TODO at //' | head -n 1) (${took}s)" >&3
    done
    [ ${#problems[@]} -eq 0 ] || fail "$(printf '%s\n' "${problems[@]}")"
    [ "$checked" -gt 0 ] || skip "every exercise has your changes; nothing untouched to check"
}

# The mutant stock's headers (exercise:, mistake:, killed-by:) and the bar
# each exercise must meet: three wrong answers of different mistakes for a
# write exercise, a fix that hides the symptom and one that fixes the wrong
# thing for a fix exercise, each killed by the exercise's own tests (which
# mutants.bats proves). tests/meta/mutants/OWED lists those not there yet.
@test "every exercise's wrong answers are in the stock, killed by its own tests, of different mistakes" {
    run python3 "$TOP/common/mk/check-answers.py" --mutants "$TOP"
    [ "$status" -eq 0 ] || fail "$output"
}

@test "the stock check refuses a wrong answer killed by another file, an unknown mistake, and a write answer outside the blocks" {
    local t="$BATS_TEST_TMPDIR/top"
    mkdir -p "$t/tests/meta/mutants"
    cp -a "$TOP/solutions" "$TOP/common" "$t/"
    mkdir -p "$t/chapters" && cp -a "$TOP/chapters/04-epoll" "$t/chapters/"
    local f="$t/tests/meta/mutants/x.patch"
    {
        printf 'mutant: test\nkilled-by: tests/04-epoll/chapter.bats\nexercise: 04-epoll/epollout\nmistake: sloppy\n'
        printf -- '--- a/chapters/04-epoll/conn.c\n+++ b/chapters/04-epoll/conn.c\n@@ -1,1 +1,1 @@\n-%s\n+/* x */\n' "$(head -n 1 "$TOP/chapters/04-epoll/conn.c")"
    } >"$f"
    run python3 "$t/common/mk/check-answers.py" --mutants "$t"
    assert_failure
    assert_output --partial "x.patch: a wrong answer of 04-epoll/epollout is killed by its own tests"
    assert_output --partial "x.patch: mistake: 'sloppy' is not one of"
    assert_output --partial "x.patch: a wrong answer of write exercise 04-epoll/epollout changes only lines of its blocks"
    assert_output --partial "04-epoll/epollout (write): 1 wrong answers"
}

@test "every exercise is listed in its chapter's Exercises section" {
    local ex ch bad=()
    for ex in $(cd "$TOP/solutions" && ls -d [0-9][0-9]-*/*/); do
        ex="${ex%/}" ch="${ex%%/*}"
        grep -q "exercises/$ex/README.md" "$TOP/chapters/$ch/README.md" ||
            bad+=("$ex: chapters/$ch/README.md has no link to exercises/$ex/README.md")
    done
    [ ${#bad[@]} -eq 0 ] || fail "$(printf '%s\n' "${bad[@]}")"
}
