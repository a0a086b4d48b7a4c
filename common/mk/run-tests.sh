#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run-tests.sh [CH]: run the course's Bats tests and print one summary line.
#
#   run-tests.sh          common/, every chapter in order, then the meta tests
#   run-tests.sh 03       only tests/03-*/ (also: common, meta)
#   run-tests.sh suite    only the shared echo suite: every tests/NN-*/suite-*.bats
#   LONG=1 run-tests.sh   only the long files (make test-long)
#
# JOBS files run at once (two per CPU by default: a test spends most of its
# time waiting on a server), through GNU parallel as `bats --jobs` does, but
# with one bats per file: each file's output is shown whole, under its name
# and in the usual order, and what a file leaves running is blamed on it.
# A file's own tests run one after another. A mark in its first lines
# changes how a file runs:
#   # test-long: WHY      only under LONG=1; make test names what it left out
#   # test-serial: WHY    alone, once the others are done (it loads the
#                         machine itself, or runs make in the shared tree)
#   load ../helpers/wine  one at a time (the Wine files share one prefix),
#                         in a pass of their own beside the others
# The shared echo suite's links (suite-NAME.bats, see common/servers.txt)
# count as Wine files for a KIND win32 server, and suite-NAME.faults.bats
# as long.
# JOBS=1 runs every file in the usual order, one at a time, output live.
#
# Environment: COURSE_TESTS (a folder holding tests/ instead of the
# repository), BUILD (the build to test), IMPL (solutions by default:
# exercise tests run against the reference), FILTER (bats --filter),
# VALGRIND=1 (every server under valgrind's memcheck), JOBS. The first line
# says which limits the run has (test-limits.sh); the last is always
# "tests: N passed, N failed, N skipped", and the exit status is non-zero
# when anything failed, a file bats could not run included.
set -uo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd)"
cd "${COURSE_TESTS:-$top}" || exit 1
export BUILD="${BUILD:-$top/build}" IMPL="${IMPL:-solutions}" FILTER="${FILTER:-}"
ch="${1:-}"
command -v bats >/dev/null || { echo "bats is not installed: run 'make deps' (or sudo make setup)" >&2; exit 1; }

case "${VALGRIND:-0}" in # valgrind cannot run ASan or TSan programs
0) unset VALGRIND ;;
1) case "$BUILD" in */san-*) echo "VALGRIND=1 and SAN=... together: valgrind cannot run sanitized programs; pick one" >&2; exit 2 ;; esac
   command -v valgrind >/dev/null || { echo "VALGRIND=1: valgrind is not installed (make deps)" >&2; exit 2; }
   export VALGRIND ;;
*) echo "VALGRIND=$VALGRIND: 1 or 0" >&2; exit 2 ;;
esac
JOBS="${JOBS:-$(($(nproc 2>/dev/null || echo 1) * 2))}"
case "$JOBS" in '' | *[!0-9]* | 0) echo "JOBS=$JOBS: a number of test files to run at once, 1 or more" >&2; exit 2 ;; esac

dirs=() only="*"
if [ "$ch" = suite ]; then # the links to tests/suite/echo.cases
    for d in tests/[0-9][0-9]-*/; do [ -d "$d" ] && dirs+=("${d%/}"); done
    only="suite-*.bats"
elif [ -z "$ch" ]; then
    for d in tests/common tests/[0-9][0-9]-*/ tests/meta; do [ -d "$d" ] && dirs+=("${d%/}"); done
