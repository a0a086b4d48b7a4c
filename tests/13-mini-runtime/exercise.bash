# SPDX-License-Identifier: MIT
# tests/13-mini-runtime/exercise.bash: what the exercise files of chapter
# 13 share (cancel-token, late-continuation, timer-cancel, when-any,
# cancel-losers). Each exercise builds its own rt-test, http-rt and
# when-all-demo from its copy of the runtime.
#
#   load ../helpers/common
#   load exercise
#   setup() { rt_exercise when-any 60; }
#
#   rt_exercise EX SECONDS   the tests run EX's programs; rt-test gets SECONDS
#   rt_ex GROUP              EX's rt-test GROUP must pass (every future freed, too)
#   rt_ex_backends GROUP     the same on each backend here: uring, epoll, kqueue
#   rt_ex_valgrind GROUP     EX's rt-test GROUP under valgrind: no error, no leak
#   when_all_demo            EX's when-all-demo, through bats' run: it must exit 0
#   when_all_faster          in its $output, when_all at least twice as fast as one by one
#   http_rt_closes_idle      EX's http-rt -i 300: keep-alive served, an idle connection closed

# shellcheck disable=SC2154 # output and status are set by bats' run

# rt_exercise EX SECONDS: the tests of this file run exercise EX's programs,
# and its rt-test under a timeout of SECONDS.
rt_exercise() {
    RT_EXERCISE="$1" RT_SECONDS="$2"
}

# rt_ex GROUP: the exercise's rt-test GROUP must pass (its output goes to
# the TAP stream as comments; exit 77 skips, with the reason). Every group
# ends by checking that each future it made was freed (the runtime counts
# them: rt->nfutures), so a reference never released fails it.
rt_ex() {
    run timeout "$RT_SECONDS" "$(impl_bin "$RT_EXERCISE" rt-test)" "$@"
    echo "$output" | sed 's/^/# /' >&3
    [ "$status" -ne 77 ] || skip "$output"
    course_note_exit "$status" "rt-test $*"
    [ "$status" -eq 0 ] || fail "rt-test $*: exit $status
$output"
    assert_output --partial "no future left unreleased"
    assert_output --partial "all checks passed"
}

# rt_ex_backends GROUP: rt_ex GROUP on io_uring, epoll and kqueue (through
# common/kqueue-linux), each where it runs here: a backend that exits 77
# (io_uring forbidden) is noted; epoll must run.
rt_ex_backends() {
    local be ran=""
    for be in uring epoll kqueue; do
        RT_BACKEND=$be run timeout "$RT_SECONDS" "$(impl_bin "$RT_EXERCISE" rt-test)" "$@"
        if [ "$status" -eq 77 ] && [ "$be" != epoll ]; then
            echo "# $be: not here: $output" >&3
            continue
        fi
        echo "$output" | sed "s/^/# $be: /" >&3
        course_note_exit "$status" "RT_BACKEND=$be rt-test $*"
        [ "$status" -eq 0 ] || fail "RT_BACKEND=$be rt-test $*: exit $status
$output"
        assert_output --partial "backend $be"
        assert_output --partial "no future left unreleased"
        assert_output --partial "all checks passed"
        ran+=" $be"
    done
    echo "# ran on:$ran" >&3
}

# rt_ex_valgrind GROUP: the exercise's rt-test GROUP under valgrind's
# memcheck: a read of freed memory or a leak fails it (exit 97, valgrind's
# report shown). Skips in a sanitizer build, where the sanitizers check the
# same in every test.
rt_ex_valgrind() {
    case "$BUILD" in */san-*) skip "valgrind does not run sanitized binaries (the sanitizers check this build)" ;; esac
    command -v valgrind >/dev/null || skip "valgrind is not installed (make deps)"
    local st=0 log="$BATS_TEST_TMPDIR/valgrind.log"
    RT_BACKEND=epoll timeout 60 valgrind -q --leak-check=full --show-leak-kinds=all \
        --errors-for-leak-kinds=all --error-exitcode=97 --log-file="$log" \
        "$(impl_bin "$RT_EXERCISE" rt-test)" "$@" >"$BATS_TEST_TMPDIR/out" 2>&1 || st=$?
    course_note_exit "$st" "rt-test $* under valgrind"
    # a TODO exits at once, leaving its allocations: say that, not "a leak"
    ! grep -q '^TODO at ' "$BATS_TEST_TMPDIR/out" || fail "rt-test $*: $(grep -m1 '^TODO at ' "$BATS_TEST_TMPDIR/out")"
    [ "$st" -ne 97 ] || fail "valgrind found an error or a leak in rt-test $*:
$(head -n 40 "$log")"
    [ "$st" -eq 0 ] || fail "rt-test $* under valgrind: exit $st
$(cat "$BATS_TEST_TMPDIR/out")
$(head -n 20 "$log")"
}

# when_all_demo: run the exercise's when-all-demo (bats' run: $output and
# $status, stderr included); it must exit 0. (rt_destroy() reports a
# future never released on stderr: refute "never released" to check it.)
when_all_demo() {
    run timeout 20 "$(impl_bin "$RT_EXERCISE" when-all-demo)"
    echo "$output" | sed 's/^/# /' >&3
    [ "$status" -ne 77 ] || skip "$output"
    course_note_exit "$status" when-all-demo
    [ "$status" -eq 0 ] || fail "when-all-demo: exit $status
$output"
}

# when_all_faster: when-all-demo's $output has both timings, and when_all
# took at most half the time of awaiting one by one.
when_all_faster() {
    local seq all
    seq=$(echo "$output" | sed -n 's/^sequential: \([0-9]*\) ms/\1/p')
    all=$(echo "$output" | sed -n 's/^when_all: \([0-9]*\) ms/\1/p')
    [ -n "$seq" ] && [ -n "$all" ] || fail "no timings in: $output"
    [ $((seq * 10)) -ge $((all * 20)) ] || fail "sequential $seq ms, when_all $all ms"
}

# http_rt_closes_idle: the exercise's http-rt with an idle limit of 300 ms
# (-i 300) serves two keep-alive requests on one connection, closes a
# connection that sends nothing after about 300 ms, and exits 0 on SIGTERM.
http_rt_closes_idle() {
    command -v curl >/dev/null || skip "curl is not installed (make deps)"
    mkdir -p "$BATS_TEST_TMPDIR/www"
    printf 'ok\n' >"$BATS_TEST_TMPDIR/www/index.html"
    server_start "$(impl_bin "$RT_EXERCISE" http-rt)" -p 0 -r "$BATS_TEST_TMPDIR/www" -i 300
    run timeout 10 curl -s "http://127.0.0.1:$PORT/" "http://127.0.0.1:$PORT/"
    assert_output "ok
ok"
    local fd start ms
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
    start=$(date +%s%N)
    timeout 10 cat <&"$fd" >/dev/null || fail "an idle connection stayed open 10 s"
    ms=$((($(date +%s%N) - start) / 1000000))
    exec {fd}>&-
    [ "$ms" -ge 250 ] && [ "$ms" -lt 5000 ] || fail "closed after $ms ms, expected about 300"
    server_stop
    course_note_exit "$SERVER_STATUS" http-rt
    [ "$SERVER_STATUS" -eq 0 ] || fail "http-rt exit $SERVER_STATUS: $(cat "$SERVER_ERR")"
}
