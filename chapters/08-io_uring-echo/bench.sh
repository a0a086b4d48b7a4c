#!/usr/bin/env bash
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
runs=3 secs=3 conns="1 50 500" quick=0
while [ $# -gt 0 ]; do
    case "$1" in
    -r) runs="$2"; shift 2 ;;
    -d) secs="$2"; shift 2 ;;
    -c) conns="$2"; shift 2 ;;
    -q) quick=1 runs=1 secs=1; shift ;;
    -h | --help) sed -n '2,20s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument $1 (-h for help)" >&2; exit 2 ;;
    esac
done

make -s -C common >/dev/null
make -s -C chapters/08-io_uring-echo QUIET_WHERE=1 >/dev/null
ch08=build/chapters/08-io_uring-echo
load=build/common/tools/echo-load
if [ -f chapters/04-epoll/Makefile ] && make -s -C chapters/04-epoll QUIET_WHERE=1 >/dev/null 2>&1 &&
    [ -x build/chapters/04-epoll/echo-epoll-lt ]; then
    epoll=build/chapters/04-epoll/echo-epoll-lt
else
    make -s -C chapters/03-nonblocking QUIET_WHERE=1 >/dev/null
    epoll=build/chapters/03-nonblocking/echo-poll
    echo "(chapter 04's echo-epoll-lt is not there: comparing with chapter 03's echo-poll)"
fi
if ! "$ch08/echo-uring" -K >/dev/null; then
    "$ch08/echo-uring" -K || true
    echo "bench.sh: this machine cannot run the io_uring servers" >&2
    exit 77
fi

tmp="$(mktemp -d)"
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

pin_server=() pin_client=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
    pin_server=(taskset -c 1) pin_client=(taskset -c 0)
fi
# 500 connections: 500 fds in each process, plus a few
ulimit -n 4096 2>/dev/null || true

# start NAME CMD...: run a server in the background, set server_pid and port.
start() {
    local i
    : >"$tmp/out" # not the last server's line: the new one may not have written yet
    "$@" >"$tmp/out" 2>"$tmp/err" &
    server_pid=$!
    for ((i = 0; i < 100; i++)); do
        port=$(sed -n 's/^listening on [0-9.]*:\([0-9]*\)$/\1/p' "$tmp/out")
        [ -n "$port" ] && return 0
        sleep 0.05
    done
    echo "bench.sh: $* did not start: $(cat "$tmp/err")" >&2
    exit 1
}
stop() {
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}

