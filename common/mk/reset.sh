#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# reset.sh EX: put one exercise back as shipped, keeping your copy.
#
# exercises/NN-slug/NAME/ becomes a fresh generation of that exercise (what
# make exercises writes for it); for a stage of the capstone, so does the
# program every stage grows (exercises/15-mini-redis/my-redis/). Your copy, if it differs, moves to
# .progress/reset/NN-slug/NAME.N/ (N = 1, 2, ...: every reset keeps one more).
# It is kept there and not beside the exercise because exercises/ belongs to
# the generator: make exercises rebuilds the folder from scratch (a NAME.N
# there would vanish with it), the drift test would report it, and the
# Makefile would build it as one more exercise. .progress/ is git-ignored.
# The exercise's hints start again from hint 1, and make progress forgets
# its last test outcome.
set -uo pipefail
. "$(dirname "$0")/exercise-lib.sh"

ex="$(exercise_resolve "${1:-}" reset)" || exit 2
# A stage of the capstone has no code of its own: resetting it puts back the
# program every stage grows (exercise_program), and the stage's folder.
prog="$(exercise_program "$ex")"
folders=("$prog")
[ "$prog" = "$ex" ] || folders+=("$ex")

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if ! exercise_fresh "$tmp/fresh" "${folders[@]}" 2>"$tmp/gen.err" || [ ! -d "$tmp/fresh/$ex" ]; then
    echo "make reset: could not generate $ex; nothing was changed:" >&2
    sed 's/^/  /' "$tmp/gen.err" >&2
    exit 1
fi

kept_all=()
for f in "${folders[@]}"; do
    mine="$top/exercises/$f"
    kept=""
    if [ -d "$mine" ] && exercise_untouched "$tmp/fresh/$f" "$mine"; then
        echo "make reset: exercises/$f/ is already as shipped; there is nothing of yours to keep."
        continue
    fi
    if [ -d "$mine" ]; then
        n=1
        while [ -e "$progress_dir/reset/$f.$n" ]; do n=$((n + 1)); done
        kept="$progress_dir/reset/$f.$n"
        mkdir -p "$(dirname "$kept")" && mv "$mine" "$kept" || {
            echo "make reset: could not move exercises/$f/ to ${kept#"$top"/}/; nothing was changed." >&2
            exit 1
        }
    fi
    mkdir -p "$(dirname "$mine")"
    if ! cp -R "$tmp/fresh/$f" "$mine"; then
        rm -rf "$mine"
        [ -n "$kept" ] && mv "$kept" "$mine"
        echo "make reset: could not write exercises/$f/; your copy is back where it was." >&2
        exit 1
    fi
    if [ "$f" = "$ex" ]; then
        echo "make reset: exercises/$f/ is back as shipped."
    else
        echo "make reset: exercises/$f/, the program every stage of ${ex%%/*} tests, is back as shipped."
    fi
    [ -n "$kept" ] && kept_all+=("$f" "$kept")
done

rm -f "$progress_dir/hints/${ex//\//__}"
exercise_remember "$ex" "" ""
echo "Its hints start again from hint 1 (make hint EX=$ex)."
for ((i = 0; i < ${#kept_all[@]}; i += 2)); do
    f="${kept_all[i]}" k="${kept_all[i + 1]#"$top"/}"
    echo
    echo "Your copy is kept in $k/"
    echo "  what you had changed:  diff -ru exercises/$f $k"
    echo "  to take it back:       rm -rf exercises/$f && mv $k exercises/$f"
done
[ ${#kept_all[@]} -eq 0 ] || echo "An editor with its files open still holds your version: reload them before you save."
