#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
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

bench_init
bench_servers echo-rt-uring echo-rt-epoll echo-uring echo-uv echo-epoll-lt

bench_header "$runs" "$secs"
bench_table "$conns" "$runs" "$secs"
[ "$quick" = 1 ] && exit 0
bench_cpu 50 4000 "$runs"
bench_syscalls 50 200
