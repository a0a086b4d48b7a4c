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
