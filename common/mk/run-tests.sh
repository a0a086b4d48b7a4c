#!/usr/bin/env bash
# run-tests.sh [CH]: run the course's Bats tests and print one summary line.
#
#   run-tests.sh          common/, every chapter in order, then the meta tests
#   run-tests.sh 03       only tests/03-*/ (also: common, meta)
#   run-tests.sh suite    only the shared echo suite: every tests/NN-*/suite-*.bats
#   LONG=1 run-tests.sh   only the long files (make test-long)
#
# A test file whose first lines hold "# test-long: WHY" is a long one: the
# plain run leaves it out and says so, LONG=1 runs only such files. What
# takes many minutes (the mutants, which rerun other tests dozens of times)
# lives there, so that `make test` stays quick enough to run after every
# change.
#
# Environment: COURSE_TESTS (a folder holding tests/ instead of the
# repository), BUILD (which build to test; the Makefile sets it, SAN builds
# included), IMPL (solutions by default: exercise tests run against the
# reference), FILTER (passed to bats --filter), VALGRIND=1 (every server
# under valgrind's memcheck; an error or a leak fails the test), JOBS (test
# files run at once; two per CPU by default, JOBS=1 runs them one by one
# with the output live), TEST_TIMES (where the
# files' times are kept for the order of the next run; $BUILD/test-times by
# default, none when COURSE_TESTS is set).
#
# The first line says which limits the run has: the soft limits on open
# files and locked memory are raised to the hard ones first (see "Limits"
# below). The last line is always "tests: N passed, N failed, N skipped";
# the exit status is non-zero when anything failed, including a test file
# that bats could not even run.
set -uo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd)"
# COURSE_TESTS points the runner at another tests folder (the meta tests use
# it to check the runner's own counting).
cd "${COURSE_TESTS:-$top}" || exit 1
export BUILD="${BUILD:-$top/build}"
export IMPL="${IMPL:-solutions}"
ch="${1:-}"

command -v bats >/dev/null || { echo "bats is not installed: run 'make deps' (or sudo make setup)" >&2; exit 1; }

# VALGRIND=1: every server a test starts runs under valgrind's memcheck
# (tests/helpers/common.bash). Not with a sanitizer build: valgrind cannot
# run ASan or TSan programs.
if [ "${VALGRIND:-0}" = 1 ]; then
    case "$BUILD" in
    */san-*) echo "VALGRIND=1 and SAN=... together: valgrind cannot run sanitized programs; pick one" >&2; exit 2 ;;
    esac
    command -v valgrind >/dev/null || { echo "VALGRIND=1: valgrind is not installed (make deps)" >&2; exit 2; }
    export VALGRIND
elif [ -n "${VALGRIND:-}" ] && [ "$VALGRIND" != 0 ]; then
    echo "VALGRIND=$VALGRIND: 1 or 0" >&2
    exit 2
else
    unset VALGRIND # VALGRIND=0 is no valgrind, for the tests and the summary
fi

dirs=()
only="*" # which files of each folder
if [ "$ch" = suite ]; then
    # the generated suite files of every chapter (tests/suite/ holds their sources)
    for d in tests/[0-9][0-9]-*/; do [ -d "$d" ] && dirs+=("${d%/}"); done
    only="suite-*.bats"
elif [ -z "$ch" ]; then
    [ -d tests/common ] && dirs+=(tests/common)
    for d in tests/[0-9][0-9]-*/; do [ -d "$d" ] && dirs+=("${d%/}"); done
    [ -d tests/meta ] && dirs+=(tests/meta)
