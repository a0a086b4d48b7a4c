#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# solution.sh EX: show the reference for an exercise, once your copy passes.
#
# It runs the exercise's tests against your copy first (as make ex does, but
# quietly; not when a pass of the same files is on record) and refuses,
# saying why, with exit status 1, unless they pass; FORCE=1 skips that.
# What it shows depends on the kind (exercise.txt):
#   write    the reference code of every block that was cut out for you,
#            where it comes from (solutions/EX/ or the chapter's file), and
#            the task it replaced;
#   fix      the diff from your copy as shipped (with the bug) to the
#            chapter's file (without it);
#   predict  its blocks as for write, or without blocks the files of
#            solutions/EX/ besides its Makefile and texts;
#   stage    (the capstone) the reference is the chapter's whole server:
#            where it does what the stage asks (its see: files), and how
#            large each is.
set -uo pipefail
. "$(dirname "$0")/exercise-lib.sh"

ex="$(exercise_resolve "${1:-}" solution)" || exit 2
ch="${ex%%/*}" name="${ex#*/}"
kind="$(exercise_meta "$ex" kind)"
kind="${kind:-write}"
from="$(exercise_meta "$ex" from)"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if [ "${FORCE:-0}" = 1 ]; then
    echo "make solution: FORCE=1: the reference of $ex, without testing your copy."
else
    command -v bats >/dev/null || { echo "bats is not installed: run 'make deps'" >&2; exit 1; }
    echo "make solution: testing your copy first (make ex EX=$ex shows the details)..."
    fp="$(exercise_fingerprint "$ex")"
    why=""
    if [ ! -d "$top/exercises/$ex" ] || [ ! -d "$top/exercises/$(exercise_program "$ex")" ]; then
        why="exercises/$(exercise_program "$ex")/ is missing (make reset EX=$ex brings it back)"
    elif ! exercise_common_built; then
        why="common/ does not build (make common says why)"
    elif [ "$(exercise_recalled "$ex" "$fp")" = "done" ]; then
        # a pass of these very files is on record (make ex, make progress):
        # running every test again would prove nothing new
        :
    else
        exercise_test "$ex" exercises "$tmp/log"
        case $? in
        0) exercise_remember "$ex" "done" "$fp" ;;
        3)
            exercise_remember "$ex" compile "$fp"
            why="it does not compile"
            ;;
        4) why="every test skipped here ($(tail -n 1 "$tmp/log")), so nothing shows it works" ;;
        *)
            if grep -q 'TODO at ' "$tmp/log"; then
                exercise_remember "$ex" todo "$fp"
                why="a program stopped at a TODO: $(grep -m1 -o 'TODO at .*' "$tmp/log" | sed "s|$top/||")"
            else
                why="$(exercise_tap_detail "$tmp/log")"
                exercise_remember "$ex" failing "$fp" "$why"
                why="some tests fail${why:+ ($why)}"
            fi
            ;;
        esac
    fi
    if [ -n "$why" ]; then
        echo "make solution: not yet: your copy of $ex does not pass: $why." >&2
        echo "The reference stays hidden until it does: make ex EX=$ex shows what fails, make hint EX=$ex helps." >&2
        echo "To see it anyway: make solution EX=$ex FORCE=1" >&2
        exit 1
    fi
    echo "make solution: your copy passes. The reference of $ex:"
fi

# blocks FILE LABEL UNNAMED: the reference code of NAME's blocks in FILE
# (and of the unnamed ones when UNNAMED is 1), each under a heading.
blocks() {
    awk -v name="$name" -v unnamed="$3" -v label="$2" -v ex="$ex" -v rel="$4" '
        /\/\* EXERCISE BEGIN[^:]*: .*\*\// {
            head = $0
            sub(/^.*\/\* EXERCISE BEGIN */, "", head)
            who = head; sub(/:.*$/, "", who)
            task = head; sub(/^[^:]*: */, "", task); sub(/ *\*\/[ \t]*$/, "", task)
            if (who == name || (who == "" && unnamed)) {
                inside = 1
                printf "\n== TODO(\"%s\")\n   in exercises/%s/%s; the reference, %s line %d:\n\n", task, ex, rel, label, FNR + 1
            }
            next
        }
        /\/\* EXERCISE END \*\// { inside = 0; next }
        /^[ \t]*\/\* (snippet: [a-z0-9-]+|end snippet) \*\/[ \t]*$/ { next }
        inside { print }' "$1"
}

