#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# progress.sh: every exercise, chapter by chapter in the order of its
# chapter's list, with its kind (write, fix, predict), its level (warm-up,
# core, challenge) and where you are with it; then the next one to do.
#
# Statuses: "not started" (your copy is exactly what `make exercises`
# generates: no build, no test), "done" (its tests pass), "failing (a TODO is
# left)", "failing (does not compile)", "failing (N of M tests, first: ...)",
# "needs Linux" (its build found no epoll or io_uring header: another
# system), "cannot be tested here (why)" (every test skipped, e.g. no Wine).
# A changed exercise is built and tested, once: the outcome is kept in
# .progress/results/ and used again until one of the files it depends on
# changes (make ex and make watch keep theirs there too).
# The shipped copies it compares with are kept in .progress/fresh/ until
# their sources change.
set -uo pipefail
. "$(dirname "$0")/exercise-lib.sh"

command -v bats >/dev/null || { echo "bats is not installed: run 'make deps'" >&2; exit 1; }

fresh="$(exercise_fresh_all)" || { echo "progress: could not generate the shipped exercises (make exercises says why)" >&2; exit 1; }

exercise_scan "$fresh"
mapfile -t all < <(exercise_list)
width=8
for ex in "${all[@]}"; do
    [ "${#ex}" -gt "$width" ] && width=${#ex}
done

chapter_title() { # chapter_title NN-slug: the first line of its README, or the slug
    local t=""
    [ -f "$top/chapters/$1/README.md" ] && t="$(sed -n '1s/^#[ \t]*//p' "$top/chapters/$1/README.md")"
    echo "${t:-$1}"
}

# one chapter at a time: its heading says how many of its exercises are done
next="" next_status=""
n_done=0 n_total=0 chapter="" rows="" ch_done=0 ch_total=0
flush_chapter() {
    [ -n "$chapter" ] || return 0
    [ "$n_total" -gt "$ch_total" ] && echo
    printf '%s   (%d of %d done)\n%s' "$(chapter_title "$chapter")" "$ch_done" "$ch_total" "$rows"
}
for ex in "${all[@]}"; do
    if [ "${ex%%/*}" != "$chapter" ]; then
        flush_chapter
        chapter="${ex%%/*}" rows="" ch_done=0 ch_total=0
    fi
    n_total=$((n_total + 1)) ch_total=$((ch_total + 1))
    status="$(exercise_status "$ex" "$fresh")"
    kind="$(exercise_meta "$ex" kind)" level="$(exercise_meta "$ex" level)"
    rows+="$(printf '  %-*s  %-7s  %-9s  %s' "$width" "$ex" "${kind:-?}" "${level:-?}" "$status")"$'\n'
    case "$status" in
    done) n_done=$((n_done + 1)) ch_done=$((ch_done + 1)) ;;
    "needs "* | "cannot be tested here"*) ;;
    *) [ -z "$next" ] && next="$ex" next_status="$status" ;;
    esac
done
flush_chapter

echo
echo "$n_done of $n_total done."
if [ -n "$next" ]; then
    echo "next: $next, $next_status ($(exercise_meta "$next" kind), $(exercise_meta "$next" level)): $(exercise_meta "$next" title)"
    echo "      the task: exercises/$next/README.md"
    echo "      then: make watch (tests it each time you save a file), or make ex EX=$next"
else
    echo "Every exercise you can do here is done."
fi
