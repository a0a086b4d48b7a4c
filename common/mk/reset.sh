#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# reset.sh EX: put one exercise back as shipped, keeping your copy.
#
# exercises/NN-slug/NAME/ becomes a fresh generation of that exercise (what
# make exercises writes for it). Your copy, if it differs, moves to
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
mine="$top/exercises/$ex"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if ! exercise_fresh "$tmp/fresh" "$ex" 2>"$tmp/gen.err" || [ ! -d "$tmp/fresh/$ex" ]; then
    echo "make reset: could not generate $ex; nothing was changed:" >&2
    sed 's/^/  /' "$tmp/gen.err" >&2
    exit 1
fi

kept=""
if [ -d "$mine" ] && exercise_untouched "$tmp/fresh/$ex" "$mine"; then
    echo "make reset: exercises/$ex/ is already as shipped; there is nothing of yours to keep."
else
    if [ -d "$mine" ]; then
        n=1
        while [ -e "$progress_dir/reset/$ex.$n" ]; do n=$((n + 1)); done
        kept="$progress_dir/reset/$ex.$n"
        mkdir -p "$(dirname "$kept")" && mv "$mine" "$kept" || {
            echo "make reset: could not move exercises/$ex/ to ${kept#"$top"/}/; nothing was changed." >&2
            exit 1
        }
    fi
    mkdir -p "$(dirname "$mine")"
    if ! cp -R "$tmp/fresh/$ex" "$mine"; then
        rm -rf "$mine"
        [ -n "$kept" ] && mv "$kept" "$mine"
        echo "make reset: could not write exercises/$ex/; your copy is back where it was." >&2
        exit 1
    fi
    echo "make reset: exercises/$ex/ is back as shipped."
fi

rm -f "$progress_dir/hints/${ex//\//__}"
exercise_remember "$ex" "" ""
echo "Its hints start again from hint 1 (make hint EX=$ex)."
if [ -n "$kept" ]; then
    k="${kept#"$top"/}"
    echo
    echo "Your copy is kept in $k/"
    echo "  what you had changed:  diff -ru exercises/$ex $k"
    echo "  to take it back:       rm -rf exercises/$ex && mv $k exercises/$ex"
    echo "An editor with its files open still holds your version: reload them before you save."
fi
