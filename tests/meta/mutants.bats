# test-long: every mutant reruns the tests that should kill it (33 min for 293 mutants on a 2-core machine, two at a time, after one build of the whole course, with other work beside it)
# test-serial: it runs its mutants in parallel itself
# Mutants: each patch in mutants/ plants a classic bug (a lost short write,
# EINTR treated as an error, a busy loop...) in a scratch copy of the course.
# The tests named on its "killed-by:" line must then fail; a mutant that
# survives means those tests would not notice the bug in a learner's code.
#
# Patch format: line 1 "mutant: what the bug is", line 2 "killed-by: FILE..."
# (test files, relative to the repository), then a unified diff (patch -p1).
#
# MUTANT=NAME[,NAME...] runs only those mutants:
#   MUTANT=no-backpressure bats tests/meta/mutants.bats
load ../helpers/common
# exercise_bats and exercise_kill_marked, as make ex has them
. "$BATS_TEST_DIRNAME/../../common/mk/exercise-lib.sh"

# Every mutant runs inside the one test below: it needs more than the
# runner's limit per test.
BATS_TEST_TIMEOUT=3600

# Mutants are about the tests, not the build: the normal build is enough, and
# a sanitizer run would only repeat them more slowly.
setup() {
    [ -z "${SAN:-}" ] || skip "mutants run in the normal build only (SAN=$SAN here)"
}

setup_file() {
    [ -z "${SAN:-}" ] || return 0
    BASE="$BATS_FILE_TMPDIR/base"
    mkdir -p "$BASE"
    tar -C "$TOP" --exclude=./build --exclude=./.progress --exclude=./.git -cf - . |
        tar -C "$BASE" -xf -
    # Built once here, so that each mutant's copy rebuilds only what its
    # patch touched (the copies keep the files' times: only a patched source
    # is newer than its object).
    # With MUTANT= (a few mutants, while writing one) only common/ is built
    # here: each mutant's copy builds the folders its patch and its tests
    # need, which takes seconds, not the whole course's minutes.
    local target=all
    [ -z "${MUTANT:-}" ] || target=common
    env -u BUILD -u SAN -u WERROR -u MAKEFLAGS -u MAKELEVEL timeout 1200 make -s -C "$BASE" "$target" QUIET_WHERE=1 \
        >"$BATS_FILE_TMPDIR/base-build.log" 2>&1 ||
        { cat "$BATS_FILE_TMPDIR/base-build.log" >&2; return 1; }
    export BASE
    # Wine's tests in a copy make a prefix of 700 MB in 10 to 30 s; the
    # copies link theirs to one made once (tests/helpers/wine.bash)
    export WINE_PREFIX_TEMPLATE="$BATS_FILE_TMPDIR/wine-template"
}

# run_until_first_failure LOG CMD...: run CMD (a bats run in TAP form) with
# its output in LOG, and stop it at the first "not ok": one failing test
# kills the mutant, the rest of the file need not run. Fails if CMD failed
# or was stopped. A stopped run does not reach its teardown, so its process
# group is stopped here (SIGTERM, then SIGKILL for what a mutated server
# ignores); what left the group is the caller's (kill_mutant_run).
run_until_first_failure() {
    local log="$1" pid
    shift
    : >"$log" # there before the first grep below, however late the run starts
    setsid "$@" >"$log" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        if grep -q '^not ok' "$log"; then
            kill -TERM -- -"$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
            # A mutated server may not exit on SIGTERM (that can be its bug):
            # whatever of the group is still there is killed outright.
            kill -KILL -- -"$pid" 2>/dev/null
            return 1
        fi
        sleep 0.2
    done
    wait "$pid"
}

# kill_mutant_run DIR: kill whatever the tests of the mutant in DIR left
# running, in their process group or out of it (GNU timeout makes a group of
# its own, a wineserver detaches): each carries MUTANT_RUN=DIR.
kill_mutant_run() {
    exercise_kill_marked "MUTANT_RUN=$1"
}

