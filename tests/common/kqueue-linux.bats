#!/usr/bin/env bats
# Unit tests of common/kqueue-linux, kqueue(2) for Linux. The checks are C
# programs in common/kqueue-linux/tests/ that print the expected and the
# actual value of every failed check; this file runs them, plainly and under
# valgrind. A program that exits 77 cannot run here: its stderr is the reason
# the test is skipped.
#
#   make -C common/kqueue-linux && bats tests/common/kqueue-linux.bats
#   make -C common/kqueue-linux SAN=address,undefined &&
#       BUILD=$PWD/build/san-address-undefined bats tests/common/kqueue-linux.bats

bats_require_minimum_version 1.5.0 # run --separate-stderr

load ../helpers/common

setup() {
    [ "$(uname -s)" = Linux ] || skip "kqueue-linux is for Linux; $(uname -s) has kqueue itself"
}

# run_unit NAME [WRAPPER...]: run build/.../common/kqueue-linux/tests/NAME.
run_unit() {
    local bin="$BUILD/common/kqueue-linux/tests/$1"
    shift
    require_bin "$bin" common/kqueue-linux
    run --separate-stderr timeout 300 "$@" "$bin"
    if [ "$status" -eq 77 ]; then
        skip "${bin#"$TOP"/}: $stderr"
    fi
    if [ "$status" -ne 0 ]; then
        fail "$(printf '%s exited with status %d, expected 0\n--- stdout\n%s\n--- stderr\n%s' \
            "${bin#"$TOP"/}" "$status" "$output" "$stderr")"
    fi
}

require_valgrind() {
    case "$BUILD" in
    */san-*) skip "valgrind does not run sanitized binaries (BUILD=${BUILD#"$TOP"/})" ;;
    esac
    command -v valgrind >/dev/null || skip "valgrind is not installed (apt-get install valgrind)"
}

# --track-fds: the layer's own fds (timerfd, signalfd, eventfd) must all be
# closed at exit; only what the test runner handed down may be left.
run_valgrind() {
    require_valgrind
    local log="$BATS_TEST_TMPDIR/valgrind.log"
    run_unit "$1" valgrind -q --error-exitcode=1 --leak-check=full --track-fds=yes --log-file="$log"
    # valgrind lists each fd open at exit, then where it came from
    local open inherited
    open=$(grep -c 'Open file descriptor' "$log" || true)
    inherited=$(grep -c 'inherited from parent' "$log" || true)
    [ "$open" -eq "$inherited" ] ||
        fail "$1: file descriptors left open at exit, expected only inherited ones:
$(cat "$log")"
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

@test "kqueue-linux leaks no memory and no fd, and reads no uninitialised byte (valgrind)" {
    local t
    for t in test-kq-core test-kq-fd test-kq-timer test-kq-timer-heap test-kq-signal test-kq-user; do
        run_valgrind "$t"
    done
}
