#!/usr/bin/env bash
# progress.sh: one line per exercise: done, failing, or not started; then the
# next one to do.
#
# "not started" means your copy is exactly what `make exercises` generates;
# anything else is built and tested (that takes a few seconds per exercise).
set -uo pipefail
. "$(dirname "$0")/exercise-lib.sh"

command -v bats >/dev/null || { echo "bats is not installed: run 'make deps'" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$top/common/mk/gen-exercises.sh" "$top/solutions" "$tmp/fresh" >/dev/null || exit 1
make --no-print-directory -C "$top" common >/dev/null 2>&1

next=""
n_done=0 n_total=0
printf '%-36s %s\n' "exercise" "status"
printf '%-36s %s\n' "--------" "------"
while IFS= read -r ex; do
    n_total=$((n_total + 1))
    if [ ! -d "$top/exercises/$ex" ]; then
        status="missing (run: git checkout exercises/$ex)"
    elif diff -rq -x hints.md "$tmp/fresh/$ex" "$top/exercises/$ex" >/dev/null 2>&1; then
        status="not started"
    else
        exercise_test "$ex" exercises "$tmp/log"
        case $? in
        0) status="done"; n_done=$((n_done + 1)) ;;
        3) status="failing (does not compile)" ;;
        *)
            if grep -q 'TODO at ' "$tmp/log"; then
                status="failing (a TODO is left)"
            else
                status="failing"
            fi
            ;;
        esac
    fi
    printf '%-36s %s\n' "$ex" "$status"
    [ -z "$next" ] && [ "$status" != done ] && next="$ex"
done < <(exercise_list)

echo
echo "$n_done of $n_total done."
if [ -n "$next" ]; then
    echo "next: exercises/$next/README.md, then: make ex EX=$next"
else
    echo "Every exercise is done."
fi
