# SPDX-License-Identifier: MIT
# tests/06-kqueue/idle.bash: waiting for echo-kqueue to close an idle
# client (its EVFILT_TIMER timeout), for chapter.bats and the exercise
# files that test idle timeouts (idle-timer, kq-dispatch, lazy-timeout).
#
#   load ../helpers/common
#   load ../helpers/echo_suite
#   load idle
#
#   wait_eof FD SECONDS          the ms until the server closes FD
#   echo_with_timer              with -t 5, one message comes back
#   idle_closed_active_kept N S  with -t 1, the idle client is closed, the active one is not
#   no_timer_left_behind         with -t 1, clients that leave early leave no timer firing

# wait_eof FD SECONDS: wait until the server closes FD (read returns EOF);
# prints the milliseconds it took; returns 1 if it did not within SECONDS.
# Call it as ms=$(wait_eof FD S) || fail ...: a fail inside $( ) is lost.
wait_eof() {
    local fd="$1" limit="$2" t0 line rc
    t0=$(date +%s%N)
    while :; do
        # shellcheck disable=SC2034 # what the line says does not matter, only that one came
        read -r -t "$limit" line <&"$fd"
        rc=$? # 0: a line (keep reading); 1: EOF; above 128: timed out
        [ "$rc" -eq 0 ] || break
    done
    echo $((($(date +%s%N) - t0) / 1000000))
    [ "$rc" -le 128 ]
}

# echo_with_timer: started with an idle timeout (-t 5), the server echoes one
# message and stops cleanly.
echo_with_timer() {
    local c
    server_start "${SERVER_CMD[@]}" -p 0 -t 5
    conn_open c
    expect_echo "$c" "hello, kqueue"
    exec {c}>&-
    suite_stop_clean
}

# idle_closed_active_kept N SECONDS: with -t 1, one client stays idle while
# another sends a message every 0.3 s, N times (each echo restarts its timer):
# the idle one must be closed within SECONDS after that, and the active one
# still be served. Sets IDLE_MS (how long the idle one waited after the
# active one's last message); leaves the server running.
idle_closed_active_kept() {
    local idle active i
    server_start "${SERVER_CMD[@]}" -p 0 -t 1
    conn_open idle
    conn_open active
    for ((i = 0; i < $1; i++)); do
        expect_echo "$active" "still here $i"
        sleep 0.3
    done
    # shellcheck disable=SC2034 # read by the test that called this
    IDLE_MS=$(wait_eof "$idle" "$2") || server_gone "the idle client was not closed within $2 s"
    expect_echo "$active" "not cut although the timers fired"
    exec {active}>&- {idle}>&-
}

# no_timer_left_behind: the timer is not tied to the fd, so a server that
# forgets to delete it gets an event for a connection it has freed. With
# -t 1, 20 clients leave early, then the timeout passes: the server must be
# alive and serving.
no_timer_left_behind() {
    local i c
    server_start "${SERVER_CMD[@]}" -p 0 -t 1
    for ((i = 0; i < 20; i++)); do
        run_client -p "$PORT" -t 5 "short visit $i" >/dev/null || server_gone "client $i failed"
    done
    sleep 2
    require_server_alive
    conn_open c
    expect_echo "$c" "served after the old timers would have fired"
    exec {c}>&-
    suite_stop_clean
}
