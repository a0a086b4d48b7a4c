#!/usr/bin/env bats
# Chapter 08: echo-uring, multishot accept and recv over a provided buffer ring:
# the shared echo suite. echo-uring-buffers.bats tests the buffer ring itself.

load ../helpers/common
load ../helpers/echo_suite
load suite_extra

setup() {
    SERVER_CMD=("$(chapter_bin echo-uring)")
    require_uring
}

# ---- the shared echo suite ------------------------------------------------------

@test "echo-uring: binary data comes back intact" {
    suite_binary_data
}
@test "echo-uring: 50 clients at once all get their bytes back" {
    suite_many_clients
}
@test "echo-uring: clients that reset do not take the server down" {
    suite_resets
}
@test "echo-uring: a half-closed client gets every byte, then EOF" {
    suite_half_close
}
@test "echo-uring: a 16 MiB payload comes back intact" {
    suite_large_payload
}
@test "echo-uring: SIGTERM with clients connected exits 0" {
    suite_sigterm_with_clients
}
@test "echo-uring: every byte arrives under short reads/writes, EINTR and EAGAIN" {
    skip "the faults shim wraps libc read()/write(); io_uring moves bytes without them (see 'the faults shim sees none'): short sends are forced with SO_SNDBUF in echo-uring-buffers.bats"
}
@test "echo-uring: the faults shim sees none of the echoed bytes (no libc I/O calls)" {
    suite_shim_is_blind
}
@test "echo-uring: client B is served while client A is connected and idle" {
    suite_serves_while_idle
}
@test "echo-uring: a client that never reads does not grow server memory, others are served" {
    suite_never_reading_client
}
@test "echo-uring: an idle server with a connected client does not spin" {
    suite_idle_no_spin
}
@test "echo-uring: running out of fds (EMFILE) is logged, and waiting clients are served later" {
    suite_emfile_recovers
}
@test "echo-uring: out of fds, the multishot accept ends; it neither dies nor spins, and accepts again" {
    suite_fd_limit_no_spin
}
@test "echo-uring: strace shows io_uring_enter() in use and no system calls while idle" {
    suite_syscalls_idle io_uring_enter
}
@test "echo-uring: no read/write/recv/send per message, and far fewer io_uring_enter than messages" {
    # measured here: about 4 per 100 under strace; 25 leaves room for a loaded machine
    suite_uring_syscalls 25
}
