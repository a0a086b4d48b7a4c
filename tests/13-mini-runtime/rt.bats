#!/usr/bin/env bats
# Chapter 13: the runtime's unit tests (rt-test, one group per test), each
# run on every backend this machine has: io_uring (where allowed), epoll,
# and kqueue through common/kqueue-linux. rt-test exits 0 when every check
# passed, 77 when a backend cannot run here, anything else on a failure.

load ../helpers/common

# rt_test GROUP [ARGS]: run the group on each backend; a backend that exits
# 77 (io_uring forbidden) is noted, not failed.
rt_test() {
    local be bin
    bin="$(chapter_bin rt-test)"
    for be in uring epoll kqueue; do
        RT_BACKEND=$be run timeout 60 "$bin" "$@"
        if [ "$status" -eq 77 ]; then
            echo "# $be: not here: $output" >&3
            continue
        fi
        echo "$output" | sed "s/^/# $be: /" >&3
        [ "$status" -eq 0 ] || fail "rt-test $* on $be: exit $status
$output"
        assert_output --partial "backend $be"
        assert_output --partial "all checks passed"
    done
}

@test "timers fire in deadline order (300, 100, 200, 50 ms), none early; equal deadlines in the order they were armed" {
    rt_test timers
}
@test "a timer cancelled from the middle of the heap leaves it at once with -ECANCELED; cancelling after it fired changes nothing" {
    rt_test timer-cancel
}
@test "rt__timer_remove takes any timer out of a full heap and leaves one not in it alone; 300 removals in a scrambled order keep the heap ordered" {
    rt_test heap-remove
    rt_test heap-order
}
@test "when_all of 200, 150 and 180 ms completes after about 200 ms, not 530; a failed child's error comes out once all are done" {
    rt_test when-all
}
@test "when_any completes with the index of the first child to finish; the others still finish and nothing leaks" {
    rt_test when-any
}
@test "cancelling a token cancels its children and grandchildren, not other tokens; cancel_after ends a 10 s delay after about 100 ms" {
    rt_test tokens
}
@test "a token's cancel calls each registration still registered exactly once, whatever the cancel functions do to the list, and refuses new work under the token" {
    rt_test cancel-walk
    rt_test cancel-refuses
}
@test "a continuation runs once, from the run queue, whether its future completes later or had completed before it was handed over" {
    rt_test continuations
}
@test "a combinator whose caller let go before its children finished frees itself after its last arm and releases every child" {
    rt_test when-lifetimes
}
@test "a recv and an accept cancelled in flight complete with -ECANCELED in the backend itself, and the socket still works" {
    rt_test cancel-io
}
@test "rt_recv_pooled holds no buffer while it waits, yields the bytes in a pool buffer, none when cancelled, dropped or at EOF" {
    rt_test pooled
    assert_output --partial 'rt_recv_pooled: 0 buffers held while it waited; res 5, "hello", 1 held'
    assert_output --partial "rt_recv_pooled cancelled: res -125 (Operation canceled), buf NULL, 0 held"
    assert_output --partial "rt_recv_pooled dropped, then 5 bytes: 0 in flight, 0 buffers held, buf NULL"
}
@test "an error (-ECONNREFUSED) travels through awaits and when_all to the task that awaits it" {
    rt_test errors
}
@test "a task that fails with nobody awaiting it is reported on stderr when it is freed (the async void lesson)" {
    rt_test unobserved
    assert_output --partial "task connector_step failed (Connection refused) and nobody awaited it"
}
@test "a chain of 100000 tasks each awaiting the one before completes: continuations are trampolined through the run queue" {
    rt_test chain 100000
}
@test "the same chain with continuations called inline (no trampoline) overflows a 2 MiB stack" {
    run bash -c "ulimit -s 2048; RT_INLINE_CONTINUATIONS=1 exec timeout 60 '$(chapter_bin rt-test)' chain 100000"
    echo "exit $status: ${output:0:300}" | sed "s/^/# /" >&3
    [ "$status" -ne 0 ] || fail "expected a crash, got exit 0: $output"
    [ "$status" -ne 124 ] || fail "expected a crash, got a timeout"
    refute_output --partial "all checks passed"
}
@test "rt_block_on from inside a task is refused with a clear message instead of deadlocking (the .Result lesson)" {
    rt_test block-on-inside
    assert_output --partial "rt_block_on() called from inside the loop"
}
@test "awaiting a promise nobody can complete is reported as a deadlock naming the task, not a hang" {
    rt_test deadlock
    assert_output --partial "rt: deadlock"
    assert_output --partial "task link_step awaits a promise nobody completes"
}
@test "SIGTERM cancels the root token: tasks waiting 60 s on it and on a child token finish at once" {
    rt_test shutdown
}
@test "rt_run_blocking runs 4 calls of 100 ms in parallel on the pool; a queued call cancelled never runs; rt_read_file returns the file's bytes" {
    rt_test offload
}
@test "RT_TRACE=1 shows rt_read_file natively on io_uring and on a pool thread on epoll and kqueue" {
    local be bin
    bin="$(chapter_bin rt-test)"
    for be in uring epoll kqueue; do
        RT_TRACE=1 RT_BACKEND=$be run timeout 60 "$bin" offload
        [ "$status" -ne 77 ] || continue
        assert_success
        case "$be" in
        uring) assert_output --regexp "rt\[uring\]: read-file fd=[0-9]+ len=4096 offset=65536 -> native" ;;
        *) assert_output --regexp "rt\[$be\]: read-file fd=[0-9]+ len=4096 offset=65536 -> pool thread" ;;
        esac
    done
}
@test "an unknown RT_BACKEND is an error that names the backends, exit 2" {
    RT_BACKEND=select run timeout 10 "$(chapter_bin rt-test)" probe
    assert_failure 2
    assert_output --partial "RT_BACKEND=select: no such backend (there are: uring epoll kqueue)"
}

@test "on epoll, a recv cancelled in flight takes its socket out of the interest set (strace: EPOLL_CTL_DEL before any byte is read)" {
    command -v strace >/dev/null || skip "strace is not installed (make deps)"
    strace -f -o /dev/null true 2>/dev/null || skip "strace cannot trace here (ptrace forbidden)"
    local trace="$BATS_TEST_TMPDIR/strace"
    # LeakSanitizer cannot work under ptrace
    ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" RT_BACKEND=epoll \
        run timeout 60 strace -f -e trace=epoll_ctl,recvfrom -o "$trace" "$(chapter_bin rt-test)" cancel-io
    assert_success
    # the first socket watched: ADD, then (the cancel) DEL, and only then data
    run awk '
        !fd && /EPOLL_CTL_ADD/ { match($0, /EPOLL_CTL_ADD, [0-9]+/); fd = substr($0, RSTART + 15, RLENGTH - 15); next }
        fd && $0 ~ "recvfrom\\(" fd ", \"" { print "data before the DEL: " $0; exit 1 }
        fd && $0 ~ "EPOLL_CTL_DEL, " fd "," { print "DEL fd " fd; exit 0 }
        END { if (!fd) print "no EPOLL_CTL_ADD" }' "$trace"
    echo "# $output" >&3
    assert_success
    assert_output --regexp "^DEL fd [0-9]+$"
}
