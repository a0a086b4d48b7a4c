#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# grade.sh [CH|EX]: score the exercises of exercises/ for a classroom.
#
# Each exercise is worth its level's points: warm-up 1, core 2, challenge 3.
# It scores them when its tests pass against your copy, nothing otherwise
# (not started, a TODO left, not compiling, a failing test). The status
# comes as make progress finds it: an exercise still as shipped is not
# started, with no test run (an untouched exercise fails its tests: the
# course's meta tests prove it of every one); one whose files have not
# changed since its last make ex keeps that outcome; any other is built and
# tested now. An exercise that cannot be tested on this machine (another
# system's, or every test skipped, as without Wine) counts in neither total,
# and the table says why.
#
# Prints a table (exercise, level, points, status) chapter by chapter, each
# chapter's subtotal, and a last line "grade: N/M". Writes a JUnit report,
# one testsuite per chapter and one testcase per exercise, to
# build/grade/junit.xml. Exit status 0 when the grading ran, whatever the
# score (a classroom reads the score); with EX= (one exercise), 0 only when
# it passes, so that an autograder can give it its points; 2 for a wrong
# CH or EX.
#
# grade.sh --autograding: print GitHub Classroom's autograding.json for
# every exercise (one test each, run with make grade EX=..., worth its
# points); .github/classroom/autograding.json is its output, and a meta test
# keeps the two the same.
set -uo pipefail
. "$(dirname "$0")/exercise-lib.sh"

points_of() { # points_of LEVEL
    case "$1" in
    warm-up) echo 1 ;;
    core) echo 2 ;;
    challenge) echo 3 ;;
    *) echo 0 ;;
    esac
}

if [ "${1:-}" = --autograding ]; then
    first=1
    echo '{'
    echo '  "tests": ['
    while IFS= read -r ex; do
        [ "$first" = 1 ] || echo '    },'
        level="$(exercise_meta "$ex" level)"
        echo '    {'
        echo "      \"name\": \"$ex ($level)\","
        # the packages once, before the first exercise's tests
        if [ "$first" = 1 ]; then setup="sudo make deps"; else setup=""; fi
        echo "      \"setup\": \"$setup\","
        echo "      \"run\": \"make -s grade EX=$ex\","
        echo '      "input": "",'
        echo '      "output": "",'
        echo '      "comparison": "included",'
        echo '      "timeout": 10,'
        echo "      \"points\": $(points_of "$level")"
        first=0
    done < <(exercise_list)
    echo '    }'
    echo '  ]'
    echo '}'
    exit 0
fi

command -v bats >/dev/null || { echo "bats is not installed: run 'make deps'" >&2; exit 1; }

ch="${1:-}" one="${2:-}"
mapfile -t all < <(exercise_list)
if [ -n "$one" ]; then
    one="$(exercise_resolve "$one" grade)" || exit 2
    all=("$one")
elif [ -n "$ch" ]; then
    mapfile -t all < <(printf '%s\n' "${all[@]}" | awk -v c="$ch" '{ d = $0; sub(/\/.*/, "", d) } d == c || substr(d, 1, length(c) + 1) == c "-"')
    if [ ${#all[@]} -eq 0 ]; then
        echo "make grade CH=$ch: no chapter with exercises by that name; they are:" >&2
        exercise_list | sed 's|/.*||' | uniq | sed 's/^/  /' >&2
        exit 2
    fi
fi

fresh="$(exercise_fresh_all)" || { echo "grade: could not generate the shipped exercises (make exercises says why)" >&2; exit 1; }
exercise_scan "$fresh"

xml() { # xml TEXT: TEXT escaped for an XML attribute
    sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g' <<<"$1"
}

out="${BUILD:-$top/build}/grade"
mkdir -p "$out"
junit="$out/junit.xml"
cases="$(mktemp)"
trap 'rm -f "$cases"' EXIT

width=8
for ex in "${all[@]}"; do
    [ "${#ex}" -gt "$width" ] && width=${#ex}
done

got=0 max=0 untestable=0 chapter="" c_got=0 c_max=0 c_n=0 c_fail=0 c_skip=0 c_time=0
flush() {
    [ -n "$chapter" ] || return 0
    printf '  %-*s  %-9s  %6s\n' "$width" "$chapter, in all" "" "$c_got/$c_max"
    printf '  <testsuite name="%s" tests="%d" failures="%d" skipped="%d" time="%d">\n' \
        "$(xml "$chapter")" "$c_n" "$c_fail" "$c_skip" "$c_time" >>"$cases.suites"
    cat "$cases" >>"$cases.suites"
    echo '  </testsuite>' >>"$cases.suites"
    : >"$cases"
}
: >"$cases.suites"
printf '  %-*s  %-9s  %6s  %s\n' "$width" exercise level points status
for ex in "${all[@]}"; do
    if [ "${ex%%/*}" != "$chapter" ]; then
        flush
        chapter="${ex%%/*}" c_got=0 c_max=0 c_n=0 c_fail=0 c_skip=0 c_time=0
    fi
    level="$(exercise_meta "$ex" level)"
    pts="$(points_of "$level")"
    t0=$SECONDS
    status="$(exercise_status "$ex" "$fresh")"
    took=$((SECONDS - t0))
    c_time=$((c_time + took)) c_n=$((c_n + 1))
    name="$(xml "${ex#*/}")"
    case "$status" in
    done)
        score="$pts/$pts" got=$((got + pts)) max=$((max + pts)) c_got=$((c_got + pts)) c_max=$((c_max + pts))
        printf '    <testcase classname="%s" name="%s" time="%d"/>\n' "$chapter" "$name" "$took" >>"$cases"
        ;;
    "needs "* | "cannot be tested here"*)
        score="-" untestable=$((untestable + pts)) c_skip=$((c_skip + 1))
        printf '    <testcase classname="%s" name="%s" time="%d"><skipped message="%s"/></testcase>\n' \
            "$chapter" "$name" "$took" "$(xml "$status")" >>"$cases"
        ;;
    *)
        score="0/$pts" max=$((max + pts)) c_max=$((c_max + pts)) c_fail=$((c_fail + 1))
        printf '    <testcase classname="%s" name="%s" time="%d"><failure message="%s"/></testcase>\n' \
            "$chapter" "$name" "$took" "$(xml "$status")" >>"$cases"
        ;;
    esac
    printf '  %-*s  %-9s  %6s  %s\n' "$width" "$ex" "$level" "$score" "$status"
done
flush
{
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    printf '<testsuites name="exercises" tests="%d" failures="%d">\n' "${#all[@]}" \
        "$(grep -c '<failure' "$cases.suites")"
    cat "$cases.suites"
    echo '</testsuites>'
} >"$junit"
rm -f "$cases.suites"

echo
echo "points: warm-up 1, core 2, challenge 3; JUnit report: ${junit#"$top"/}"
[ "$untestable" -eq 0 ] || echo "not counted: $untestable points of exercises this machine cannot test (see their status)"
echo "grade: $got/$max"
if [ -n "$one" ]; then
    [ "$got" -gt 0 ] && [ "$got" -eq "$max" ]
fi
