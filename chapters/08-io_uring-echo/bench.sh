#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench.sh: chapter 08's io_uring servers against chapter 04's epoll server,
# with the same client (echo-load) on the same machine.
#
#   chapters/08-io_uring-echo/bench.sh [-r RUNS] [-d SECONDS] [-c "1 50 500"] [-q]
#
# From the repository root (it builds what it needs). It prints:
#   1. requests/s and p99 latency for 128-byte messages at each number of
#      connections (-c), the median of RUNS runs (-r, 3) of SECONDS each
#      (-d, 3), with the whole range, for echo-epoll-lt (or chapter 03's
#      echo-poll, when chapter 04 is not there), echo-uring-basic,
#      echo-uring, echo-uring -D (without deferred task work) and
#      echo-uring-sqpoll, taking turns run by run;
#   2. system calls per echoed message: each server under `strace -f -c`
#      while 50 connections echo 10,000 messages (strace slows everything
#      down: read the counts, not the times);
#   3. the CPU time of echo-uring-sqpoll's kernel thread (iou-sqp), idle and
#      under load.
# With 2 or more CPUs the server runs on CPU 1 and echo-load on CPU 0
# (taskset). -q: one run of 1 s per point and no strace, to try it quickly.
set -euo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$top"
source common/tools/bench-lib.bash
bench_args "1 50 500" "1 50 500" "$@"

make -s -C common >/dev/null
make -s -C chapters/08-io_uring-echo QUIET_WHERE=1 >/dev/null
ch08=build/chapters/08-io_uring-echo
if ! "$ch08/echo-uring" -K >/dev/null; then
    "$ch08/echo-uring" -K || true
    echo "bench.sh: this machine cannot run the io_uring servers" >&2
    exit 77
fi

bench_init
bench_servers echo-epoll-lt echo-uring-basic echo-uring echo-uring-sqpoll
# and echo-uring -D, without deferred task work, to show what
# IORING_SETUP_DEFER_TASKRUN changes
BENCH_NAMES=("${BENCH_NAMES[@]:0:3}" "echo-uring -D" "${BENCH_NAMES[@]:3}")
BENCH_CMDS=("${BENCH_CMDS[@]:0:3}" "$ch08/echo-uring -D" "${BENCH_CMDS[@]:3}")

bench_header "$runs" "$secs"
bench_table "$conns" "$runs" "$secs"
[ "$quick" = 1 ] && exit 0
bench_syscalls 50 200

echo
echo "echo-uring-sqpoll: CPU time of its kernel thread (iou-sqp), sq_thread_idle 1000 ms"
sqp_ticks() { # user+system ticks of the iou-sqp thread, and of the whole process
    local t stat sqp=0 all
    for t in /proc/"$BENCH_PID"/task/*; do
        [ "$(cat "$t/comm")" = "iou-sqp-$BENCH_PID" ] || continue
        stat=$(cat "$t/stat")
        set -- ${stat##*) }
        sqp=$((${12} + ${13}))
    done
    stat=$(cat "/proc/$BENCH_PID/stat")
    set -- ${stat##*) }
    all=$((${12} + ${13}))
    echo "$sqp $all"
}
hz=$(getconf CLK_TCK)
bench_start "${BENCH_PIN_SERVER[@]}" "$ch08/echo-uring-sqpoll" -p 0
"$BENCH_LOAD" -p "$BENCH_PORT" -c 1 -n 10 >/dev/null
read -r s0 a0 < <(sqp_ticks)
sleep 1
read -r s1 a1 < <(sqp_ticks)
sleep 3
read -r s2 a2 < <(sqp_ticks)
"${BENCH_PIN_CLIENT[@]}" "$BENCH_LOAD" -p "$BENCH_PORT" -c 50 -d 3 -l 128 >/dev/null
read -r s3 a3 < <(sqp_ticks)
echo "  first second after the last request: iou-sqp $(((s1 - s0) * 100 / hz))% of a CPU (process: $(((a1 - a0) * 100 / hz))%)"
echo "  the next 3 s, idle:                   iou-sqp $(((s2 - s1) * 100 / hz / 3))% (process: $(((a2 - a1) * 100 / hz / 3))%)"
echo "  3 s of echo-load -c 50:               iou-sqp $(((s3 - s2) * 100 / hz / 3))% (process: $(((a3 - a2) * 100 / hz / 3))%)"
for t in /proc/"$BENCH_PID"/task/*; do
    echo "  thread $(cat "$t/comm") may run on CPUs $(sed -n 's/^Cpus_allowed_list:\s*//p' "$t/status")"
done
bench_stop
