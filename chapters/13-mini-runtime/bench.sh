#!/usr/bin/env bash
# chapters/13-mini-runtime/bench.sh: echo-rt against chapter 08's
# hand-written io_uring server and a plain libuv server (echo-uv): what the
# runtime (futures, tasks, a run queue, tokens) costs over raw completions.
#
#   chapters/13-mini-runtime/bench.sh [-r RUNS] [-d SECONDS] [-c "CONNS..."] [-q]
#
# Defaults: 3 runs of 3 s at 50 and 500 connections (median and range of
# req/s, 128-byte messages, one in flight per connection), then the server's
# CPU time per message (user + system, and the user part alone, from /proc:
# steadier than req/s on a shared machine), then system calls per message
# under strace. -q: one 1 s run at 50 connections, nothing else.
# The server runs on CPU 1 and echo-load on CPU 0 (common/tools/bench-lib.bash).
# io_uring rows are left out where io_uring is not allowed; echo-uv where
# libuv1-dev is not installed.
set -euo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$top"
source common/tools/bench-lib.bash
bench_args "50 500" 50 "$@"

make -s -C common >/dev/null
for ch in 04-epoll 08-io_uring-echo 13-mini-runtime; do
    make -s -C "chapters/$ch" QUIET_WHERE=1 >/dev/null
done
b=build/chapters

bench_init

BENCH_NAMES=() BENCH_CMDS=()
add() { BENCH_NAMES+=("$1") BENCH_CMDS+=("$2"); }
uring=0
RT_BACKEND=uring "$b/13-mini-runtime/rt-test" probe >/dev/null 2>&1 && uring=1
[ "$uring" = 1 ] && add "echo-rt (uring)" "env RT_BACKEND=uring $b/13-mini-runtime/echo-rt"
add "echo-rt (epoll)" "env RT_BACKEND=epoll $b/13-mini-runtime/echo-rt"
[ "$uring" = 1 ] && add "echo-uring (ch 08)" "$b/08-io_uring-echo/echo-uring"
if [ -x "$b/13-mini-runtime/echo-uv" ]; then
    add "echo-uv (libuv $(pkg-config --modversion libuv 2>/dev/null || echo '?'))" "$b/13-mini-runtime/echo-uv"
else
    echo "(no echo-uv: install libuv1-dev, or run make deps, then make)" >&2
fi
add "echo-epoll-lt (ch 04)" "$b/04-epoll/echo-epoll-lt"

# cpu_per_message CONNS PER_CONN RUNS: for each server, the CPU time it
# spends (/proc/PID/stat) while CONNS connections echo PER_CONN messages
# each, in microseconds per message: user + system (median and range), and
# the user part alone (median): the part a runtime adds, since the system
# part is the kernel's TCP work, the same for every server.
cpu_per_message() {
    local conns="$1" per="$2" runs="$3" hz i r u0 s0 u1 s1
    hz=$(getconf CLK_TCK)
    echo
    echo "server CPU time per echoed message: $conns connections x $per messages, median of $runs runs"
    printf '%-26s %14s %14s %14s
' server "us/message" "range" "user us/msg"
    for i in "${!BENCH_NAMES[@]}"; do
        : >"$BENCH_TMP/cpu.$i"
        : >"$BENCH_TMP/user.$i"
        for ((r = 0; r < runs; r++)); do
            # shellcheck disable=SC2086
            bench_start "${BENCH_PIN_SERVER[@]}" ${BENCH_CMDS[$i]} -p 0
            "${BENCH_PIN_CLIENT[@]}" "$BENCH_LOAD" -p "$BENCH_PORT" -c 10 -n 200 >/dev/null # warm up
            read -r u0 s0 < <(awk '{ print $14, $15 }' "/proc/$BENCH_PID/stat")
            "${BENCH_PIN_CLIENT[@]}" "$BENCH_LOAD" -p "$BENCH_PORT" -c "$conns" -n "$per" -l 128 >/dev/null
            read -r u1 s1 < <(awk '{ print $14, $15 }' "/proc/$BENCH_PID/stat")
            bench_stop
            # ticks -> microseconds per message, in hundredths
            echo $(((u1 + s1 - u0 - s0) * 100000000 / hz / (conns * per))) >>"$BENCH_TMP/cpu.$i"
            echo $(((u1 - u0) * 100000000 / hz / (conns * per))) >>"$BENCH_TMP/user.$i"
        done
        printf '%-26s %14s %14s %14s
' "${BENCH_NAMES[$i]}" \
            "$(bench_median <"$BENCH_TMP/cpu.$i" | awk '{ printf "%.2f", $1 / 100 }')" \
            "[$(bench_range <"$BENCH_TMP/cpu.$i" | awk -F- '{ printf "%.2f-%.2f", $1 / 100, $2 / 100 }')]" \
            "$(bench_median <"$BENCH_TMP/user.$i" | awk '{ printf "%.2f", $1 / 100 }')"
    done
}

bench_header "$runs" "$secs"
bench_table "$conns" "$runs" "$secs"
[ "$quick" = 1 ] && exit 0
cpu_per_message 50 4000 "$runs"
bench_syscalls 50 200
