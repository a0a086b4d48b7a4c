# SPDX-License-Identifier: MIT
# tests/09-iocp/exercise.bash: the set-up the exercise files of chapter 09
# share (accept-repost, op-reference, post-send, iocp-dispatch): a
# wineserver for the file's tests (wine.bash), and the exercise's
# echo-iocp.exe, with two threads, as the server under test.
#
#   load ../helpers/common
#   load ../helpers/echo_suite
#   load ../helpers/wine
#   load exercise
#   setup() { iocp_exercise_setup post-send 10; }
#
#   iocp_stops SECONDS   Ctrl-C stops the server, exit 0, within SECONDS
#   require_freed N      its last line: N connections served, 0 still allocated
#
# Each test file still loads ../helpers/wine itself: that line is how the
# test runner (common/mk/run-tests.sh) tells a Wine file, which does not
# run beside another Wine file.

setup_file() { wine_setup_file; }
teardown_file() { wine_teardown_file; }

# iocp_exercise_setup EX SECONDS: skip, with the reason, without Wine or
# mingw-w64; SERVER_CMD runs EX's echo-iocp.exe with 2 threads under Wine,
# and echo-client gives up after SECONDS (CLIENT_TIMEOUT).
iocp_exercise_setup() {
    wine_require
    # shellcheck disable=SC2034 # read by echo_suite.bash (suite_start)
    SERVER_CMD=("$WINE" "$(impl_bin "$1" echo-iocp.exe)" -w 2)
    export CLIENT_TIMEOUT="$2"
}

# iocp_stops SECONDS: Ctrl-C (SIGINT) must stop the server, exit 0, within
# SECONDS (the reference takes well under a second under Wine; the shared
# suite measured 40 ms at most): a server stuck in its shutdown is left to
# teardown then, not after server_stop's 10 s.
iocp_stops() {
    local deadline
    kill -INT "$SERVER_PID" 2>/dev/null || true
    deadline=$(($(date +%s%N) + $1 * 1000000000))
    until server_exited || [ "$(date +%s%N)" -ge "$deadline" ]; do
        sleep 0.05
    done
    if ! server_exited; then
        kill -KILL "$SERVER_PID" 2>/dev/null # teardown would wait longer
        fail "still running $1 s after Ctrl-C (SIGINT): is the shutdown waiting for operations that will never complete?
--- stderr ---
$(cat "$SERVER_ERR")"
    fi
    server_stop INT
    [ "$SERVER_STATUS" -eq 0 ] ||
        fail "expected exit status 0 after Ctrl-C, got $SERVER_STATUS
--- stderr ---
$(cat "$SERVER_ERR")"
}

# require_freed N: the server's last line says N connections were served and
# none is still allocated (every reference dropped, every operation drained).
require_freed() {
    grep -q "^echo-iocp: $1 connections served, 0 still allocated" "$SERVER_ERR" ||
        fail "expected 'echo-iocp: $1 connections served, 0 still allocated' at exit; stderr:
$(cat "$SERVER_ERR")"
}