# One mutant: copy, patch, build the folders the patch touches, run its tests.
# Prints "killed" or "SURVIVED", with what killed it.
run_mutant() {
    local patch="$1" name scratch tests dirs d
    name="$(basename "$patch" .patch)"
    scratch="$BATS_TEST_TMPDIR/$name"
    cp -a "$BASE" "$scratch"
    patch -s -p1 -d "$scratch" <"$patch" || { echo "$name: the patch does not apply"; return 1; }
    tests="$(sed -n '2s/^killed-by: //p' "$patch")"
    [ -n "$tests" ] || { echo "$name: no killed-by: line"; return 1; }
    # build the patched folders (and common/, which the tests' tools need):
    # for a file in a subfolder (rt/timer.c), the nearest folder with a
    # Makefile. A mutant must build: one the compiler refuses proves nothing
    # about the tests, so it is reported as broken, not as killed. WERROR is
    # left out: a planted bug may well leave a variable unused.
    dirs="common"
    for d in $(sed -n 's|^+++ b/\(.*\)/[^/]*$|\1|p' "$patch"); do
        while [ "$d" != . ] && [ ! -f "$scratch/$d/Makefile" ]; do d="$(dirname "$d")"; done
        case "$d" in . | common*) ;; *) dirs="$dirs $d" ;; esac
    done
    # an exercise's tests run its reference, built in solutions/ from the
    # chapter's files (tests/NN/NAME.bats and suite-NAME.bats: solutions/NN/NAME)
    for t in $tests; do
        d="solutions/$(basename "$(dirname "$t")")/$(basename "$t" .bats)"
        d="${d/\/suite-//}" d="${d%.faults}"
        [ -f "$scratch/$d/Makefile" ] && dirs="$dirs $d"
    done
    # A patched header: its dependents' recorded dependencies name the base
    # copy's header, not this one, so the folders are built afresh.
    if grep -q '^+++ b/.*\.h$' "$patch"; then
        for d in $dirs $(for t in $tests; do echo "chapters/$(basename "$(dirname "$t")")"; done); do
            [ "$d" = common ] || rm -rf "${scratch:?}/build/$d"
        done
    fi
    for d in $dirs; do
        env -u BUILD -u SAN -u WERROR -u MAKEFLAGS -u MAKELEVEL make -s -C "$scratch/$d" QUIET_WHERE=1 >"$scratch/build.log" 2>&1 ||
            { echo "$name: BROKEN: it does not build (make -C $d): $(grep -m3 'error' "$scratch/build.log")"; return 1; }
    done
    # and every chapter the tests belong to, so their programs are the mutant's
    for d in $tests; do
        d="$(basename "$(dirname "$d")")"
        [ -d "$scratch/chapters/$d" ] && env -u BUILD -u SAN -u WERROR -u MAKEFLAGS -u MAKELEVEL make -s -C "$scratch/chapters/$d" QUIET_WHERE=1 >>"$scratch/build.log" 2>&1
    done
    local t ex t0 took st
    # An exercise's wrong answer gets its verdict as make ex gives it (its
    # own tests, 4 at a time, stopped at the first failure; then the echo
    # suite), and the time that took is reported: the learner waits for it.
    ex="$(sed -n '1,8s/^exercise: *//p' "$patch")"
    t0=$(date +%s%N)
    for t in $tests; do
        if [ -n "$ex" ]; then
            st=0
            BUILD="$scratch/build" IMPL=solutions TMPDIR="$scratch" MUTANT_RUN="$scratch" timeout 600 \
                bash -c '. "$1/common/mk/exercise-lib.sh" && exercise_bats "$2" "$3"' _ \
                "$scratch" "$scratch/tests.log" "$scratch/$t" || st=$?
            kill_mutant_run "$scratch"
            # a verdict is a failing test, not a runner that could not start
            if [ "$st" -ne 0 ] && ! grep -q '^not ok' "$scratch/tests.log" 2>/dev/null; then
                echo "$name: BROKEN: no test of $t ran to a verdict (status $st): $(tail -n 3 "$scratch/tests.log" 2>/dev/null)"
                return 1
            fi
        else
            st=0
            run_until_first_failure "$scratch/tests.log" \
                env BUILD="$scratch/build" IMPL=solutions MUTANT_RUN="$scratch" timeout 600 bats --tap "$scratch/$t" || st=$?
            kill_mutant_run "$scratch"
        fi
        if [ "$st" -ne 0 ]; then
            local which
            which="$(grep -m1 '^not ok' "$scratch/tests.log" | sed 's/^not ok [0-9]* //')"
            # a program the tests need was not built: that proves nothing
            if grep -q '^# missing .*: build it first' "$scratch/tests.log"; then
                echo "$name: BROKEN: $t needs a program the runner did not build: $(grep -m1 '^# missing' "$scratch/tests.log")"
                return 1
            fi
            took=$((($(date +%s%N) - t0) / 1000000))
            echo "$name: killed by $t: ${which:-the test file failed: $(tail -n 3 "$scratch/tests.log")}${ex:+ (verdict in $((took / 1000)).$((took % 1000 / 100)) s)}"
            [ -z "$ex" ] || echo "$ex $took" >"$scratch/verdict"
            return 0
        fi
    done
    echo "$name: SURVIVED $tests"
    return 1
}

# live_count PID...: how many of these processes are still running.
live_count() {
    local p n=0
    for p in "$@"; do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done
    echo "$n"
}

