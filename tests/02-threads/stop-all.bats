#!/usr/bin/env bats
# Exercise 02-threads/stop-all: registry_stop_all() of echo-threads, which
# wakes every worker and waits for the last. Runs against $IMPL (solutions:
# the chapter's own code; `make ex` uses the learner's copy).
#
# echo-threads checks the stop's promise itself: if registry_stop_all()
# returns with a connection still live, or a finished worker not joined, it
# says so on stderr and exits 1 instead of 0.

load ../helpers/common
load pool

setup() {
    SERVER_BIN="$(impl_bin stop-all echo-threads)"
}

# The hook ECHO_THREADS_TEST_LINGER_MS keeps each worker live for 200 ms
# after its client's end, so the stop has to wait for them; under the faults
# shim, every condition wait returns at once without a signal (POSIX allows
# it), so only a wait that tests nlive again in a loop still waits for them.
@test "stop-all: the stop waits in a loop until no worker is live, even when every wait wakes without a signal" {
    # shellcheck disable=SC2046 # faults_env prints words for env(1)
    server_start env ECHO_THREADS_TEST_LINGER_MS=200 $(faults_env FAULTS_SPURIOUS_WAKEUP=100) \
        "$SERVER_BIN" -p 0
    hold_idle 5
    pool_stop_within 3
    counted_positive faults_count "the faults shim" spurious
}

@test "stop-all: SIGTERM with 10 idle clients (workers asleep in read) exits 0 within 3 s, and every client sees EOF" {
    local fds=() fd i line
    server_start "$SERVER_BIN" -p 0
    for ((i = 0; i < 10; i++)); do
        conn_open fd
        fds+=("$fd")
        expect_echo "$fd" "client $i"
    done
    pool_stop_within 3
    for i in "${!fds[@]}"; do
        fd=${fds[$i]}
        if read -r -t 5 line <&"$fd"; then
            fail "client $i: expected EOF after the stop, got '$line'"
        elif [ $? -gt 128 ]; then
            fail "client $i: its connection was still open 5 s after the server exited"
        fi
        exec {fd}>&-
    done
}

@test "stop-all: SIGTERM while a worker is asleep in write() to a client that never reads exits 0 within 3 s" {
    local last=-1 now i
    server_start "$SERVER_BIN" -p 0
    flood_never_reading
    # the worker's write() sleeps once the client's writes stall: the echo
    # has filled both directions' buffers
    for ((i = 0; i < 20; i++)); do
        sleep 0.25
        now=$(written_bytes "$FLOOD_PID") || break
        [ "$now" = "$last" ] && break
        last=$now
    done
    kill -0 "$FLOOD_PID" 2>/dev/null || fail "the client sent 32 MiB without reading: the server kept reading?"
    pool_stop_within 3
    flood_end
}

@test "stop-all: SIGTERM with no client exits 0" {
    local out
    server_start "$SERVER_BIN" -p 0
    out=$(run_client -p "$PORT" -t 10 "served, then gone") || server_gone "echo-client failed (status $?)"
    pool_stop_within 3
}

@test "stop-all: a stop with clients connected frees every connection and thread (valgrind)" {
    command -v valgrind >/dev/null || skip "valgrind is not installed"
    case "$BUILD" in */san-*) skip "valgrind and a sanitizer build do not mix (${BUILD##*/})" ;; esac
    # under valgrind unless make test VALGRIND=1 already puts it there
    # shellcheck disable=SC2054 # the commas are valgrind's, inside one word
    local vg=(valgrind --quiet --error-exitcode=97 --leak-check=full
        --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect)
    course_valgrind && vg=()
    server_start "${vg[@]}" "$SERVER_BIN" -p 0
    hold_idle 3
    stop_within 20
    [ ! -s "$SERVER_ERR" ] || fail "valgrind or the server said something: $(cat "$SERVER_ERR")"
}
