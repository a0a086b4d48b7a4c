#!/usr/bin/env bats
# Unit tests of common/kqueue-linux, kqueue(2) for Linux. The checks are C
# programs in common/kqueue-linux/tests/ that print the expected and the
# actual value of every failed check; this file runs them, and
# kqueue-linux-valgrind.bats (in make test-long) runs them under valgrind. A
# program that exits 77 cannot run here: its stderr is the reason the test
# is skipped.
#
#   make -C common/kqueue-linux && bats tests/common/kqueue-linux.bats
#   make -C common/kqueue-linux SAN=address,undefined &&
#       BUILD=$PWD/build/san-address-undefined bats tests/common/kqueue-linux.bats

bats_require_minimum_version 1.5.0 # run --separate-stderr

load ../helpers/common
UNITS=common/kqueue-linux
load units

setup() {
    [ "$(uname -s)" = Linux ] || skip "kqueue-linux is for Linux; $(uname -s) has kqueue itself"
}

@test "kevent(): EV_ERROR and EV_RECEIPT, ENOENT, EBADF, EINVAL, one call for changes and events, timeouts, EINTR" {
    run_unit test-kq-core
}

@test "EVFILT_READ/WRITE: data, EV_EOF and fflags, listeners, two knotes on one epoll registration, close()" {
    run_unit test-kq-fd
}

@test "EVFILT_TIMER: periodic and EV_ONESHOT, units, data counts expirations, re-adding restarts" {
    run_unit test-kq-timer
}

@test "EVFILT_TIMER: 10,000 timers on one timerfd fire in deadline order, also with timers deleted from the middle; data per timer" {
    run_unit test-kq-timer-heap
}

@test "EVFILT_SIGNAL: ignored signals are seen, the mask is managed, data counts deliveries" {
    run_unit test-kq-signal
}

@test "EVFILT_USER: NOTE_TRIGGER, EV_CLEAR, NOTE_FFAND/FFOR/FFCOPY, a wake-up from another thread" {
    run_unit test-kq-user
}