else
    for d in tests/"$ch" tests/"$ch"-*/; do [ -d "$d" ] && dirs+=("${d%/}"); done
    if [ ${#dirs[@]} -eq 0 ]; then
        echo "make test CH=$ch: no tests/$ch-*/ folder; chapters with tests:" >&2
        ls -d tests/*/ | sed 's|tests/||; s|/$||; s/^/  /' >&2
        exit 2
    fi
fi

filter=()
[ -n "${FILTER:-}" ] && filter=(--filter "$FILTER")

# No test may hang the run: bats stops a test that runs longer than this and
# reports it as "not ok ... # timeout after Ns" (a file that needs longer for
# one test, like the mutants, sets BATS_TEST_TIMEOUT itself).
export BATS_TEST_TIMEOUT="${BATS_TEST_TIMEOUT:-300}"

# Every process a test starts inherits this mark. What still carries it once
# a test file is done was left behind (a server a test forgot, a program a
# hung test left spinning): it is named and killed, so it cannot slow down
# or disturb the files after it, and the file counts as a failure.
export COURSE_TEST_RUN="$$.$RANDOM"
reap_leftovers() { # FILE MARK
    local p pids=()
    for p in $(env -u COURSE_TEST_RUN grep -lzsx "COURSE_TEST_RUN=$2" /proc/[0-9]*/environ); do
        p=${p#/proc/}
        pids+=("${p%/environ}")
    done
    [ ${#pids[@]} -gt 0 ] || return 0
    echo "$1 left ${#pids[@]} process(es) running; killing them:"
    ps -o pid=,args= -p "$(IFS=,; echo "${pids[*]}")" | cut -c1-160 | sed 's/^/  /'
    kill -KILL "${pids[@]}" 2>/dev/null
    return 1
}

passed=0 failed=0 skipped=0
failed_names=()
start=$(date +%s)
work="$(mktemp -d)" # per file: N.out (its TAP), N.status, N.left, N.secs (written last: done)
times="$work/times" # "SECONDS FILE" and "MS FILE: TEST", for the slowest lists at the end
: >"$times"
trap 'rm -rf "$work"' EXIT

# is_long FILE: the file is marked "# test-long:" near its top.
is_long() { head -n 20 "$1" | grep -q '^# test-long:'; }
# is_serial FILE: the file runs alone: it is marked "# test-serial: WHY"
# near its top (it runs the course's own make in the shared tree, say, or
# runs many tests at once itself).
is_serial() { head -n 20 "$1" | grep -q '^# test-serial:'; }
# is_wine FILE: the file runs Windows programs. The Wine files share one
# prefix, whose wineserver each stops when it is done: they run one after
# another, beside the other files.
# (A load line inside a test, a fixture written by the test, does not count.)
is_wine() { awk '/^@test / { exit } /^load \.\.\/helpers\/wine/ { w = 1; exit } END { exit !w }' "$1"; }

# JOBS: how many test files run at once. Each file still runs its own tests
# one after another, and its output is shown whole, in the usual order, once
# it is done. Most of a test's time is spent waiting (for a server, a
# timeout, an idle period being measured), so the default is two files per
# CPU. Three per CPU is about 10% faster, and too much for some tests' time
# bounds: on 2 CPUs it made chapter 02's 2,000 threads under valgrind
# outgrow 300 s. JOBS=1 runs them one by one, in order, with the output
# live.
JOBS="${JOBS:-$(($(nproc 2>/dev/null || echo 1) * 2))}"
case "$JOBS" in
'' | *[!0-9]* | 0) echo "JOBS=$JOBS: a number of test files to run at once, 1 or more" >&2; exit 2 ;;
esac

# Limits, before any test, server or wineserver starts: everything started
# below inherits them, and the first line of the output says what they are.
# Root may raise any limit; an ordinary account at most to its hard limits,
# and Debian starts one with a soft limit of 1024 open files (the hard limit
# is higher). Tests hold 2,000 connections at once, in a server and in the
# client, and under Wine every socket is also a descriptor of the wineserver
# a test file starts: the soft limit is raised to the hard one. A hard limit
# of "unlimited" gives fs.nr_open, the most a process may have. Locked memory
# likewise: a process without CAP_IPC_LOCK pins io_uring's registered
# buffers against it, counted per user, and on some kernels its rings too
# (Linux 6.18 does; 5.12 moved them to the memory cgroup's account).
fd_was=$(ulimit -Sn) fd_hard=$(ulimit -Hn) fd_max=$fd_hard
if [ "$fd_hard" = unlimited ]; then
    fd_max=$(cat /proc/sys/fs/nr_open 2>/dev/null || sysctl -n kern.maxfilesperproc 2>/dev/null || echo "")
fi
if [ "$fd_was" != unlimited ] && [[ "$fd_max" =~ ^[0-9]+$ ]] && [ "$fd_was" -lt "$fd_max" ]; then
    ulimit -Sn "$fd_max" 2>/dev/null || true
fi
fd_now=$(ulimit -Sn)
if [ "$fd_now" != "$fd_was" ]; then
    fd_text="open files $fd_now (soft limit raised from $fd_was to the hard limit)"
    [ "$fd_hard" != unlimited ] || fd_text="open files $fd_now (soft limit raised from $fd_was; hard limit unlimited, fs.nr_open $fd_now)"
elif [ "$fd_now" = "$fd_hard" ]; then
    fd_text="open files $fd_now (soft limit = hard limit)"
else
    fd_text="open files $fd_now (hard limit $fd_hard)"
fi
kib() { if [ "$1" = unlimited ]; then echo unlimited; else echo "$1 KiB"; fi; }
ml_was=$(ulimit -Sl) ml_hard=$(ulimit -Hl)
if [ "$ml_was" != unlimited ] && { [ "$ml_hard" = unlimited ] || [ "$ml_was" -lt "$ml_hard" ]; }; then
    ulimit -Sl "$ml_hard" 2>/dev/null || true
fi
ml_now=$(ulimit -Sl)
ml_text="locked memory $(kib "$ml_now")"
[ "$ml_now" = "$ml_was" ] || ml_text+=" (soft limit raised from $(kib "$ml_was"))"
ml_counted=1
caps=$(awk '/^CapEff:/ { print $2 }' /proc/self/status 2>/dev/null)
if [[ "$caps" =~ ^[0-9a-f]+$ ]] && (((16#$caps >> 14) & 1)); then
    ml_text+=" (not counted: CAP_IPC_LOCK)"
    ml_counted=0
fi
echo "limits for $(id -un) (uid $(id -u)): $fd_text, $ml_text, processes $(ulimit -u)"
# Below what the tests need, say so at once. Open files: 2,000 idle
# connections plus 64 (require_fds in tests/helpers/echo_suite.bash), plus
# the wineserver's own 400 under Wine (tests/helpers/wine.bash); those
# tests skip below that. Locked memory, as an ordinary user on Linux 6.18:
# uring-cp -f needs 2,080 KiB (it skips below that), each io_uring server
# 96 to 256 KiB for its rings, all counted together for the user; 4096
# leaves room for the files that run at once.
fd_most=2464 ml_most=4096
if [ "$fd_now" != unlimited ] && [ "$fd_now" -lt "$fd_most" ]; then
    echo "  the tests that hold 2,000 connections need up to $fd_most open files, and skip with fewer;" \
        "to raise the hard limit: the line '$(id -un) hard nofile 4096' in /etc/security/limits.conf" \
        "(from the next login), or LimitNOFILE=4096 for a systemd unit"
fi
if [ "$ml_counted" = 1 ] && [ "$ml_now" != unlimited ] && [ "$ml_now" -lt "$ml_most" ]; then
    echo "  the io_uring tests pin memory, counted for all of $(id -un)'s processes together (uring-cp -f" \
        "2,080 KiB, each io_uring server up to 256 KiB): under $ml_most KiB some skip, and servers may fail" \
        "to create their rings (ENOMEM); to raise the hard limit: the line '$(id -un) hard memlock 8192'" \
        "in /etc/security/limits.conf, or LimitMEMLOCK=8M for a systemd unit"
fi

files=()
left_out=()
for d in "${dirs[@]}"; do
    list=()
    [ -f "$d/chapter.bats" ] && list+=("$d/chapter.bats")
    for f in "$d"/*.bats; do
        [ -f "$f" ] && [ "$f" != "$d/chapter.bats" ] && list+=("$f")
    done
    for f in "${list[@]}"; do
        # shellcheck disable=SC2053 # $only is a pattern
        [[ "${f##*/}" == $only ]] || continue
        if is_long "$f" && [ "${LONG:-0}" != 1 ]; then
            left_out+=("$f")
        elif is_long "$f" || [ "${LONG:-0}" != 1 ]; then
            files+=("$f")
        fi
    done
done

# run_file N FILE [live]: run one file's tests, with its own mark (so the
# leftovers of one file are not blamed on another running beside it).
# "live" also copies the TAP to the terminal as it comes.
run_file() {
    local i="$1" f="$2" t0
    t0=$(date +%s)
    if [ "${3:-}" = live ]; then
        COURSE_TEST_RUN="$COURSE_TEST_RUN.$i" bats --tap --timing "${filter[@]}" "$f" 2>&1 | tee "$work/$i.out"
        echo "${PIPESTATUS[0]}" >"$work/$i.status"
    else
        COURSE_TEST_RUN="$COURSE_TEST_RUN.$i" bats --tap --timing "${filter[@]}" "$f" >"$work/$i.out" 2>&1
        echo "$?" >"$work/$i.status"
    fi
    reap_leftovers "$f" "$COURSE_TEST_RUN.$i" >"$work/$i.left"
    echo "$(($(date +%s) - t0))" >"$work/$i.secs"
}

# report N FILE [live]: print a finished file's output (unless it was shown
# live) and add its results to the totals.
report() {
    local i="$1" f="$2" out="$work/$1.out" status p s n line
    if [ "${3:-}" != live ]; then
        echo "== $f"
        cat "$out"
    fi
    status=$(cat "$work/$i.status")
    if [ -s "$work/$i.left" ]; then
        cat "$work/$i.left"
        failed=$((failed + 1))
        failed_names+=("$f: left processes running after its tests")
    fi
    echo "$(cat "$work/$i.secs") $f" >>"$times"
    sed -n "s|^ok [0-9]* \(.*\) in \([0-9]*\)ms\$|\2 $f: \1|p" "$out" >>"$times"
    p=$(grep -Ec '^ok [0-9]+ ' "$out" || true)
    s=$(grep -Ec '^ok [0-9]+ .*# skip' "$out" || true)
    n=$(grep -Ec '^not ok [0-9]+ ' "$out" || true)
    while IFS= read -r line; do
        failed_names+=("$f: ${line#not ok }")
    done < <(grep -E '^not ok [0-9]+ ' "$out" || true)
    passed=$((passed + p - s))
    skipped=$((skipped + s))
    failed=$((failed + n))
    if [ "$status" -ne 0 ] && [ "$n" -eq 0 ]; then
        # bats itself failed (syntax error, a setup_file that broke...).
        failed=$((failed + 1))
        failed_names+=("$f: bats exited with status $status without a failing test")
    fi
}

# The order files start in. Output is always printed in the usual order
# (common, chapters, meta), each file whole as soon as every file before it
# has been shown; the order they start in is chosen to finish sooner:
# - the files this build has timed before start longest first, so that the
#   run does not end with one long file alone on a CPU; files it has no time
#   for (new ones, or every file on a first run) start before them, in the
#   usual order. The times of the last runs are kept in $TEST_TIMES
#   (build/test-times; one per build folder, and another under VALGRIND=1);
# - files marked test-serial run alone, one after another, once every other
#   file is done;
# - a Wine file waits for the Wine file before it, but the files after it do
#   not wait with it.
# JOBS=1 runs every file in the usual order, one at a time, output live.
if [ -z "${TEST_TIMES:-}" ] && [ -z "${COURSE_TESTS:-}" ]; then
    TEST_TIMES="$BUILD/test-times${VALGRIND:+.valgrind}"
fi
declare -A known=()
if [ -n "${TEST_TIMES:-}" ] && [ -f "$TEST_TIMES" ]; then
    while read -r secs f; do
        [[ "$secs" =~ ^[0-9]+$ ]] && [ -n "$f" ] && known[$f]=$secs
    done <"$TEST_TIMES"
fi
parallel=() serial=() timed=()
for i in "${!files[@]}"; do
    f="${files[$i]}"
    if [ "$JOBS" -eq 1 ] || is_serial "$f"; then
        serial+=("$i")
    elif [ -n "${known[$f]:-}" ]; then
        timed+=("${known[$f]} $i")
    else
        parallel+=("$i")
    fi
done
if [ ${#timed[@]} -gt 0 ]; then
    while read -r _ i; do parallel+=("$i"); done < <(printf '%s\n' "${timed[@]}" | sort -k1,1nr -k2,2n)
fi

shown=0 # files reported so far, in the usual order
show_done() {
    while [ "$shown" -lt "${#files[@]}" ] && [ -f "$work/$shown.secs" ]; do
        report "$shown" "${files[$shown]}"
        shown=$((shown + 1))
    done
}
wine_now="" wine_pid="" # the Wine file running, if any, and its job
pending=("${parallel[@]}")
while [ ${#pending[@]} -gt 0 ]; do
    if [ -n "$wine_now" ] && { [ -f "$work/$wine_now.secs" ] || ! kill -0 "$wine_pid" 2>/dev/null; }; then
        wine_now="" wine_pid=""
    fi
    pick=-1
    if [ "$(jobs -pr | wc -l)" -lt "$JOBS" ]; then
        for k in "${!pending[@]}"; do
            i="${pending[$k]}"
            if is_wine "${files[$i]}"; then
                [ -z "$wine_now" ] || continue
                wine_now=$i
            fi
            pick=$k
            break
        done
    fi
    if [ "$pick" -lt 0 ]; then
        # every slot is busy, or only Wine files are left and one is running
        wait -n
        show_done
        continue
    fi
    i="${pending[$pick]}"
    unset 'pending[pick]'
    pending=("${pending[@]}")
    run_file "$i" "${files[$i]}" &
    [ "$wine_now" = "$i" ] && wine_pid=$!
    show_done
done
while [ "$(jobs -pr | wc -l)" -gt 0 ]; do
    wait -n
    show_done
done
# A file whose run ended without a word (its job killed, say) still counts.
for i in "${parallel[@]}"; do
    [ -f "$work/$i.secs" ] && continue
    echo "# the runner lost this file's run: it ended before writing its result" >>"$work/$i.out"
    echo 1 >"$work/$i.status"
    : >"$work/$i.left"
    echo 0 >"$work/$i.secs"
done
show_done
for i in "${serial[@]}"; do
    echo "== ${files[$i]}"
    run_file "$i" "${files[$i]}" live
    report "$i" "${files[$i]}" live
    # the files after it in the usual order were shown already, or are serial too
    [ "$i" -eq "$shown" ] && shown=$((shown + 1))
    show_done
done

# The times of this run's files, for the order of the next (not for a run
# of some tests only: FILTER makes a file look short).
if [ -n "${TEST_TIMES:-}" ] && [ -z "${FILTER:-}" ] && [ ${#files[@]} -gt 0 ] && [ -d "$(dirname "$TEST_TIMES")" ]; then
    declare -A ran=()
    for i in "${!files[@]}"; do
        [ -f "$work/$i.secs" ] && ran[${files[$i]}]=$(cat "$work/$i.secs")
    done
    {
        for f in "${!known[@]}"; do [ -n "${ran[$f]:-}" ] || echo "${known[$f]} $f"; done
        for f in "${!ran[@]}"; do echo "${ran[$f]} $f"; done
    } | sort -k2 >"$TEST_TIMES.$$" 2>/dev/null && mv -f "$TEST_TIMES.$$" "$TEST_TIMES" 2>/dev/null ||
        rm -f "$TEST_TIMES.$$"
fi

elapsed=$(($(date +%s) - start))
if [ ${#left_out[@]} -gt 0 ]; then
    echo
    echo "left out, for make test-long: ${left_out[*]}"
fi
if [ ${#dirs[@]} -gt 1 ] || [ "$(grep -c ': ' "$times")" -gt 10 ]; then
    echo
    echo "slowest test files (seconds):"
    grep -v ': ' "$times" | sort -rn | head -n 5 | sed 's/^/  /'
    echo "slowest tests (ms):"
    grep ': ' "$times" | sort -rn | head -n 5 | sed 's/^/  /'
fi
if [ ${#failed_names[@]} -gt 0 ]; then
    echo
    echo "failed:"
    printf '  %s\n' "${failed_names[@]}"
fi
echo
echo "($(basename "$BUILD") build, IMPL=$IMPL${VALGRIND:+, VALGRIND=$VALGRIND}, JOBS=$JOBS, ${elapsed}s)"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
