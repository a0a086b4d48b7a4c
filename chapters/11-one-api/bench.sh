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

bench_init
bench_servers echo-aio-uring echo-aio-epoll echo-aio-kqueue echo-aio-poll echo-uring echo-epoll-lt

bench_header "$runs" "$secs"
bench_table "$conns" "$runs" "$secs"
[ "$quick" = 1 ] && exit 0
bench_syscalls 50 200
