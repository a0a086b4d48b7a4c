#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# hint.sh EX: print the next graded hint of an exercise, and remember it.
#
# Hints are the "## Hint N" sections of the exercise's hints.md. Which ones
# you have seen is kept in .progress/hints/ (not part of the repository), so
# each `make hint` shows the next one.
# HINT=n shows hint n; RESET=1 starts over (so does make reset EX=...).
# A wrong EX exits 2 with the closest names (exercise-lib.sh).
set -uo pipefail
. "$(dirname "$0")/exercise-lib.sh"

ex="$(exercise_resolve "${1:-}" hint)" || exit 2
hints="$top/exercises/$ex/hints.md"
[ -f "$hints" ] || hints="$top/solutions/$ex/hints.md"
state_dir="$top/.progress/hints"
state="$state_dir/${ex//\//__}"
mkdir -p "$state_dir"

total=$(grep -c '^## Hint ' "$hints")
seen=0
[ -f "$state" ] && seen=$(cat "$state")
[ "${RESET:-0}" = 1 ] && seen=0

if [ -n "${HINT:-}" ]; then
    want="$HINT"
    case "$want" in '' | *[!0-9]*) echo "HINT must be a number from 1 to $total" >&2; exit 2 ;; esac
    if [ "$want" -lt 1 ] || [ "$want" -gt "$total" ]; then
        echo "HINT must be a number from 1 to $total" >&2
        exit 2
    fi
else
    want=$((seen + 1))
    if [ "$want" -gt "$total" ]; then
        want=$total
        last=1
    fi
fi

show() { # print section "## Hint $1"
    awk -v n="$1" '
        /^## Hint / { inside = ($3 == n) }
        inside' "$hints"
}

echo "$ex: hint $want of $total"
echo
show "$want"
[ "$want" -gt "$seen" ] && echo "$want" >"$state"
echo
if [ "${last:-0}" = 1 ]; then
    echo "That was the last hint. Once your copy passes, make solution EX=$ex shows the reference."
elif [ "$want" -lt "$total" ]; then
    echo "Run make hint EX=$ex again for hint $((want + 1))."
fi
