#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Chapter 08: sendzc-cost, io_uring's send against its zero-copy send over
# loopback TCP. What the tests hold to is behaviour, not speed: both modes
# move every byte, send_zc posts a notification CQE per send, and on loopback
# the kernel says it copied anyway. The CPU figures are printed, not judged.

bats_require_minimum_version 1.5.0
load ../helpers/common

setup() {
    ZC="$(chapter_bin sendzc-cost)"
}

# Run sendzc-cost; skip where io_uring or IORING_OP_SEND_ZC is refused.
zc_run() {
    run timeout 120 "$ZC" "$@"
    [ "$status" -ne 77 ] || skip "$output"
    assert_success
}

@test "sendzc-cost sends every byte both ways and reports the CPU time of each side" {
    zc_run -s 64 -t 8 -r 1
    sed "s/^/# /" <<<"$output" >&3
    assert_output --partial "sendzc-cost: 8 MiB over loopback TCP in 64 KiB messages"
    assert_output --regexp "  send +CPU: sender [0-9.]+ s, receiver [0-9.]+ s, both [0-9.]+ s = [0-9.]+ ns/byte"
    assert_output --regexp "  send_zc +CPU: sender [0-9.]+ s, receiver [0-9.]+ s, both [0-9.]+ s = [0-9.]+ ns/byte"
}

@test "a plain send posts one CQE per send, at least one per 64 KiB message" {
    zc_run -s 64 -t 8 -r 1
    local cqes
    cqes=$(sed -n 's/^ *\([0-9]*\) CQEs: one per send$/\1/p' <<<"$output")
    [ -n "$cqes" ] || fail "no CQE line for send in: $output"
    [ "$cqes" -ge 128 ] || fail "expected 128 sends or more (8 MiB / 64 KiB), got $cqes"
}

@test "send_zc posts two CQEs per send: the result, then the notification" {
    zc_run -s 64 -t 8 -r 1
    local line results notifs cqes
    line=$(grep -E '^ +[0-9]+ CQEs: [0-9]+ results and [0-9]+ notifications' <<<"$output") ||
        fail "no CQE line for send_zc in: $output"
    read -r cqes results notifs < <(sed -E 's/^ *([0-9]+) CQEs: ([0-9]+) results and ([0-9]+) notifications.*/\1 \2 \3/' <<<"$line")
    [ "$results" -ge 128 ] || fail "expected 128 results or more, got $results"
    [ "$notifs" -eq "$results" ] || fail "expected one notification per result: $results results, $notifs notifications"
    [ "$cqes" -eq $((results + notifs)) ] || fail "CQEs $cqes != $results + $notifs"
}

@test "on loopback every zero-copy send is copied after all, as msg_zerocopy.rst says" {
    zc_run -s 64 -t 8 -r 1
    if grep -q "cannot say if it copied" <<<"$output"; then
        skip "this kernel has no IORING_SEND_ZC_REPORT_USAGE"
    fi
    local line notifs copied
    line=$(grep -E 'notifications; [0-9]+ of these say the kernel copied' <<<"$output") ||
        fail "no usage report in: $output"
    notifs=$(sed -E 's/.* and ([0-9]+) notifications;.*/\1/' <<<"$line")
    copied=$(sed -E 's/.*notifications; ([0-9]+) of these.*/\1/' <<<"$line")
    [ "$copied" -eq "$notifs" ] || fail "expected all $notifs notifications to say copied, got $copied"
}

@test "sendzc-cost: -h, and bad arguments exit 2" {
    run "$ZC" -h
    assert_success
    assert_output --partial "usage: sendzc-cost"
    run "$ZC" -s 1
    assert_failure 2
    run "$ZC" -r 0
    assert_failure 2
    run "$ZC" extra
    assert_failure 2
}

@test "under a seccomp filter (no-uring) sendzc-cost exits 77 and says why" {
    local nouring="$BUILD/chapters/07-io_uring-basics/no-uring"
    require_bin "$nouring" chapters/07-io_uring-basics
    run "$nouring" "$ZC" -t 1
    assert_failure 77
    assert_output --partial "seccomp"
}
