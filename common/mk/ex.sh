#!/usr/bin/env bash
# ex.sh EX [IMPL]: build and test one exercise (yours by default).
set -uo pipefail
. "$(dirname "$0")/exercise-lib.sh"

ex="${1:-}"
impl="${2:-exercises}"
exercise_check "$ex" ex
case "$impl" in
exercises | solutions) ;;
*) echo "IMPL must be exercises or solutions, not '$impl'" >&2; exit 2 ;;
esac
command -v bats >/dev/null || { echo "bats is not installed: run 'make deps'" >&2; exit 1; }

ch="${ex%%/*}" name="${ex#*/}"
echo "== building $impl/$ex"
make --no-print-directory -C "$top" common >/dev/null || exit 1
if ! make --no-print-directory -C "$top/$impl/$ex"; then
    echo
    echo "$impl/$ex does not compile: fix the errors above, then run make ex EX=$ex again."
    exit 1
fi
echo "== testing $impl/$ex (tests/$ch/$name.bats)"
todo_log="$(mktemp)"
trap 'rm -f "$todo_log"' EXIT
COURSE_TODO_LOG="$todo_log" IMPL="$impl" bats "$top/tests/$ch/$name.bats"
status=$?
# An echo server's exercise also faces the shared echo suite (generated from
# tests/suite/servers.txt into tests/$ch/suite-$name.bats): once its own
# tests pass, so that a stop at TODO is reported once, not by every case.
suite="$top/tests/$ch/suite-$name.bats"
if [ "$status" -eq 0 ] && [ -f "$suite" ]; then
    echo
    echo "== the shared echo suite against $impl/$ex (tests/$ch/suite-$name.bats)"
    COURSE_TODO_LOG="$todo_log" IMPL="$impl" bats "$suite"
    status=$?
fi
echo
if [ "$status" -eq 0 ]; then
    echo "$ex: all tests pass. Well done."
    [ "$impl" = exercises ] && echo "See where you are with: make progress"
elif [ -s "$todo_log" ]; then
    echo "$ex: not finished: the program stopped at a TODO you still have to write:"
    sort -u "$todo_log" | sed 's/^/  /'
    echo "Stuck? make hint EX=$ex"
else
    echo "$ex: some tests fail (see above). Stuck? make hint EX=$ex"
fi
exit "$status"
