# SPDX-License-Identifier: MIT
# tests/12-state-machines/exercise.bash: what the exercise files of chapter
# 12 share: the chapter's http-server, which every exercise's client
# fetches from (no exercise changes it), and the check that a
# GetStringAsync client (fetch-co, fetch-sm) prints the body it fetched in
# upper case.
#
#   load ../helpers/common
#   load exercise
#   setup() { FETCH_CO="$(impl_bin coro-loops fetch-co)"; require_http_server; }
#
#   require_http_server                  HTTP_SERVER: the chapter's http-server, built
#   fetch_upper PROGRAM PATH [ENV...]    PROGRAM's output for PATH: the body in upper case
#                                        (FETCH_SECS: its time limit, 10 s by default)
#   valgrind_clean WHAT PROGRAM ARGS...  PROGRAM under valgrind: no error, no leak, no
#                                        socket left open; $VG_STATUS is its exit status

# require_http_server: HTTP_SERVER is the chapter's http-server; fail, with
# the make command that builds it, where it is not built.
require_http_server() {
    HTTP_SERVER="$BUILD/chapters/$CHAPTER/http-server"
    require_bin "$HTTP_SERVER" "chapters/$CHAPTER"
}

# fetch_upper PROGRAM PATH [ENV...]: PROGRAM's output for PATH (run under
# env ENV, the faults shim say) must be the body (read through bash's
# /dev/tcp) in upper case, byte for byte.
fetch_upper() {
    local prog="$1" path="$2" name="${1##*/}" fd want="$BATS_TEST_TMPDIR/want" got="$BATS_TEST_TMPDIR/got" st=0
    shift 2
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || fail "could not connect to port $PORT"
    printf 'GET %s HTTP/1.0\r\n\r\n' "$path" >&"$fd"
    timeout 10 cat <&"$fd" | sed '1,/^\r$/d' | tr 'a-z' 'A-Z' >"$want"
    exec {fd}>&-
    [ -s "$want" ] || fail "the server sent no body for $path"
    timeout "${FETCH_SECS:-10}" env "$@" "$prog" "http://127.0.0.1:$PORT$path" >"$got" 2>"$BATS_TEST_TMPDIR/err" || st=$?
    course_note_exit "$st" "$name"
    [ "$st" -eq 0 ] || fail "$name $path: exit status $st$([ "$st" -eq 124 ] && echo " (still running after ${FETCH_SECS:-10} s)")
--- stderr ---
$(cat "$BATS_TEST_TMPDIR/err")"
    cmp -s "$want" "$got" ||
        fail "$name $path: expected $(wc -c <"$want") bytes, the body in upper case; got $(wc -c <"$got")
first line expected: $(head -n 1 "$want")
first line got:      $(head -n 1 "$got")"
}

# valgrind_clean WHAT PROGRAM ARGS...: run PROGRAM under valgrind's memcheck
# (30 s at most); fail, naming WHAT and showing valgrind's report, on a
# memory error, on any block still allocated at exit, or on a socket still
# open at exit. Sets VG_STATUS to the program's own exit status (1 for an
# HTTP error is fine: the caller checks it). Skips in a sanitizer build
# (the sanitizers check that build in every test) or without valgrind.
valgrind_clean() {
    case "$BUILD" in */san-*) skip "valgrind does not run sanitizer builds (the sanitizers check this one)" ;; esac
    command -v valgrind >/dev/null || skip "valgrind is not installed (make deps)"
    local what="$1" log="$BATS_TEST_TMPDIR/vg.log"
    shift
    VG_STATUS=0
    timeout 30 valgrind -q --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all \
        --error-exitcode=97 --track-fds=yes --log-file="$log" "$@" \
        >"$BATS_TEST_TMPDIR/vg.out" 2>"$BATS_TEST_TMPDIR/vg.err" || VG_STATUS=$?
    course_note_exit "$VG_STATUS" "$what"
    # a TODO exits at once, leaving its allocations: say that, not "a leak"
    ! grep -q '^TODO at ' "$BATS_TEST_TMPDIR/vg.err" || fail "$what: $(grep -m1 '^TODO at ' "$BATS_TEST_TMPDIR/vg.err")"
    [ "$VG_STATUS" -ne 97 ] || fail "valgrind found a memory error or a leak in $what:
$(head -n 60 "$log")"
    [ "$VG_STATUS" -ne 124 ] || fail "$what under valgrind: still running after 30 s
$(cat "$BATS_TEST_TMPDIR/vg.err")"
    ! grep -A3 "Open AF_INET socket" "$log" | grep -q . ||
        fail "$what: a socket was still open at exit:
$(grep -A3 "Open AF_INET socket" "$log")"
}
