#!/usr/bin/env bats
# Chapter 13: the programs on the runtime. The runtime's unit tests are in
# rt.bats; the echo suite against echo-rt in echo-rt-BACKEND.bats.

load ../helpers/common
load ../helpers/echo_suite

# value KEY: the number after "KEY" in $output ("sequential: 531 ms" -> 531)
value() {
    echo "$output" | sed -n "s/^$1[: ]*\([0-9.]*\).*/\1/p" | head -n 1
}

@test "when-all-demo: three fetches of 200, 150 and 180 ms take their sum awaited one by one, and about the longest with when_all" {
    run timeout 20 "$(chapter_bin when-all-demo)"
    assert_success
    echo "$output" | sed 's/^/# /' >&3
    local seq all
    seq=$(value sequential) all=$(value when_all)
    [ -n "$seq" ] && [ -n "$all" ] || fail "no figures in: $output"
    [ "$seq" -ge 530 ] || fail "sequential: expected at least 200+150+180 = 530 ms, got $seq"
    [ "$all" -ge 200 ] || fail "when_all: expected at least the longest fetch, 200 ms, got $all"
    # the ratio, not the times: 530/200 = 2.65 on an idle machine
    [ $((seq * 10)) -ge $((all * 20)) ] || fail "expected when_all at least twice as fast: $seq ms vs $all ms"
}

@test "pitfalls: a blocking call inside a task makes another task's 10 ms timer hundreds of ms late; the same call on rt_run_blocking does not" {
    local stalled offloaded
    run timeout 20 "$(chapter_bin pitfalls)" stall
    assert_success
    echo "$output" | sed "s/^/# /" >&3
    stalled=$(value max-late-ms)
    run timeout 20 "$(chapter_bin pitfalls)" offload
    assert_success
    echo "$output" | sed "s/^/# /" >&3
    offloaded=$(value max-late-ms)
    [ "$stalled" -ge 300 ] || fail "three 200 ms calls on the loop thread: expected the ticker late by 300 ms or more, got $stalled ms"
    [ $((offloaded * 4)) -lt "$stalled" ] ||
        fail "on the pool the ticker should stay far more punctual: $offloaded ms late vs $stalled ms"
}

@test "pitfalls: rt_block_on inside a task is refused with a message naming the mistake, and the program goes on" {
    run timeout 10 "$(chapter_bin pitfalls)" result
    assert_success
    assert_output --partial "rt_block_on() called from inside the loop"
    assert_output --partial "rt_block_on inside a task returned -35"
}

@test "pitfalls: a task that fails with nobody awaiting it is reported, not lost" {
    run timeout 10 "$(chapter_bin pitfalls)" async-void
    assert_success
    assert_output --partial "rt: task doomed_step failed (Input/output error) and nobody awaited it"
}

@test "echo-rt: bad arguments print the usage and exit 2; -h exits 0" {
    run timeout 10 "$(chapter_bin echo-rt)" -p notaport
    assert_failure 2
    assert_output --partial "usage"
    run timeout 10 "$(chapter_bin echo-rt)" -h
    assert_success
}

@test "echo-rt: an unknown RT_BACKEND names the backends and exits 2" {
    RT_BACKEND=select run timeout 10 "$(chapter_bin echo-rt)" -p 0
    assert_failure 2
    assert_output --partial "RT_BACKEND=select: no such backend (there are: uring epoll kqueue)"
    refute_output --partial "listening on"
}

# echo-uv, the libuv reference of the benchmark: a server like any other
# (the shared echo suite runs from suite-echo-uv.bats).
uv_setup() {
    [ -x "$BUILD/chapters/$CHAPTER/echo-uv" ] ||
        skip "echo-uv is not built: libuv1-dev is not installed (make deps)"
    SERVER_CMD=("$BUILD/chapters/$CHAPTER/echo-uv")
}

@test "echo-uv (libuv reference): 2,000 idle connections, then SIGTERM just after they all close exits 0" {
    uv_setup
    suite_many_idle 2000
}

# ---- bench.sh: the runtime beside echo-uring and libuv ------------------------------

@test "bench.sh: an unknown option or a bad count says so and exits 2" {
    run timeout 10 "$TOP/chapters/13-mini-runtime/bench.sh" --fast
    assert_failure 2
    assert_output --partial "unknown argument --fast"
    run timeout 10 "$TOP/chapters/13-mini-runtime/bench.sh" -d 0
    assert_failure 2
    assert_output --partial "positive whole number"
}
