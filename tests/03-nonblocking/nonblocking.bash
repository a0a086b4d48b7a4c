# tests/03-nonblocking/nonblocking.bash: checks shared by chapter.bats and the
# exercise tests of chapter 03 (event-loop servers on one thread).
#
#   load ../helpers/common
#   load ../helpers/echo_suite      (for suite_stop_clean)
#   load nonblocking
#
# Each check starts its server with server_start "$@" -p 0 and stops it with
# a clean SIGTERM; "$@" is the server command (chapter_bin or impl_bin).

# CPU time (user + system) a process has used, in clock ticks.
cpu_ticks() {
    local stat
    stat=$(cat "/proc/$1/stat") || return 1
    # Fields after the command name, which is in parentheses and may hold spaces:
    # state is field 3, utime field 14, stime field 15.
    set -- ${stat##*) }
    echo $((${12} + ${13}))
}

# Resident memory of a process in KiB.
rss_kb() {
    awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# Bytes a process has written so far (write(2) and friends).
written_bytes() {
    awk '/^wchar:/ { print $2 }' "/proc/$1/io"
}

# ch03_server_exited [TRIES]: has the server exited, or is it a zombie not
# yet reaped (kill -0 still succeeds then)? Looks TRIES times, 50 ms apart.
ch03_server_exited() {
    local i state
    for ((i = 0; i < ${1:-1}; i++)); do
        ((i == 0)) || sleep 0.05
        state=$(cat "/proc/$SERVER_PID/stat" 2>/dev/null) || return 0
        state=${state##*) }
        [ "${state%% *}" = Z ] && return 0
    done
    return 1
}

# When a client failed, say whether the server is the reason.
ch03_server_gone() {
    if ch03_server_exited 20; then
        SERVER_STATUS=0
        wait "$SERVER_PID" || SERVER_STATUS=$?
        course_note_exit "$SERVER_STATUS" server
        fail "$1: the server exited with status $SERVER_STATUS
--- stderr ---
$(cat "$SERVER_ERR")"
    fi
    fail "$1"
}

# ch03_line FD EXPECTED: send one line on FD, require it echoed within 5 s.
ch03_line() {
    local fd="$1" want="$2" line=""
    # In a subshell: a write to a reset socket raises SIGPIPE, which would
    # kill the test itself.
    (printf '%s\n' "$want" >&"$fd") 2>/dev/null
    read -r -t 5 line <&"$fd" || true
    [ "$line" = "$want" ] || ch03_server_gone "expected the echo '$want', got '$line'"
}

# One client connected and idle does not stop another from being served:
# the loop waits on every socket at once, not on one of them.
check_serves_while_another_is_idle() {
    local a out
    server_start "$@" -p 0
    exec {a}<>"/dev/tcp/127.0.0.1/$PORT"
    out=$(run_client -p "$PORT" -t 5 "hello from B") ||
        ch03_server_gone "client B was not served while client A sat idle (echo-client status $?)"
    [ "$out" = "hello from B" ] || fail "expected 'hello from B', got '$out'"
    ch03_line "$a" "A is still served"
    exec {a}>&-
    suite_stop_clean
}

# A client that sends 64 MiB and reads nothing: the server must stop reading
# from it (backpressure) instead of buffering everything, and keep serving
# the others.
check_never_reading_client() {
    local bound_kb=$((32 * 1024)) rss0 rss1 h wpid last=-1 now i out
    server_start "$@" -p 0
    rss0=$(rss_kb "$SERVER_PID")
    exec {h}<>"/dev/tcp/127.0.0.1/$PORT"
    head -c $((64 << 20)) /dev/zero >&"$h" 3>&- &
    wpid=$!
    _course_pids+=("$wpid")
    # Wait until the writer is stuck: its byte count stops moving for 1 s.
    for ((i = 0; i < 40; i++)); do
        sleep 0.5
        kill -0 "$wpid" 2>/dev/null || break
        now=$(written_bytes "$wpid") || break
        [ "$now" = "$last" ] && break
        last=$now
    done
    ch03_server_exited && ch03_server_gone "the server died while a client sent and did not read"
    kill -0 "$wpid" 2>/dev/null ||
        fail "the client sent all 64 MiB without reading anything: the server kept reading (no backpressure)"
    rss1=$(rss_kb "$SERVER_PID")
    echo "# the writer is stuck after $last bytes; server VmRSS ${rss0} kB -> ${rss1} kB" >&3
    [ $((rss1 - rss0)) -lt "$bound_kb" ] ||
        fail "server memory grew by $((rss1 - rss0)) kB (bound: $bound_kb kB) for a client that never reads"
    out=$(run_client -p "$PORT" -t 5 "still served") ||
        ch03_server_gone "another client was not served while one never read (echo-client status $?)"
    [ "$out" = "still served" ] || fail "expected 'still served', got '$out'"
    kill "$wpid" 2>/dev/null
    wait "$wpid" 2>/dev/null || true
    exec {h}>&-
    suite_stop_clean
}

# After an echo, with the client still connected and idle, the server must
# sleep in poll()/select(). One that leaves POLLOUT (or the write set) asked
# for with nothing to write is woken at once, forever: 100% of a CPU.
check_idle_does_not_spin() {
    local a t0 t1 hz ticks
    server_start "$@" -p 0
    exec {a}<>"/dev/tcp/127.0.0.1/$PORT"
    ch03_line "$a" ping
    hz=$(getconf CLK_TCK)
    t0=$(cpu_ticks "$SERVER_PID")
    sleep 2
    t1=$(cpu_ticks "$SERVER_PID")
    ticks=$((t1 - t0))
    # A spinning server uses about 2 * hz ticks here; allow a quarter of that.
    [ $((ticks * 4)) -lt $((2 * hz)) ] ||
        fail "the idle server used $ticks CPU ticks ($hz per second) in 2 s: it is spinning (is POLLOUT asked for with nothing to write?)"
    ch03_line "$a" "still answers"
    exec {a}>&-
    suite_stop_clean
}

# With `ulimit -n 12` accept() fails with EMFILE after a few clients. The
# server logs it and keeps going; closing a client frees an fd and the
# waiting ones are served.
check_survives_emfile() {
    local fds=() served=() waiting=() i fd line
    server_start bash -c 'ulimit -n 12 && exec "$@"' _ "$@" -p 0
    for ((i = 0; i < 10; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
        fds+=("$fd")
        (printf 'client %d\n' "$i" >&"$fd") 2>/dev/null
    done
    sleep 0.5
    for ((i = 0; i < 10; i++)); do
        line=""
        read -r -t 0.3 line <&"${fds[$i]}" || true
        if [ "$line" = "client $i" ]; then served+=("$i"); else waiting+=("$i"); fi
    done
    ch03_server_exited && ch03_server_gone "the server died when it ran out of fds"
    [ ${#served[@]} -gt 0 ] || fail "no client was served under ulimit -n 12"
    [ ${#waiting[@]} -gt 0 ] || fail "all 10 clients were served under ulimit -n 12: expected EMFILE"
    grep -q 'Too many open files' "$SERVER_ERR" ||
        fail "expected 'accept(...): Too many open files' on stderr, got: $(cat "$SERVER_ERR")"
    for i in "${served[@]}"; do
        fd=${fds[$i]}
        exec {fd}>&-
    done
    for i in "${waiting[@]}"; do
        line=""
        read -r -t 5 line <&"${fds[$i]}" || true
        [ "$line" = "client $i" ] ||
            ch03_server_gone "client $i was not served after fds were freed (got '$line')"
        fd=${fds[$i]}
        exec {fd}>&-
    done
    suite_stop_clean
}