else
    for d in tests/"$ch" tests/"$ch"-*/; do [ -d "$d" ] && dirs+=("${d%/}"); done
    if [ ${#dirs[@]} -eq 0 ]; then
        echo "make test CH=$ch: no tests/$ch-*/ folder; chapters with tests:" >&2
        ls -d tests/*/ | sed 's|tests/||; s|/$||; s/^/  /' >&2
        exit 2
    fi
fi

. "$top/common/mk/test-limits.sh" # the first line of the output
if [ "$JOBS" -gt 1 ] && ! command -v parallel >/dev/null; then
    echo "GNU parallel is not installed (make deps): the files run one at a time"
    JOBS=1
fi

. "$top/common/tools/servers.bash"
marked() { # marked FILE long|serial
    head -n 20 "$1" | grep -q "^# test-$2:" || [[ "$2$1" == long*/suite-*.faults.bats ]]
}
# a load line inside a test (a fixture the test writes) does not count
is_wine() {
    awk '/^@test / { exit } /^load \.\.\/helpers\/wine/ { w = 1; exit } END { exit !w }' "$1" ||
        { [[ "$1" == */suite-*.bats ]] && n="${1##*/suite-}" && server_load "${n%.bats}" && [ "$SRV_KIND" = win32 ]; }
}
files=() normal=() wine=() serial=() left_out=()
for d in "${dirs[@]}"; do
    list=("$d/chapter.bats") # first
    for f in "$d"/*.bats; do [ "$f" = "$d/chapter.bats" ] || list+=("$f"); done
    for f in "${list[@]}"; do
        # shellcheck disable=SC2053 # $only is a pattern
        [ -f "$f" ] && [[ "${f##*/}" == $only ]] || continue
        if marked "$f" long && [ "${LONG:-0}" != 1 ]; then left_out+=("$f"); continue; fi
        marked "$f" long || [ "${LONG:-0}" != 1 ] || continue
        files+=("$f") i=$((${#files[@]} - 1))
        if [ "$JOBS" -eq 1 ] || marked "$f" serial; then serial+=("$i")
        elif is_wine "$f"; then wine+=("$i")
        else normal+=("$i"); fi
    done
done

# No test may hang the run: bats stops one that runs longer than this (a file
# that needs longer, like the mutants, sets its own).
export BATS_TEST_TIMEOUT="${BATS_TEST_TIMEOUT:-300}"
# Every process a file's tests start inherits its mark: what still carries it
# once the file is done was left behind, and is named and killed.
work="$(mktemp -d)"
export COURSE_TEST_RUN="$$.$RANDOM" work
trap 'rm -rf "$work"' EXIT

# run_one N FILE [live]: one file's tests into $work/N.*, then its output.
run_one() {
    local n="$1" f="$2" mark="$COURSE_TEST_RUN.$1" t0=$SECONDS p pids=()
    [ "${3:-}" != live ] || echo "== $f"
    COURSE_TEST_RUN="$mark" bats --tap --timing ${FILTER:+--filter "$FILTER"} "$f" >"$work/$n.out" 2>&1 &&
        echo 0 >"$work/$n.status" || echo $? >"$work/$n.status"
    for p in $(env -u COURSE_TEST_RUN grep -lzsx "COURSE_TEST_RUN=$mark" /proc/[0-9]*/environ); do
        p=${p#/proc/} && pids+=("${p%/environ}")
    done
    if [ ${#pids[@]} -gt 0 ]; then
        { echo "$f left ${#pids[@]} process(es) running; killing them:"
          ps -o pid=,args= -p "$(IFS=,; echo "${pids[*]}")" | cut -c1-160 | sed 's/^/  /'; } >>"$work/$n.out"
        kill -KILL "${pids[@]}" 2>/dev/null
        : >"$work/$n.left"
    fi
    echo "$((SECONDS - t0)) $f" >"$work/$n.secs"
    [ "${3:-}" = live ] || echo "== $f"
    cat "$work/$n.out"
}
export -f run_one
pass() { # pass JOBS INDEX...: run those files, JOBS at once, output in order
    local j="$1"; shift
    [ $# -gt 0 ] || return 0
    for i in "$@"; do echo "$i ${files[$i]}"; done |
        PARALLEL_SHELL=bash parallel --will-cite -k -j "$j" --colsep ' ' run_one '{1}' '{2}'
}

start=$SECONDS
# The Wine files run one after another beside the others (one file more
# than JOBS while they last: about a minute of a full run), shown after them.
if [ ${#wine[@]} -gt 0 ]; then
    pass 1 "${wine[@]}" >"$work/wine.txt" &
    wine_pid=$!
fi
pass "$JOBS" "${normal[@]}"
[ -z "${wine_pid:-}" ] || { wait "$wine_pid"; cat "$work/wine.txt"; }
for i in "${serial[@]}"; do run_one "$i" "${files[$i]}" live; done

passed=0 failed=0 skipped=0 failed_names=()
for i in "${!files[@]}"; do
    f="${files[$i]}" out="$work/$i.out"
    if [ ! -f "$work/$i.secs" ]; then
        failed=$((failed + 1)) failed_names+=("$f: the run lost it: it ended without a result")
        continue
    fi
    n=$(grep -Ec '^not ok [0-9]+ ' "$out")
    s=$(grep -Ec '^ok [0-9]+ .*# skip' "$out")
    passed=$((passed + $(grep -Ec '^ok [0-9]+ ' "$out") - s)) skipped=$((skipped + s)) failed=$((failed + n))
    while IFS= read -r line; do failed_names+=("$f: ${line#not ok }"); done < <(grep -E '^not ok [0-9]+ ' "$out")
    if [ -f "$work/$i.left" ]; then
        failed=$((failed + 1)) failed_names+=("$f: left processes running after its tests")
    elif [ "$n" -eq 0 ] && [ "$(cat "$work/$i.status")" -ne 0 ]; then # a syntax error, a setup_file that broke
        failed=$((failed + 1)) failed_names+=("$f: bats exited with status $(cat "$work/$i.status") without a failing test")
    fi
done

[ ${#left_out[@]} -eq 0 ] || printf '\nleft out, for make test-long: %s\n' "${left_out[*]}"
if [ ${#dirs[@]} -gt 1 ]; then
    echo && echo "slowest test files (seconds):"
    cat "$work"/*.secs 2>/dev/null | sort -rn | head -n 5 | sed 's/^/  /'
    echo "slowest tests (ms):"
    for i in "${!files[@]}"; do
        sed -n "s|^ok [0-9]* \(.*\) in \([0-9]*\)ms\$|\2 ${files[$i]}: \1|p" "$work/$i.out" 2>/dev/null
    done | sort -rn | head -n 5 | sed 's/^/  /'
fi
[ ${#failed_names[@]} -eq 0 ] || { echo && echo "failed:" && printf '  %s\n' "${failed_names[@]}"; }
echo
echo "($(basename "$BUILD") build, IMPL=$IMPL${VALGRIND:+, VALGRIND=$VALGRIND}, JOBS=$JOBS, $((SECONDS - start))s)"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