# verdict_report RESULTS: the time make ex took to reject each exercise's
# wrong answers, as a median per chapter and over the whole stock (also in
# VERDICT_MEDIAN_MS; empty when no exercise's wrong answer ran). A report,
# not a check: it is measured with JOBS mutants at once, each building its
# own copy, and says more about the machine's load than about the tests.
verdict_report() {
    local all
    VERDICT_MEDIAN_MS=""
    all="$(cat "$1"/*.verdict 2>/dev/null || true)"
    [ -n "$all" ] || return 0
    awk '
        function median(list, n,    a, i, j, t) {
            split(list, a, " ")
            for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            return n % 2 ? a[(n + 1) / 2] : int((a[n / 2] + a[n / 2 + 1]) / 2)
        }
        { ch = $1; sub(/\/.*/, "", ch); l[ch] = l[ch] " " $2; c[ch]++; every = every " " $2; n++ }
        END {
            for (ch in c) printf "# verdict on a wrong answer, %s: median %.1f s over %d\n", ch, median(l[ch], c[ch]) / 1000, c[ch] | "sort"
            close("sort")
            printf "# verdict on a wrong answer, every exercise: median %.1f s over %d\n", median(every, n) / 1000, n
        }' <<<"$all" >&3
    VERDICT_MEDIAN_MS=$(awk '{ print $2 }' <<<"$all" | sort -n | awk '{ a[NR] = $1 } END { print NR % 2 ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2) }')
}

# Mutants run JOBS at a time (one per CPU by default): each has its own
# scratch copy, build and Wine prefix. Their results are printed in order.
@test "every mutant in tests/meta/mutants/ is caught by the tests it names" {
    local p name s secs survivors=0 n=0 jobs="${JOBS:-$(nproc 2>/dev/null || echo 1)}" res="$BATS_TEST_TMPDIR/results" names=() pids=()
    mkdir -p "$res"
    for p in "$BATS_TEST_DIRNAME"/mutants/*.patch; do
        [ -f "$p" ] || continue
        name="$(basename "$p" .patch)"
        # MUTANT=NAME[,NAME...]: only those (after moving a test that kills them)
        [ -z "${MUTANT:-}" ] || [[ ",$MUTANT," == *",$name,"* ]] || continue
        names+=("$name")
        # (not `wait -n`: bats' watchdog for this test is a job of this shell too)
        while [ "$(live_count "${pids[@]}")" -ge "$jobs" ]; do sleep 0.5; done
        (
            t0=$SECONDS
            if run_mutant "$p" >"$res/$name.out" 2>&1; then
                s=killed
            elif grep -q ': SURVIVED ' "$res/$name.out"; then
                # once more, from a fresh copy: a test that catches the bug
                # only some of the time is named as such, and still fails
                # the run if the second time misses it too
                rm -rf "${BATS_TEST_TMPDIR:?}/$name"
                if run_mutant "$p" >"$res/$name.again" 2>&1; then
                    s=killed
                    sed 's/$/ (on the second run: the first missed it; a test to make surer)/' "$res/$name.again" >"$res/$name.out"
                else
                    s=survived
                    cat "$res/$name.again" >>"$res/$name.out"
                fi
            else
                s=survived
            fi
            echo "$s $((SECONDS - t0))" >"$res/$name.status"
            # a copy of the course and its build, each: hundreds of them
            # would fill a disk
            mv "$BATS_TEST_TMPDIR/$name/verdict" "$res/$name.verdict" 2>/dev/null
            rm -rf "${BATS_TEST_TMPDIR:?}/$name"
        ) 3>&- &
        pids+=($!)
    done
    [ ${#pids[@]} -eq 0 ] || wait "${pids[@]}" || true
    n=${#names[@]}
    [ "$n" -gt 0 ] || skip "no mutants${MUTANT:+ named $MUTANT}"
    for name in "${names[@]}"; do
        read -r s secs <"$res/$name.status" || { s=survived secs=?; echo "$name: the runner left no result" >"$res/$name.out"; }
        sed "s/^/# /; \$s/\$/ ($secs s)/" "$res/$name.out" >&3
        if [ "$s" != killed ]; then
            cat "$res/$name.out" >&2
            survivors=$((survivors + 1))
        fi
    done
    verdict_report "$res"
    [ "$survivors" -eq 0 ] || fail "$survivors of $n mutants survived (see above)"
}

@test "the mutant runner reports a mutant that no test catches" {
    run run_mutant "$BATS_TEST_DIRNAME/fixtures/harmless.patch.txt"
    assert_failure
    assert_output --partial "SURVIVED"
}

@test "a mutant the compiler refuses is reported as broken, not counted as killed" {
    run run_mutant "$BATS_TEST_DIRNAME/fixtures/broken.patch.txt"
    assert_failure
    assert_output --partial "BROKEN: it does not build (make -C solutions/00-latency/chase)"
}