shown=0 sources=()
# a predict exercise with blocks (the learner's figures) shows them like a
# write exercise; one without, its files
from_paths=()
for f in $from; do from_paths+=("$top/$f"); done
if [ "$kind" = predict ] && grep -rqs 'EXERCISE BEGIN' "$top/solutions/$ex" "${from_paths[@]}"; then
    kind="write"
fi
case "$kind" in
stage)
    echo
    echo "The reference for every stage of the capstone is chapter ${ch%%-*}'s server, chapters/$ch/"
    echo "(its README explains each part). What this stage asked of yours, it does in:"
    for f in $(exercise_meta "$ex" see); do
        [ -f "$top/$f" ] || continue
        printf '  %-40s %5d lines\n' "$f" "$(wc -l <"$top/$f")"
        shown=1 sources+=("$f")
    done
    ;;
write)
    while IFS= read -r f; do
        case "$f" in *.c | *.h) ;; *) continue ;; esac
        out="$(blocks "$top/solutions/$ex/$f" "solutions/$ex/$f" 1 "$f")"
        [ -n "$out" ] && { printf '%s\n' "$out"; shown=1; sources+=("solutions/$ex/$f"); }
    done < <(exercise_files "$top/solutions/$ex")
    for f in $from; do
        [ -f "$top/$f" ] || continue
        out="$(blocks "$top/$f" "$f" 0 "${f#chapters/"$ch"/}")"
        [ -n "$out" ] && { printf '%s\n' "$out"; shown=1; sources+=("$f"); }
    done
    ;;
fix)
    if exercise_fresh "$tmp/fresh" "$ex" 2>"$tmp/gen.err" && [ -d "$tmp/fresh/$ex" ]; then
        echo
        echo "The bug, and its fix: your copy as shipped (---) against the chapter's program (+++)."
        for f in $from; do
            rel="${f#chapters/"$ch"/}"
            [ -f "$top/$f" ] && [ -f "$tmp/fresh/$ex/$rel" ] || continue
            echo
            # the chapter's file as the generator copies it: without the
            # marker lines of excerpts and of other exercises' blocks
            awk '!/^[ \t]*\/\* (snippet: [a-z0-9-]+|end snippet) \*\/[ \t]*$/ &&
                 !/\/\* EXERCISE BEGIN[^:]*: .*\*\// && !/\/\* EXERCISE END \*\//' "$top/$f" >"$tmp/reference"
            diff -u --label "exercises/$ex/$rel (as shipped)" --label "$f" "$tmp/fresh/$ex/$rel" "$tmp/reference" &&
                continue
            shown=1 sources+=("$f")
        done
    else
        echo "make solution: could not generate $ex as shipped:" >&2
        sed 's/^/  /' "$tmp/gen.err" >&2
        exit 1
    fi
    ;;
*)
    while IFS= read -r f; do
        case "$f" in Makefile | README.md | hints.md | exercise.txt) continue ;; esac
        echo
        echo "== solutions/$ex/$f"
        cat "$top/solutions/$ex/$f"
        shown=1
    done < <(exercise_files "$top/solutions/$ex")
    ;;
esac

if [ "$shown" = 0 ]; then
    echo "make solution: found no reference for $ex (kind $kind) in solutions/$ex/ or its from: files." >&2
    exit 1
fi
echo
[ ${#sources[@]} -gt 0 ] && echo "Where it comes from: ${sources[*]}"
exit 0
