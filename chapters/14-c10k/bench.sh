#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench.sh: every echo server of the course side by side (each "bench:"
# server of common/servers.txt), the same client (echo-load) against each,
# on this machine.
#
#   chapters/14-c10k/bench.sh [-f] [-s NAMES] [-c "1 50 500"] [-k "50"] [-r RUNS] [-d SECONDS]
#                             [-o FILE | -A FILE]
#   make bench                      the quick run (the same as no option)
#   make bench BENCH=full           the long run (the same as -f)
#
# From the repository root or anywhere (it builds what it needs). For each
# point, each server in turn: started on port 0, warmed up with 2,000
# echoes, then echo-load for SECONDS with one message in flight per
# connection, every byte checked; the server's CPU time comes from
# /proc/PID/stat before and after. Run r of every server comes before run
# r+1, so noise from elsewhere on the machine hits them all alike.
#
#   points     128-byte messages at each count of -c (default "1 50 500"),
#              and 4 KiB messages at each count of -k (default "50";
#              -k none for no 4 KiB point)
#   quick      (default) 1 run of 1 s per point, then system calls per
#              message: 1 min 50 s for the 19 servers on a 2-core VM
#   -f         (or BENCH=full) 3 runs of 3 s per point (-r, -d change them),
#              then the CPU time per message over 50 x 4,000 messages
#              (bench_cpu), then system calls: many times longer
#   -s NAMES   only these servers, comma-separated: a name from
#              common/servers.txt ("echo-epoll-oneshot"), or the start of
#              names that no server has ("echo-aio": every backend)
#   -o FILE    the CSV (default build/bench/bench-DATE.csv; $BENCH_OUT
#              instead of build/bench)
#   -A FILE    add this run's rows to FILE, a CSV of an earlier run, as its
#              next runs (a "# added:" line says when): runs taken at
#              different times of the day, in one CSV, one median
#
# It prints a table (median of the runs, with the range in brackets) and
# writes the CSV: a "# key: value" header with the machine (kernel, CPU,
# cores, liburing, libuv, gcc, date) and the method, then one row per
# server, point and run: requests/s, p50 and p99 latency, the server's user
# and system CPU time per message, and on the first run's rows at 50
# connections and 128 bytes the system calls per message, counted under strace -f -c
# over 50 x 200 messages. bench-check.sh compares it with baseline.csv and
# charts.sh draws it. With 2 or more CPUs the server runs on CPU 1 and
# echo-load on CPU 0 (taskset), so they do not take turns on one CPU; the
# threaded servers then show what their threads cost on one CPU.
set -euo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$top"
source common/tools/bench-lib.bash
source chapters/14-c10k/lib.bash

full=0 filter="" big="50" csv="" add="" rest=()
case "${BENCH:-quick}" in
quick) ;;
full) full=1 ;;
*) c10k_die 2 "BENCH=$BENCH: quick or full" ;;
esac
while [ $# -gt 0 ]; do
    case "$1" in
    -f) full=1 ;;
    -s | -k | -o | -A)
        [ $# -ge 2 ] || c10k_die 2 "$1 needs a value (-h for help)"
        case "$1" in -s) filter="$2" ;; -k) big="$2" ;; -o) csv="$2" ;; -A) add="$2" ;; esac
        shift ;;
    *) rest+=("$1") ;;
    esac
    shift
done
[ "$big" = none ] && big=""
[[ "$big" =~ ^([1-9][0-9]*( [1-9][0-9]*)*)?$ ]] ||
    c10k_die 2 "-k takes connection counts separated by spaces, or none, not '$big'"
# quick: bench-lib's -q (1 run of 1 s), which the options after it may change
if [ "$full" = 1 ]; then
    bench_args "1 50 500" "1 50 500" ${rest[@]+"${rest[@]}"}
else
    bench_args "1 50 500" "1 50 500" -q ${rest[@]+"${rest[@]}"}
fi

c10k_load_servers "$filter"
c10k_build
c10k_drop_unavailable
c10k_bench_arrays
first_run=1
if [ -n "$add" ]; then
    [ -z "$csv" ] || c10k_die 2 "-A and -o: one or the other"
    grep -q '^server,chapter,kind,conns,msg_bytes,run,' "$add" 2>/dev/null ||
        c10k_die 2 "-A $add: not a CSV written by bench.sh"
    first_run=$(($(awk -F, '!/^#/ && $6 ~ /^[0-9]+$/ && $6 > m { m = $6 } END { print m + 0 }' "$add") + 1))
    csv="$add"
fi
[ -n "$csv" ] || csv=$(c10k_csv_path bench)
[ -n "$add" ] || : >"$csv" || c10k_die 1 "cannot write $csv"
bench_init

# snippet: csv-header
[ -n "$add" ] || {
    c10k_machine
    echo "# method: $([ "$full" = 1 ] && echo full || echo quick), $runs run(s) of $secs s per point;" \
        "${BENCH_PIN_SERVER[*]:+server on CPU 1, echo-load on CPU 0;} one message in flight per connection"
    echo "# user_us_per_msg, sys_us_per_msg: the server's CPU time, /proc/PID/stat before and after each run"
    echo "# syscalls_per_msg: strace -f -c, 50 connections x 200 messages, on a run's first rows at 50 connections, 128 bytes"
    echo "server,chapter,kind,conns,msg_bytes,run,seconds,requests,errors,req_per_s,p50_us,p99_us,max_us,user_us_per_msg,sys_us_per_msg,syscalls_per_msg"
} >"$csv"
# end snippet
rows="$BENCH_TMP/rows"
: >"$rows"

