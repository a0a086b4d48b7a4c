#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ex.sh EX [IMPL]: build and test one exercise (yours by default), ending
# with a one-line verdict.
#
# EX is NN-slug/NAME, or anything exercise_resolve (exercise-lib.sh) accepts;
# a wrong one exits 2 with the closest names. IMPL=solutions runs the same
# tests against the reference. A run of your copy is remembered in
# .progress/results/ with a fingerprint of its files, so that make progress
# need not test it again until something changes. watch.sh runs this.
set -uo pipefail
. "$(dirname "$0")/exercise-lib.sh"

impl="${2:-exercises}"
ex="$(exercise_resolve "${1:-}" ex)" || exit 2
case "$impl" in
exercises | solutions) ;;
*) echo "IMPL must be exercises or solutions, not '$impl'" >&2; exit 2 ;;
esac
command -v bats >/dev/null || { echo "bats is not installed: run 'make deps'" >&2; exit 1; }

ch="${ex%%/*}" name="${ex#*/}"
if [ ! -d "$top/$impl/$ex" ]; then
    echo "$ex: does not compile: $impl/$ex/ is missing$([ "$impl" = exercises ] && echo " (make reset EX=$ex brings it back)")."
    exit 1
fi
prog="$(exercise_program "$ex")"
if [ "$impl" = exercises ] && [ ! -d "$top/exercises/$prog" ]; then
    echo "$ex: does not compile: exercises/$prog/, the program its tests run, is missing (make reset EX=$ex brings it back)."
    exit 1
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# Ctrl-C (make watch stops so): no verdict, nothing remembered
trap 'exit 130' INT
fp=""
[ "$impl" = exercises ] && fp="$(exercise_fingerprint "$ex")"
remember() { # remember WORD [DETAIL]: keep the outcome of this run of your copy
    [ "$impl" = exercises ] || return 0
    # a save during the run: the outcome belongs to neither version
    [ "$fp" = "$(exercise_fingerprint "$ex")" ] || { exercise_remember "$ex" "" ""; return 0; }
    exercise_remember "$ex" "$1" "$fp" "${2:-}"
}

echo "== building $impl/$ex"
if ! make --no-print-directory -C "$top" common >/dev/null; then
    echo
    echo "$ex: does not compile: common/, the course's shared code, does not build (see above)."
    exit 1
fi
make --no-print-directory -C "$top/$impl/$ex" 2>&1 | tee "$tmp/build.log"
if [ "${PIPESTATUS[0]}" -ne 0 ]; then
    echo
    needs="$(exercise_needs "$tmp/build.log")"
    if [ -n "$needs" ]; then
        remember needs "$needs"
        echo "$ex: does not compile: it needs $needs, which no change of yours provides."
    else
        remember compile
        echo "$ex: does not compile: fix the errors above, then run make ex EX=$ex again."
    fi
    exit 1
fi
# The tests of one file run 4 at a time, and the run stops at the first
# failure (exercise_bats in exercise-lib.sh): a wrong answer's verdict comes
# in seconds, and the failure it shows is the first one, whole.
export TMPDIR="$tmp"
echo "== testing $impl/$ex (tests/$ch/$name.bats)"
todo_log="$tmp/todo.log"
mkdir -p "$tmp/own" "$tmp/suite"
COURSE_TODO_LOG="$todo_log" IMPL="$impl" exercise_bats "$tmp/own/report.tap" "$top/tests/$ch/$name.bats" show
status=$?
# An echo server's exercise also faces the shared echo suite (listed in
# common/servers.txt into tests/$ch/suite-$name.bats): once its own
# tests pass, so that a stop at TODO is reported once, not by every case.
suite="$top/tests/$ch/suite-$name.bats"
if [ "$status" -eq 0 ] && [ -f "$suite" ]; then
    echo
    echo "== the shared echo suite against $impl/$ex (tests/$ch/suite-$name.bats)"
    COURSE_TODO_LOG="$todo_log" IMPL="$impl" exercise_bats "$tmp/suite/report.tap" "$suite" show
    status=$?
fi
cat "$tmp"/own/report.tap "$tmp"/suite/report.tap >"$tmp/all.tap" 2>/dev/null
echo
if [ "$status" -eq 0 ] && exercise_all_skipped "$tmp/all.tap"; then
    # nothing ran: not a pass, and not remembered (installing what is
    # missing changes it)
    echo "$ex: every test skipped here ($(grep -m1 -o '# skip.*' "$tmp/all.tap" | sed 's/^# skip *//')): nothing was tested."
    exit 1
elif [ "$status" -eq 0 ]; then
    remember "done"
    echo "$ex: all tests pass. Well done."
    [ "$impl" = exercises ] && echo "See where you are with: make progress"
elif [ -s "$todo_log" ]; then
    remember todo
    echo "$ex: not finished: the program stopped at a TODO you still have to write:"
    sort -u "$todo_log" | sed 's/^/  /'
    echo "Stuck? make hint EX=$ex"
else
    detail="$(exercise_tap_detail "$tmp/all.tap")"
    remember failing "$detail"
    echo "$ex: some tests fail${detail:+ ($detail)}: see above. Stuck? make hint EX=$ex"
fi
exit "$status"
