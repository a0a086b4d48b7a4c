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
    timeout 10 env "$@" "$prog" "http://127.0.0.1:$PORT$path" >"$got" 2>"$BATS_TEST_TMPDIR/err" || st=$?
    course_note_exit "$st" "$name"
    [ "$st" -eq 0 ] || fail "$name $path: exit status $st
--- stderr ---
$(cat "$BATS_TEST_TMPDIR/err")"
    cmp -s "$want" "$got" ||
        fail "$name $path: expected $(wc -c <"$want") bytes, the body in upper case; got $(wc -c <"$got")
first line expected: $(head -n 1 "$want")
first line got:      $(head -n 1 "$got")"
}
