#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Chapter 07: uring-iopoll, polled I/O (IORING_SETUP_IOPOLL). Whether a disk
# can be polled depends on the machine, so the tests accept either answer,
# check that it agrees with what the device says in sysfs, and print which
# one this machine gave.

bats_require_minimum_version 1.5.0
load ../helpers/common
load uring

setup_file() {
    uring_setup_file
}

setup() {
    uring_require
    IOPOLL="$(chapter_bin uring-iopoll)"
    DATA="$BATS_TEST_TMPDIR/iopoll.dat"
    head -c $((1024 * 1024)) /dev/urandom >"$DATA"
}

# Run uring-iopoll on $DATA; skip where the filesystem has no O_DIRECT.
iopoll_run() {
    run timeout 60 "$IOPOLL" "$@" "$DATA"
    if [ "$status" -eq 77 ]; then
        skip "uring-iopoll: ${output##*: }"
    fi
    assert_success
}

@test "a buffered read on an IOPOLL ring fails with EOPNOTSUPP: polling needs O_DIRECT" {
    iopoll_run -n 8
    assert_output --partial "IOPOLL ring, buffered read:  -95 (EOPNOTSUPP)"
}

@test "an O_DIRECT read on an IOPOLL ring is polled or refused, as the device's io_poll says" {
    iopoll_run -n 8
    local verdict io_poll
    verdict=$(grep '^IOPOLL' <<<"$output") || fail "no verdict line in: $output"
    io_poll=$(sed -n 's|^  /sys/block/.*/queue/io_poll: \([01]\).*|\1|p' <<<"$output")
    echo "# this machine: ${verdict} (io_poll ${io_poll:-absent})" >&3
    case "$verdict" in
    "IOPOLL refused"*)
        assert_output --partial "IOPOLL ring, O_DIRECT read:  -95 (EOPNOTSUPP)"
        [ "$io_poll" != 1 ] || fail "the device polls (io_poll 1), yet the read was refused"
        ;;
    "IOPOLL works"*)
        [ "$io_poll" = 1 ] || fail "polled without poll queues? io_poll is '$io_poll'"
        assert_output --regexp "polled \(IOPOLL\): +8 reads"
        ;;
    "IOPOLL accepted but not polled"*)
        [ "$io_poll" = 0 ] || fail "'not polled' on a device whose io_poll is '$io_poll'"
        ;;
    *) fail "unexpected verdict: $verdict" ;;
    esac
}

@test "uring-iopoll times the interrupt-driven reads, with the CPU they cost" {
    iopoll_run -n 16
    assert_output --regexp "interrupt-driven: +16 reads, [0-9.]+ us each, [0-9.]+ us of CPU each"
}

@test "uring-iopoll: -h, bad arguments, a missing file, a file too small" {
    run "$IOPOLL" -h
    assert_success
    assert_output --partial "usage: uring-iopoll"
    run "$IOPOLL"
    assert_failure 2
    run "$IOPOLL" -n 0 "$DATA"
    assert_failure 2
    run "$IOPOLL" "$BATS_TEST_TMPDIR/missing"
    assert_failure 1
    assert_output --partial "open($BATS_TEST_TMPDIR/missing): No such file or directory"
    printf 'short' >"$BATS_TEST_TMPDIR/small"
    run "$IOPOLL" "$BATS_TEST_TMPDIR/small"
    assert_failure 1
    assert_output --partial "need a regular file of 4096 bytes or more"
}

@test "under a seccomp filter (no-uring) uring-iopoll exits 77 and says why" {
    run "$(chapter_bin no-uring)" "$IOPOLL" "$DATA"
    assert_failure 77
    assert_output --partial "seccomp"
}

@test "under a seccomp filter that answers ENOSYS (Podman's way) uring-iopoll blames the filter, not the kernel" {
    run "$(chapter_bin no-uring)" -e ENOSYS "$IOPOLL" "$DATA"
    assert_failure 77
    assert_output --partial "ENOSYS: this kernel"
    assert_output --partial "has io_uring, but a seccomp filter answers ENOSYS"
    run "$(chapter_bin no-uring)" -e EINVAL "$IOPOLL" "$DATA"
    assert_failure 2
    assert_output --partial "EPERM or ENOSYS"
}
