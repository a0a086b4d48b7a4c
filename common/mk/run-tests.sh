#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run-tests.sh [CH|suite]: the course's Bats tests: common/, every chapter,
# then meta/ (CH=03: tests/03-*/ only; suite: every tests/NN-*/suite-*.bats;
# LONG=1: only the long files, make test-long). JOBS files (two per CPU) run
# at once through GNU parallel, one bats per file, output whole and in order.
# A file's first lines may say "# test-long: WHY" (only under LONG=1; so is
# a suite-NAME.faults.bats link), "# test-serial: WHY" (alone, after the
# rest), or "load ../helpers/wine" (as a win32 server's suite link: one at a
# time, in a pass beside the others). What a file leaves running is killed
# and fails it. Environment: COURSE_TESTS (a folder holding tests/), BUILD,
# IMPL (solutions), FILTER (bats --filter), VALGRIND=1, JOBS (1: in order,
# live). The last line is "tests: N passed, N failed, N skipped".
set -uo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd)"
cd "${COURSE_TESTS:-$top}" || exit 1
export BUILD="${BUILD:-$top/build}" IMPL="${IMPL:-solutions}" FILTER="${FILTER:-}"
ch="${1:-}"
command -v bats >/dev/null || { echo "bats is not installed: run 'make deps' (or sudo make setup)" >&2; exit 1; }

case "${VALGRIND:-0}:$BUILD" in # valgrind cannot run ASan or TSan programs
0:*) unset VALGRIND ;;
1:*/san-*) echo "VALGRIND=1 and SAN=... together: valgrind cannot run sanitized programs; pick one" >&2; exit 2 ;;
1:*) command -v valgrind >/dev/null || { echo "VALGRIND=1: valgrind is not installed (make deps)" >&2; exit 2; }
     export VALGRIND ;;
*) echo "VALGRIND=$VALGRIND: 1 or 0" >&2; exit 2 ;;
esac
JOBS="${JOBS:-$(($(nproc 2>/dev/null || echo 1) * 2))}"
case "$JOBS" in '' | *[!0-9]* | 0) echo "JOBS=$JOBS: a number of test files to run at once, 1 or more" >&2; exit 2 ;; esac

only="*"
case "$ch" in
suite) want=(tests/[0-9][0-9]-*/) only="suite-*.bats" ;; # the links to tests/suite/echo.cases
'') want=(tests/common tests/[0-9][0-9]-*/ tests/meta) ;;
*) want=(tests/"$ch" tests/"$ch"-*/) ;;
esac
dirs=() && for d in "${want[@]}"; do [ -d "$d" ] && dirs+=("${d%/}"); done
if [ ${#dirs[@]} -eq 0 ]; then
    echo "make test CH=$ch: no tests/$ch-*/ folder; chapters with tests:" >&2
    find tests -mindepth 1 -maxdepth 1 -type d -printf '  %f\n' | sort >&2
    exit 2
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

# No test may hang the run (a file that needs longer sets its own limit);
# every process a file starts inherits its mark, which names what it leaves.
export BATS_TEST_TIMEOUT="${BATS_TEST_TIMEOUT:-300}"
work="$(mktemp -d)"
export COURSE_TEST_RUN="$$.$RANDOM" work
trap 'rm -rf "$work"' EXIT

# run_one N FILE [live]: one file's tests into $work/N.*, then its output.
run_one() {
    local n="$1" f="$2" mark="$COURSE_TEST_RUN.$1" p pids=()
    [ "${3:-}" != live ] || echo "== $f"
    COURSE_TEST_RUN="$mark" bats --tap --timing ${FILTER:+--filter "$FILTER"} "$f" >"$work/$n.out" 2>&1
    local st=$?
    for p in $(env -u COURSE_TEST_RUN grep -lzsx "COURSE_TEST_RUN=$mark" /proc/[0-9]*/environ); do
        p=${p#/proc/} && pids+=("${p%/environ}")
    done
    if [ ${#pids[@]} -gt 0 ]; then
        { echo "$f left ${#pids[@]} process(es) running; killing them:"
          ps -o pid=,args= -p "$(IFS=,; echo "${pids[*]}")" | cut -c1-160 | sed 's/^/  /'; } >>"$work/$n.out"
        kill -KILL "${pids[@]}" 2>/dev/null
        : >"$work/$n.left"
    fi
    echo "$st" >"$work/$n.status" # last: a file without one was lost
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
if [ ${#wine[@]} -gt 0 ]; then # one after another, beside the others
    pass 1 "${wine[@]}" >"$work/wine.txt" &
    wine_pid=$!
fi
pass "$JOBS" "${normal[@]}"
[ -z "${wine_pid:-}" ] || { wait "$wine_pid"; cat "$work/wine.txt"; }
for i in "${serial[@]}"; do run_one "$i" "${files[$i]}" live; done

passed=0 failed=0 skipped=0 failed_names=()
for i in "${!files[@]}"; do
    f="${files[$i]}" out="$work/$i.out"
    if [ ! -f "$work/$i.status" ]; then
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
[ ${#failed_names[@]} -eq 0 ] || { echo && echo "failed:" && printf '  %s\n' "${failed_names[@]}"; }
echo
case "$BUILD" in
*/san-*) built="build/${BUILD##*/}, SAN=${SAN:-$(basename "$BUILD" | sed 's/^san-//; s/-/,/g')}" ;;
*) built="${BUILD#"$top"/}" ;;
esac
echo "(programs from $built, IMPL=$IMPL${VALGRIND:+, VALGRIND=$VALGRIND}, JOBS=$JOBS, $((SECONDS - start))s)"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
