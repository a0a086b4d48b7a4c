#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# chapters/11-one-api/bench.sh: echo-aio on each backend side by side, with the hand-written
# servers of chapters 04 (epoll) and 08 (io_uring) for reference: what the
# one API costs.
#
#   chapters/11-one-api/bench.sh [-r RUNS] [-d SECONDS] [-c "CONNS..."] [-q]
#
# Defaults: 3 runs of 3 s at 50 connections (median and range of req/s,
# 128-byte messages, one in flight per connection), then system calls per
# message under strace. -q: one 1 s run, no strace. The server runs on CPU 1
# and echo-load on CPU 0 (see common/tools/bench-lib.bash). io_uring rows are
# left out where io_uring is not allowed.
set -euo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$top"
source common/tools/bench-lib.bash
bench_args 50 50 "$@"

make -s -C common >/dev/null
for ch in 04-epoll 08-io_uring-echo 11-one-api; do
    make -s -C "chapters/$ch" QUIET_WHERE=1 >/dev/null
done
b=build/chapters

bench_init

BENCH_NAMES=() BENCH_CMDS=()
add() { BENCH_NAMES+=("$1") BENCH_CMDS+=("$2"); }
uring=0
AIO_BACKEND=uring "$b/11-one-api/aio-test" probe >/dev/null 2>&1 && uring=1
[ "$uring" = 1 ] && add "echo-aio (uring)" "env AIO_BACKEND=uring $b/11-one-api/echo-aio"
add "echo-aio (epoll)" "env AIO_BACKEND=epoll $b/11-one-api/echo-aio"
add "echo-aio (kqueue)" "env AIO_BACKEND=kqueue $b/11-one-api/echo-aio"
add "echo-aio (poll)" "env AIO_BACKEND=poll $b/11-one-api/echo-aio"
[ "$uring" = 1 ] && add "echo-uring (ch 08)" "$b/08-io_uring-echo/echo-uring"
add "echo-epoll-lt (ch 04)" "$b/04-epoll/echo-epoll-lt"

bench_header "$runs" "$secs"
bench_table "$conns" "$runs" "$secs"
[ "$quick" = 1 ] && exit 0
bench_syscalls 50 200
