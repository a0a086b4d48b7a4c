# SPDX-License-Identifier: MIT
# tests/10-threadpool/exercise.bash: the set-up the exercise files of chapter
# 10 share (done-on-worker, handoff, pool-shutdown, pool-submit). Each
# exercise builds its own file-server and pool-check from its copy of the
# pool; files.bash has the served root and the client vocabulary.
#
#   load ../helpers/common
#   load files
#   load exercise
#   setup_file() { pool_exercise_setup_file handoff 60; }
#   setup() { pool_exercise_setup handoff; }
#
#   pool_exercise_setup_file EX SECONDS  the served root in $ROOT; EX's pool-check run once
#   pool_exercise_setup EX               SERVER: EX's file-server serving $ROOT
#   pool_check_ok CHECK...               that pool-check run passed each named check
#   fetch_together N SECONDS FILE...     N clients at once, each gets its file intact
#   leak_checked                         VG: valgrind's words for a leak-checked server

# A reply that has not come after 10 s will not come: fail then, not after 50.
export FETCH_TIMEOUT=10

# pool_exercise_setup_file EX SECONDS: make the served root ($ROOT, exported
# for the tests) and run EX's pool-check once, under a timeout of SECONDS;
# each test looks at the checks it cares about (pool_check_ok). A pool-check
# not built yet is reported by each test that needs it, not here.
pool_exercise_setup_file() {
    export ROOT="$BATS_FILE_TMPDIR/root"
    make_root "$ROOT"
    local bin="$BUILD/$IMPL/10-threadpool/$1/pool-check" status=0
    if [ -x "$bin" ]; then
        timeout "$2" "$bin" >"$BATS_FILE_TMPDIR/pool-check.out" 2>&1 || status=$?
        echo "$status" >"$BATS_FILE_TMPDIR/pool-check.status"
    fi
}

# pool_exercise_setup EX: SERVER is EX's file-server serving $ROOT (the
# port and the pool's options are each test's).
pool_exercise_setup() {
    POOL_EXERCISE="$1"
    # shellcheck disable=SC2034 # the tests start "${SERVER[@]}"
    SERVER=("$(impl_bin "$1" file-server)" -r "$ROOT")
}

# pool_check_ok CHECK...: pool-check built with this exercise's pool passed
# each named check.
pool_check_ok() {
    local c out status
    impl_bin "$POOL_EXERCISE" pool-check >/dev/null
    out="$(cat "$BATS_FILE_TMPDIR/pool-check.out")"
    status="$(cat "$BATS_FILE_TMPDIR/pool-check.status")"
    for c in "$@"; do
        grep -qF "ok - $c" <<<"$out" || fail "pool-check (status $status): expected 'ok - $c'
$out"
    done
}

# leak_checked: VG is an array of the words to put before a server so that
# valgrind checks it for leaks (exit 97 on one: stop_within then fails with
# valgrind's report on stderr); skips where valgrind cannot run; empty when
# make test VALGRIND=1 puts valgrind there already.
leak_checked() {
    command -v valgrind >/dev/null || skip "valgrind is not installed"
    case "$BUILD" in */san-*) skip "valgrind and a sanitizer build do not mix (${BUILD##*/})" ;; esac
    # shellcheck disable=SC2054,SC2034 # the commas are valgrind's, inside one word; VG is the caller's
    VG=(valgrind --quiet --error-exitcode=97 --leak-check=full --show-leak-kinds=definite,indirect
        --errors-for-leak-kinds=definite,indirect)
    # shellcheck disable=SC2034 # VG is the caller's
    if course_valgrind; then VG=(); fi
}

# fetch_together N SECONDS FILE...: N file-clients at once, client i asking
# for FILE number i (modulo their count), each under a timeout of SECONDS
# and waiting at most 10 s for a reply. Fails, quietly, unless every client
# exited 0 with its file byte for byte: the test says what that means.
fetch_together() {
    local n="$1" secs="$2" i pids=() failed=0
    shift 2
    local files=("$@")
    for ((i = 0; i < n; i++)); do
        timeout --foreground "$secs" "$FILE_CLIENT" -p "$PORT" -t 10 -o "$BATS_TEST_TMPDIR/c$i" "${files[$((i % ${#files[@]}))]}" &
        pids+=($!)
    done
    for ((i = 0; i < n; i++)); do
        wait "${pids[$i]}" || failed=1
        cmp -s "$ROOT/${files[$((i % ${#files[@]}))]}" "$BATS_TEST_TMPDIR/c$i" || failed=1
    done
    [ "$failed" -eq 0 ]
}
