# SPDX-License-Identifier: MIT
# tests/11-one-api/exercise.bash: what the exercise files of chapter 11
# share (ready-eagain, short-send, pooled-eagain): each builds echo-aio and
# aio-test from its copy of the library, and is tested on epoll, through
# the readiness adapter (ready.c) the exercises are about.
#
#   load ../helpers/common
#   load ../helpers/echo_suite
#   load exercise
#   setup() { aio_exercise_setup ready-eagain 10; }
#
#   aio_exercise_setup EX SECONDS   SERVER_CMD: EX's echo-aio on epoll; clients wait SECONDS
#   aio_test_net WHAT_124_MEANS     EX's aio-test net on epoll must pass

# shellcheck disable=SC2154 # output and status are set by bats' run

# aio_exercise_setup EX SECONDS: BIN_DIR holds EX's programs, SERVER_CMD
# runs its echo-aio on epoll, and echo-client gives up after SECONDS
# (CLIENT_TIMEOUT).
aio_exercise_setup() {
    BIN_DIR="$(dirname "$(impl_bin "$1" echo-aio)")"
    export CIO_BACKEND=epoll # the readiness adapter, ready.c, under test
    # shellcheck disable=SC2034 # read by echo_suite.bash and the tests
    SERVER_CMD=("$BIN_DIR/echo-aio")
    export CLIENT_TIMEOUT="$2"
}

# aio_test_net WHAT_124_MEANS: the exercise's aio-test net group passes on
# epoll (its output goes to the TAP stream as comments). A failure says
# what exit status 124, the timeout, means for this exercise.
aio_test_net() {
    run timeout 10 "$BIN_DIR/aio-test" net
    echo "$output" | sed 's/^/# /' >&3
    [ "$status" -eq 0 ] || fail "aio-test net on epoll: exit $status (124: $1)
$output"
    assert_output --partial "all checks passed"
}
