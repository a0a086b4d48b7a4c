#!/usr/bin/env bats
# Chapter 08: echo-uring, multishot accept and recv over a provided buffer ring:
# the event-loop cases. echo-uring-buffers.bats tests the buffer ring itself.

load ../helpers/common
load ../helpers/echo_suite
load suite_extra

setup() { uring_server "$(chapter_bin echo-uring)"; }

# The shared echo suite's cases (binary data, 16 MiB, 200 clients, resets,
# half-close, never-reading client, fd limit, fd growth, idle connections,
# SIGTERM, faults) run from suite-echo-uring.bats, listed in
# common/servers.txt by make suite. What follows is echo-uring's own.

@test "echo-uring: client B is served while client A is connected and idle" {
    suite_serves_while_idle
}
@test "echo-uring: an idle server with a connected client does not spin" {
    suite_idle_no_spin
}
@test "echo-uring: running out of fds (EMFILE) is logged, and waiting clients are served later" {
    suite_emfile_recovers
}
@test "echo-uring: strace shows io_uring_enter() in use and no system calls while idle" {
    suite_syscalls_idle io_uring_enter
}
@test "echo-uring: no read/write/recv/send per message, and far fewer io_uring_enter than messages" {
    # measured here: about 4 per 100 under strace; 25 leaves room for a loaded machine
    suite_uring_syscalls 25
}
