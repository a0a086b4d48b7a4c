# tests/01-blocking/blocking_helpers.bash: helpers for the tests of chapter 01
# and its exercises (loaded after ../helpers/common).
#
#   wait_blocked_in CALL      wait until the server sleeps inside accept/read/write
#   stop_within SECONDS SIG   signal the server, require exit 0 within SECONDS
#   require_server_alive      fail with the server's status and stderr if it exited
#   cpu_ticks PID             CPU time a process used so far, in clock ticks

# syscall_numbers CALL: the numbers /proc/PID/syscall shows for CALL on this
# machine, as a regex; empty when this architecture is not listed.
syscall_numbers() {
    case "$(uname -m):$1" in
    x86_64:read) echo 0 ;;
    x86_64:write) echo 1 ;;
    x86_64:accept) echo '43|288' ;;
    aarch64:read) echo 63 ;;
    aarch64:write) echo 64 ;;
    aarch64:accept) echo '202|242' ;;
    esac
}

# wait_blocked_in CALL: wait up to 10 s until the server is asleep inside the
# system call CALL (accept, read, write), so a signal sent next finds it there.
# Where /proc/PID/syscall cannot say (another OS or architecture), wait 1 s.
wait_blocked_in() {
    local nr i now
    require_server_alive
    nr="$(syscall_numbers "$1")"
    if [ -z "$nr" ] || [ ! -r "/proc/$SERVER_PID/syscall" ]; then
        sleep 1
        return 0
    fi
    for ((i = 0; i < 200; i++)); do
        require_server_alive
        now="$(cut -d' ' -f1 "/proc/$SERVER_PID/syscall" 2>/dev/null)"
        if [[ "$now" =~ ^($nr)$ ]] && grep -q '^State:.*(sleeping)' "/proc/$SERVER_PID/status"; then
            return 0
        fi
        sleep 0.05
    done
    fail "the server was not blocked in $1() within 10 s (last system call: $now)"
}

# stop_within SECONDS SIGNAL: send SIGNAL, require exit status 0 within SECONDS.
stop_within() {
    local limit="$1" start took
    start=$EPOCHREALTIME
    server_stop "$2"
    took=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
    [ "$SERVER_STATUS" -eq 0 ] ||
        fail "expected exit status 0 after SIG$2, got $SERVER_STATUS
$(cat "$SERVER_ERR")"
    awk -v t="$took" -v l="$limit" 'BEGIN { exit !(t <= l) }' ||
        fail "expected an exit within $limit s of SIG$2, took $took s"
}

# cpu_ticks PID: user + system CPU time used so far, in clock ticks.
cpu_ticks() {
    awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# require_server_alive: the server started last is still running; if not,
# fail with its exit status and stderr (an exercise's TODO shows there).
require_server_alive() {
    # an exited child stays a zombie until reaped, and kill -0 still finds it
    if server_alive && ! grep -qs '^State:.*zombie' "/proc/$SERVER_PID/status"; then
        return 0
    fi
    SERVER_STATUS=0
    wait "$SERVER_PID" || SERVER_STATUS=$?
    course_note_exit "$SERVER_STATUS" "server"
    fail "the server exited with status $SERVER_STATUS:
$(cat "$SERVER_ERR")"
}
