#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench.sh: every echo server of Part II side by side, with the same client
# (echo-load) on the same machine: chapter 03's echo-poll for reference,
# chapter 04's echo-epoll-lt, chapter 05's echo-epoll-et, echo-epoll-oneshot
# and echo-epoll-reuseport (two threads each), and this chapter's
# echo-kqueue on common/kqueue-linux.
#
#   chapters/06-kqueue/bench.sh [-r RUNS] [-d SECONDS] [-c "50 500"] [-q]
#
# From the repository root (it builds what it needs). It prints:
#   1. requests/s and p99 latency for 128-byte messages at each number of
#      connections (-c), the median of RUNS runs (-r, 3) of SECONDS each
#      (-d, 3), with the whole range; the servers take turns, run by run;
#   2. system calls per echoed message: each server under `strace -f -c`
#      while 50 connections echo 10,000 messages (strace slows everything
#      down: read the counts, not the times).
# With 2 or more CPUs every server is pinned to CPU 1 and echo-load to
# CPU 0 (taskset): the threaded servers then show what their threads cost
# on one CPU, not how they scale. -q: one run of 1 s per point, no strace.
set -euo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$top"
source common/tools/bench-lib.bash
bench_args "50 500" "50 500" "$@"

bench_init
bench_servers echo-poll echo-epoll-lt echo-epoll-et echo-epoll-oneshot echo-epoll-reuseport echo-kqueue

bench_header "$runs" "$secs"
bench_table "$conns" "$runs" "$secs"
[ "$quick" = 1 ] && exit 0
bench_syscalls 50 200