# median and range of the numbers on stdin
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%d", v[int((NR + 1) / 2)] }'; }
range() { sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%d-%d", lo, hi }'; }

# A server is its path and arguments; echo-uring -D runs without deferred
# task work, to show what IORING_SETUP_DEFER_TASKRUN changes.
names=("$(basename "$epoll")" echo-uring-basic echo-uring "echo-uring -D" echo-uring-sqpoll)
bins=("$epoll" "$ch08/echo-uring-basic" "$ch08/echo-uring" "$ch08/echo-uring -D" "$ch08/echo-uring-sqpoll")

echo "$(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs;" \
    "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "${pin_server[*]:+server on CPU 1, echo-load on CPU 0; }128-byte messages, one in flight per connection;" \
    "median of $runs run(s) of $secs s, range in brackets; the servers take turns, run by run"
echo
printf '%-20s %6s %22s %22s\n' server conns "requests/s" "p99 latency (us)"
for c in $conns; do
    # Run r of every server, then run r+1: a burst of noise from elsewhere on
    # the machine then hits them all alike, not one server's every run.
    for ((r = 0; r < runs; r++)); do
        for i in "${!names[@]}"; do
            start "${pin_server[@]}" ${bins[$i]} -p 0
            "${pin_client[@]}" "$load" -p "$port" -c 10 -n 200 >/dev/null # warm up
            line=$("${pin_client[@]}" "$load" -p "$port" -c "$c" -d "$secs" -l 128 --csv | tail -n 1)
            stop
            IFS=, read -r _ _ _ _ errors _ rps _ _ p99 _ <<<"$line"
            [ "$errors" = 0 ] || echo "  (${names[$i]}, $c connections: $errors errors)"
            echo "$rps" >>"$tmp/rps.$i"
            echo "$p99" >>"$tmp/p99.$i"
        done
    done
    for i in "${!names[@]}"; do
        printf '%-20s %6s %10s %11s %10s %11s\n' "${names[$i]}" "$c" \
            "$(median <"$tmp/rps.$i")" "[$(range <"$tmp/rps.$i")]" \
            "$(median <"$tmp/p99.$i")" "[$(range <"$tmp/p99.$i")]"
        rm -f "$tmp/rps.$i" "$tmp/p99.$i"
    done
done

[ "$quick" = 1 ] && exit 0
if ! command -v strace >/dev/null; then
    echo "(strace is not installed: no system call counts)"
    exit 0
fi

echo
echo "system calls per echoed message: 50 connections x 200 messages = 10,000, under strace -f -c"
echo "(the server's start and stop, measured alone, are subtracted)"
printf '%-20s %10s %12s %16s %8s\n' server "per msg" io_uring_enter "epoll_wait+poll" "rd/wr"
calls() { # calls FILE NAME...: total of those calls in an strace -c summary ("total" for all)
    local f="$1"
    shift
    awk -v names=" $* " 'index(names, " " $NF " ") && $4 ~ /^[0-9]+$/ { n += $4 } END { print n + 0 }' "$f"
}
for i in "${!names[@]}"; do
    name=${names[$i]}
    for phase in idle load; do
        start strace -f -c -o "$tmp/strace.$phase" ${bins[$i]} -p 0
        [ "$phase" = load ] && "$load" -p "$port" -c 50 -n 200 -l 128 >/dev/null
        kill -TERM "$(pgrep -P "$server_pid" | head -n 1)"
        wait "$server_pid" || true
        server_pid=""
    done
    total=$(($(calls "$tmp/strace.load" total) - $(calls "$tmp/strace.idle" total)))
    printf '%-20s %10s %12s %16s %8s\n' "$name" "$(awk -v t="$total" 'BEGIN { printf "%.3f", t / 10000 }')" \
        "$(calls "$tmp/strace.load" io_uring_enter)" \
        "$(calls "$tmp/strace.load" epoll_wait epoll_pwait poll ppoll)" \
        "$(calls "$tmp/strace.load" read write recvfrom sendto readv writev)"
done

echo
echo "echo-uring-sqpoll: CPU time of its kernel thread (iou-sqp), sq_thread_idle 1000 ms"
sqp_ticks() { # user+system ticks of the iou-sqp thread, and of the whole process
    local t stat sqp=0 all
    for t in /proc/"$server_pid"/task/*; do
        [ "$(cat "$t/comm")" = "iou-sqp-$server_pid" ] || continue
        stat=$(cat "$t/stat")
        set -- ${stat##*) }
        sqp=$((${12} + ${13}))
    done
    stat=$(cat "/proc/$server_pid/stat")
    set -- ${stat##*) }
    all=$((${12} + ${13}))
    echo "$sqp $all"
}
hz=$(getconf CLK_TCK)
start "${pin_server[@]}" "$ch08/echo-uring-sqpoll" -p 0
"$load" -p "$port" -c 1 -n 10 >/dev/null
read -r s0 a0 < <(sqp_ticks)
sleep 1
read -r s1 a1 < <(sqp_ticks)
sleep 3
read -r s2 a2 < <(sqp_ticks)
"${pin_client[@]}" "$load" -p "$port" -c 50 -d 3 -l 128 >/dev/null
read -r s3 a3 < <(sqp_ticks)
echo "  first second after the last request: iou-sqp $(((s1 - s0) * 100 / hz))% of a CPU (process: $(((a1 - a0) * 100 / hz))%)"
echo "  the next 3 s, idle:                   iou-sqp $(((s2 - s1) * 100 / hz / 3))% (process: $(((a2 - a1) * 100 / hz / 3))%)"
echo "  3 s of echo-load -c 50:               iou-sqp $(((s3 - s2) * 100 / hz / 3))% (process: $(((a3 - a2) * 100 / hz / 3))%)"
for t in /proc/"$server_pid"/task/*; do
    echo "  thread $(cat "$t/comm") may run on CPUs $(sed -n 's/^Cpus_allowed_list:\s*//p' "$t/status")"
done
stop
