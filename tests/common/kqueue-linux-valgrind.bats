#!/usr/bin/env bats
# test-long: runs all nine unit test programs under valgrind (about 40 s)
# kqueue-linux's unit tests (kqueue-linux.bats) again under valgrind's
# memcheck, with --track-fds: no leak, no error, and none of the layer's own
# fds (timerfd, signalfd, eventfd) left open at exit.

load ../helpers/common
UNITS=common/kqueue-linux
load units

setup() { require_kqueue_linux; }

@test "kqueue-linux leaks no memory and no fd, and reads no uninitialised byte (valgrind)" {
    local t
    for t in test-kq-core test-kq-fd test-kq-contract test-kq-reuse test-kq-timer test-kq-timer-heap \
        test-kq-signal test-kq-user test-kq-threads; do
        run_valgrind "$t"
    done
}
