# SPDX-License-Identifier: MIT
# tests/06-kqueue/idle.bash: waiting for echo-kqueue to close an idle
# client (its EVFILT_TIMER timeout), for chapter.bats and the exercise
# files that test idle timeouts (idle-timer, kq-dispatch, lazy-timeout).
#
#   load ../helpers/common
#   load ../helpers/echo_suite
#   load idle

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
