#!/usr/bin/env bats
# Exercise 07-io_uring-basics/probe-refusal: uring-probe says why io_uring is
# refused, in words, and exits 77 (skip) so that a caller can skip politely.
# Runs against $IMPL (solutions by default: the chapter's own uring-probe.c).
# no-uring installs the seccomp filter Docker's default profile amounts to.

bats_require_minimum_version 1.5.0
load ../helpers/common
load ../helpers/echo_suite # require_strace
load uring

setup_file() { uring_setup_file; }

setup() {
    PROBE="$(impl_bin probe-refusal uring-probe)"
    NO_URING="$(impl_bin probe-refusal no-uring)"
}

@test "probe-refusal: under a seccomp filter, uring-probe --check prints one line that blames seccomp, and exits 77" {
    uring_require # where it is refused already, the reason is another one
    run --separate-stderr "$NO_URING" "$PROBE" --check
    [ "$status" -eq 77 ] || fail "expected exit 77 (skip) under no-uring, got $status: $output $stderr"
    # a script reads the reason from stdout (out=$(uring-probe --check))
    [ "${#lines[@]}" -eq 1 ] && [ -z "$stderr" ] ||
        fail "expected one line on stdout and nothing on stderr, got stdout: '$output', stderr: '$stderr'"
    assert_output --partial "io_uring is not usable here: io_uring_setup: EPERM: a seccomp filter forbids it"
    assert_output --partial "security-opt seccomp"
}

@test "probe-refusal: under a filter that answers ENOSYS (Podman's), --check blames the filter, not the kernel, and exits 77" {
    uring_require
    run "$NO_URING" -e ENOSYS "$PROBE" --check
    [ "$status" -eq 77 ] || fail "expected exit 77 (skip) under no-uring -e ENOSYS, got $status: $output"
    [ "${#lines[@]}" -eq 1 ] || fail "expected one line, got ${#lines[@]}: $output"
    assert_output --partial "io_uring is not usable here: io_uring_setup: ENOSYS: a seccomp filter"
    refute_output --partial "this kernel has no io_uring"
}

@test "probe-refusal: with kernel.io_uring_disabled at 1 or at 2, --check blames the sysctl before a seccomp filter" {
    local v
    uring_require
    # A private mount namespace (an unprivileged user namespace) lays a file
    # over the sysctl, so the probe reads 1 or 2 without changing the machine.
    unshare -rm true 2>/dev/null || skip "unprivileged user namespaces are refused here (unshare -rm)"
    for v in 1 2; do
        echo "$v" >"$BATS_TEST_TMPDIR/sysctl"
        run unshare -rm sh -c 'mount --bind "$1" /proc/sys/kernel/io_uring_disabled && exec "$2" "$3" --check' \
            sh "$BATS_TEST_TMPDIR/sysctl" "$NO_URING" "$PROBE"
        [ "$status" -eq 77 ] || fail "expected exit 77 with the sysctl at $v, got $status: $output"
        [[ "$output" == "io_uring is not usable here: io_uring_setup: EPERM: the sysctl kernel.io_uring_disabled forbids it"* ]] ||
            fail "with kernel.io_uring_disabled at $v: expected 'io_uring is not usable here: io_uring_setup: EPERM: the sysctl kernel.io_uring_disabled forbids it...', got: $output"
    done
}

@test "probe-refusal: under a seccomp filter, the full report says refused, and why, and exits 77" {
    uring_require
    run "$NO_URING" "$PROBE"
    [ "$status" -eq 77 ] || fail "expected exit 77 (skip) under no-uring, got $status: $output"
    assert_output --partial "seccomp of this process:  2"
    assert_output --partial "refused: EPERM: a seccomp filter forbids it"
}

@test "probe-refusal: where io_uring works, uring-probe --check says so in one line and exits 0" {
    uring_require
    run "$PROBE" --check
    assert_success
    assert_output --regexp "^io_uring works here \(Linux .*, features 0x[0-9a-f]+\)$"
}

@test "probe-refusal: where io_uring works, --check tears its ring down: the fd io_uring_setup returned is closed" {
    local fd
    uring_require
    require_strace
    strace_run -qq -e trace=io_uring_setup,close -o "$BATS_TEST_TMPDIR/trace" "$PROBE" --check >/dev/null ||
        fail "uring-probe --check under strace: exit $?"
    fd=$(sed -n 's/^io_uring_setup(.*) = \([0-9]*\)$/\1/p' "$BATS_TEST_TMPDIR/trace" | tail -n 1)
    [ -n "$fd" ] || fail "no successful io_uring_setup() in the trace: $(cat "$BATS_TEST_TMPDIR/trace")"
    sed -n "/^io_uring_setup(.*) = $fd\$/,\$p" "$BATS_TEST_TMPDIR/trace" | grep -q "^close($fd) " ||
        fail "the ring's fd $fd was never closed: io_uring_queue_exit() tears a ring down (its memory and its fd)"
}