# snippet: measure
# measure I CONNS LEN RUN: one timed run of server I; appends its CSV row
# (without the system calls, measured last) and its req/s, p99 and CPU per
# message to the files the table is printed from.
measure() {
    local i="$1" c="$2" len="$3" run="$4" line u0 s0 u1 s1 reqs errors secs_run rps p50 p99 max
    # shellcheck disable=SC2086 # a command with its arguments
    bench_start "${BENCH_PIN_SERVER[@]}" ${BENCH_CMDS[$i]} -p 0
    "${BENCH_PIN_CLIENT[@]}" "$BENCH_LOAD" -p "$BENCH_PORT" -c 10 -n 200 >/dev/null || true # warm up
    read -r u0 s0 < <(bench_ticks "$BENCH_PID") || u0=0 s0=0
    line=$("${BENCH_PIN_CLIENT[@]}" "$BENCH_LOAD" -p "$BENCH_PORT" -c "$c" -d "$secs" -l "$len" --csv \
        2>"$BENCH_TMP/load.err" | tail -n 1) || true
    read -r u1 s1 < <(bench_ticks "$BENCH_PID") || u1=$u0 s1=$s0 # it died: no CPU figure
    bench_stop
    IFS=, read -r _ _ _ reqs errors secs_run rps _ p50 p99 max <<<"$line"
    if ! [[ "${reqs:-}" =~ ^[0-9]+$ ]]; then
        echo "  (${BENCH_NAMES[$i]}, $c connections: echo-load failed: $(head -n 1 "$BENCH_TMP/load.err"))"
        reqs=0 errors=$c secs_run=0 rps=0 p50=0 p99=0 max=0
    fi
    [ "$errors" = 0 ] || echo "  (${BENCH_NAMES[$i]}, $c connections: $errors errors)"
    awk -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v n="$reqs" -v hz="$hz" \
        -v pre="${BENCH_NAMES[$i]},${C10K_CH[$i]},${C10K_KIND[$i]},$c,$len,$run,$secs_run,$reqs,$errors,$rps,$p50,$p99,$max" \
        'BEGIN { if (n > 0) printf "%s,%.2f,%.2f,\n", pre, u * 1e6 / hz / n, s * 1e6 / hz / n
                 else printf "%s,,,\n", pre }' >>"$rows"
    echo "$rps" >>"$BENCH_TMP/rps.$i"
    echo "$p99" >>"$BENCH_TMP/p99.$i"
    tail -n 1 "$rows" | awk -F, '$14 != "" { printf "%d\n", ($14 + $15) * 100 }' >>"$BENCH_TMP/cpu.$i"
}
# end snippet

hz=$(getconf CLK_TCK)
points=()
for c in $conns; do points+=("$c:128"); done
for c in $big; do points+=("$c:4096"); done

echo "bench: ${#BENCH_NAMES[@]} servers, $runs run(s) of $secs s per point, points (connections:bytes) ${points[*]}"
bench_header "$runs" "$secs" | sed 's/128-byte messages, one in flight/one message in flight/'
echo
printf '%-26s %5s %5s %9s %15s %7s %13s %7s\n' server conns bytes "req/s" "[range]" "p99 us" "[range]" "CPU us"
for point in "${points[@]}"; do
    c=${point%:*} len=${point#*:}
    for ((r = first_run; r < first_run + runs; r++)); do
        for i in "${!BENCH_NAMES[@]}"; do
            measure "$i" "$c" "$len" "$r"
        done
    done
    for i in "${!BENCH_NAMES[@]}"; do
        printf '%-26s %5s %5s %9s %15s %7s %13s %7s\n' "${BENCH_NAMES[$i]}" "$c" "$len" \
            "$(bench_median <"$BENCH_TMP/rps.$i")" "[$(bench_range <"$BENCH_TMP/rps.$i")]" \
            "$(bench_median <"$BENCH_TMP/p99.$i")" "[$(bench_range <"$BENCH_TMP/p99.$i")]" \
            "$(bench_median <"$BENCH_TMP/cpu.$i" | awk '{ printf "%.2f", $1 / 100 }')"
        rm -f "$BENCH_TMP/rps.$i" "$BENCH_TMP/p99.$i" "$BENCH_TMP/cpu.$i"
    done
done

[ "$full" = 1 ] && bench_cpu 50 4000 "$runs"
bench_syscalls 50 200

# The system calls go on this invocation's first run, at 50 connections and 128 bytes.
for i in "${!BENCH_NAMES[@]}"; do
    echo "${BENCH_NAMES[$i]},${BENCH_SYSCALLS[$i]:-}"
done >"$BENCH_TMP/syscalls"
if [ -n "$add" ]; then
    added="run $first_run"
    [ "$runs" = 1 ] || added="runs $first_run-$((first_run + runs - 1))"
    echo "# added: $added, $(date -u +%Y-%m-%dT%H:%M:%SZ), load average $(cut -d' ' -f1-3 /proc/loadavg)" >>"$csv"
fi
awk -F, -v OFS=, -v first="$first_run" 'NR == FNR { sys[$1] = $2; next }
    { if ($4 == 50 && $5 == 128 && $6 == first) $16 = sys[$1]; print }' \
    "$BENCH_TMP/syscalls" "$rows" >>"$csv"

echo
c10k_targets "$csv"
echo
echo "CSV: ${csv#"$top"/} ($(($(grep -vc '^#' "$csv") - 1)) rows); compare it with the baseline: make bench-check"
