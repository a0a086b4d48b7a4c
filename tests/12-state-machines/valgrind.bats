#!/usr/bin/env bats
# test-long: runs the server and the three fetchers under valgrind (about 10 s of one CPU)
# Chapter 12 under valgrind's memcheck: http-server and the three ways of
# writing FetchUpperAsync leak nothing, leave no fd open, and the stackful
# fiber's stack switch is registered with valgrind (no "client switching
# stacks?" warning).

load ../helpers/common

FETCHERS=(fetch-sm fetch-co fetch-stackful)

setup() {
    HTTP_SERVER="$(chapter_bin http-server)"
}

@test "valgrind: http-server and the three fetchers leak nothing and leave no fd open" {
    case "$BUILD" in */san-*) skip "valgrind does not run sanitized binaries" ;; esac
    command -v valgrind >/dev/null || skip "valgrind is not installed (make deps)"
    local log="$BATS_TEST_TMPDIR/server.vg" p plog leaked
    # exit status 9 for a valgrind error, so it cannot pass for the program's own 1
    local vg=(valgrind --leak-check=full --errors-for-leak-kinds=all --error-exitcode=9 --track-fds=yes) st
    server_start "${vg[@]}" -q --log-file="$log" "$HTTP_SERVER" -p 0 -s 50000
    for p in "${FETCHERS[@]}"; do
        plog="$BATS_TEST_TMPDIR/$p.vg"
        # not -q: valgrind's "client switching stacks?" warning must be seen to be refused
        timeout 60 "${vg[@]}" --log-file="$plog" "$(chapter_bin "$p")" \
            "http://127.0.0.1:$PORT/under/valgrind" >"$BATS_TEST_TMPDIR/$p.out" ||
            fail "$p under valgrind: exit status $?:
$(cat "$plog")"
        grep -q "^YOU ASKED FOR /UNDER/VALGRIND" "$BATS_TEST_TMPDIR/$p.out" || fail "$p: wrong output under valgrind"
        st=0
        timeout 60 "${vg[@]}" --log-file="$plog.refused" "$(chapter_bin "$p")" "http://127.0.0.1:1/x" \
            >/dev/null 2>&1 || st=$?
        [ "$st" -eq 1 ] || fail "$p, connection refused, under valgrind: expected exit 1, got $st:
$(cat "$plog.refused")"
        for f in "$plog" "$plog.refused"; do
            leaked=$(awk '/Open (file descriptor|AF_)/ { fd = $0; getline; if ($0 !~ /inherited from parent/) print fd }' "$f")
            [ -z "$leaked" ] || fail "$p: fds left open at exit: $leaked"
            ! grep -q "switching stacks" "$f" || fail "$p: valgrind saw an unregistered stack switch: $(cat "$f")"
        done
    done
    server_stop TERM
    [ "$SERVER_STATUS" -eq 0 ] || fail "http-server under valgrind: exit status $SERVER_STATUS:
$(cat "$log")"
    leaked=$(awk '/Open (file descriptor|AF_)/ { fd = $0; getline; if ($0 !~ /inherited from parent/) print fd }' "$log")
    [ -z "$leaked" ] || fail "http-server: fds left open at exit: $leaked"
}
