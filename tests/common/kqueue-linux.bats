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

load ../helpers/common
UNITS=common/kqueue-linux
load units

setup() { require_kqueue_linux; }

@test "kevent(): EV_ERROR and EV_RECEIPT, ENOENT, EBADF, EINVAL, one call for changes and events, timeouts, EINTR" {
    run_unit test-kq-core
}

@test "EVFILT_READ/WRITE: data, EV_EOF and fflags, listeners, two knotes on one epoll registration, close(), no NOTE_LOWAT" {
    run_unit test-kq-fd
}

@test "every filter keeps kqueue(2)'s contract: add, delete, ENOENT, enable, disable, oneshot, dispatch, receipt, udata, modify, draining, two kqueues, EV_CLEAR" {
    run_unit test-kq-contract
}

@test "EVFILT_READ/WRITE: a new fd on the number of a deleted, one-shot-fired or closed one reports its own data (listener, socket, pipe, eventfd)" {
    run_unit test-kq-reuse
}

@test "EVFILT_TIMER: periodic and EV_ONESHOT, EV_CLEAR on its events, units, data counts expirations, re-adding restarts, NOTE_ABSTIME" {
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

@test "four threads in kevent() on one kqueue: an EV_CLEAR, EV_ONESHOT or EV_DISPATCH event is delivered once, for every filter" {
    run_unit test-kq-threads
}
