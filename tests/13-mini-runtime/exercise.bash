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
#   rt_ex GROUP              EX's rt-test GROUP must pass
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
# the TAP stream as comments; exit 77 skips, with the reason).
rt_ex() {
    run timeout "$RT_SECONDS" "$(impl_bin "$RT_EXERCISE" rt-test)" "$@"
    echo "$output" | sed 's/^/# /' >&3
    [ "$status" -ne 77 ] || skip "$output"
    course_note_exit "$status" "rt-test $*"
    [ "$status" -eq 0 ] || fail "rt-test $*: exit $status
$output"
    assert_output --partial "all checks passed"
}

# when_all_demo: run the exercise's when-all-demo (bats' run: $output and
# $status); it must exit 0.
when_all_demo() {
    run timeout 20 "$(impl_bin "$RT_EXERCISE" when-all-demo)"
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
