#!/usr/bin/env bats
# Chapter 01: blocking I/O. The programs of chapters/01-blocking/:
# blocking-cat, file-readiness, echo-blocking, echo-naive, short-write-demo,
# stop-race.

bats_require_minimum_version 1.5.0
load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(chapter_bin echo-blocking)")
}

# ---- blocking-cat ------------------------------------------------------------

@test "blocking-cat copies files of 0, 1, 4096 and 1 MiB + 13 bytes byte for byte" {
    local cat size
    cat="$(chapter_bin blocking-cat)"
    for size in 0 1 4096 $((1024 * 1024 + 13)); do
        payload "$BATS_TEST_TMPDIR/in$size" "$size"
        "$cat" "$BATS_TEST_TMPDIR/in$size" >"$BATS_TEST_TMPDIR/out$size" ||
            fail "blocking-cat exited with status $? on a $size-byte file"
        cmp "$BATS_TEST_TMPDIR/in$size" "$BATS_TEST_TMPDIR/out$size" ||
            fail "copy of a $size-byte file differs: got $(stat -c %s "$BATS_TEST_TMPDIR/out$size") bytes"
    done
}

@test "blocking-cat survives short reads and short writes on files (faults shim)" {
    local cat size
    cat="$(chapter_bin blocking-cat)"
    for size in 0 1 4096 $((1024 * 1024 + 13)); do
        payload "$BATS_TEST_TMPDIR/in$size" "$size"
        env $(faults_env FAULTS_FDS=all FAULTS_SHORT_READ=50 FAULTS_SHORT_WRITE=50) \
            "$cat" "$BATS_TEST_TMPDIR/in$size" >"$BATS_TEST_TMPDIR/out$size" ||
            fail "blocking-cat under faults exited with status $? on a $size-byte file"
        cmp "$BATS_TEST_TMPDIR/in$size" "$BATS_TEST_TMPDIR/out$size" ||
            fail "copy of a $size-byte file under faults differs: got $(stat -c %s "$BATS_TEST_TMPDIR/out$size") bytes"
    done
    faults_injected short_reads short_writes
}

@test "blocking-cat concatenates several files and reads - as standard input" {
    local cat
    cat="$(chapter_bin blocking-cat)"
    printf 'one\n' >"$BATS_TEST_TMPDIR/a"
    printf 'three\n' >"$BATS_TEST_TMPDIR/b"
    run bash -c "printf 'two\n' | '$cat' '$BATS_TEST_TMPDIR/a' - '$BATS_TEST_TMPDIR/b'"
    assert_success
    assert_output "$(printf 'one\ntwo\nthree')"
}

@test "blocking-cat names open() and the path of a missing file, exits 1, copies the rest" {
    local cat
    cat="$(chapter_bin blocking-cat)"
    printf 'kept\n' >"$BATS_TEST_TMPDIR/there"
    run --separate-stderr "$cat" "$BATS_TEST_TMPDIR/nofile" "$BATS_TEST_TMPDIR/there"
    assert_failure 1
    assert_output "kept"
    [[ "$stderr" == *"open($BATS_TEST_TMPDIR/nofile): No such file or directory"* ]] ||
        fail "expected 'open($BATS_TEST_TMPDIR/nofile): No such file or directory' on stderr, got: $stderr"
}

@test "blocking-cat names read() on a directory and write() on a full disk" {
    local cat
    cat="$(chapter_bin blocking-cat)"
    run --separate-stderr "$cat" "$BATS_TEST_TMPDIR"
    assert_failure 1
    [[ "$stderr" == *"read($BATS_TEST_TMPDIR): Is a directory"* ]] ||
        fail "expected 'read(DIR): Is a directory' on stderr, got: $stderr"
    printf 'x\n' >"$BATS_TEST_TMPDIR/x"
    run --separate-stderr bash -c "'$cat' '$BATS_TEST_TMPDIR/x' >/dev/full"
    assert_failure 1
    [[ "$stderr" == *"write(stdout): No space left on device"* ]] ||
        fail "expected 'write(stdout): No space left on device' on stderr, got: $stderr"
}

# ---- file-readiness ------------------------------------------------------------

@test "a regular file is always ready: poll says so, O_NONBLOCK reads it, epoll refuses it" {
    payload "$BATS_TEST_TMPDIR/f" 100000
    run "$(chapter_bin file-readiness)" "$BATS_TEST_TMPDIR/f"
    assert_success
    # the regular file: ready at once, even at end of file; data, then 0, never EAGAIN
    assert_line --index 1 "  poll(POLLIN|POLLOUT, timeout 0): ready now: POLLIN POLLOUT"
    assert_line --index 2 --regexp '^  read\(first 64 KiB, O_NONBLOCK\): 65536 bytes in '
    assert_line --index 3 "  poll(POLLIN, timeout 0): ready now: POLLIN"
    assert_line --index 4 --regexp '^  read\(at end of file, O_NONBLOCK\): 0 bytes in '
    assert_line --index 5 "  epoll_ctl(ADD): Operation not permitted (EPERM)"
    # the empty pipe: not ready, EAGAIN, and epoll takes it
    assert_line --index 7 "  poll(POLLIN, timeout 0): nothing ready"
    assert_line --index 8 "  read(empty, O_NONBLOCK): -1 Resource temporarily unavailable (EAGAIN)"
    assert_line --index 9 "  epoll_ctl(ADD): accepted"
}

# The shared echo suite's cases (binary data, 16 MiB, 200 clients, resets,
# half-close, never-reading client, fd limit, fd growth, idle connections,
# SIGTERM, faults) run from suite-echo-blocking.bats, listed in
# common/servers.txt by make suite. What follows is echo-blocking's own.

# ---- echo-blocking: what blocking means ------------------------------------------

@test "the second client is served only after the first leaves" {
    local a b line
    server_start "${SERVER_CMD[@]}" -p 0
    exec {a}<>"/dev/tcp/127.0.0.1/$PORT"
    printf 'from-a\n' >&"$a"
    read -r -t 10 line <&"$a" || fail "client A got no echo within 10 s"
    [ "$line" = from-a ] || fail "client A: expected 'from-a', got '$line'"

    # B connects (the kernel completes the handshake and queues it) and sends;
    # nobody reads B while the server's one thread is in read() on A.
    exec {b}<>"/dev/tcp/127.0.0.1/$PORT"
    printf 'from-b\n' >&"$b"
    if read -r -t 1 line <&"$b"; then
        fail "client B got '$line' back while client A was still connected"
    fi

    exec {a}>&- # A leaves: the server reads EOF, closes, accepts B
    read -r -t 10 line <&"$b" || fail "client B got no echo within 10 s of client A leaving"
    [ "$line" = from-b ] || fail "client B: expected 'from-b', got '$line'"
    exec {b}>&-

    # The server's log tells the same story, in that order.
    server_stop TERM
    run grep -o '^client [^ ]* \(connected\|done\)' "$SERVER_OUT"
    assert_equal "${#lines[@]}" 4
    [[ "${lines[0]}" == *connected && "${lines[1]}" == *done && "${lines[2]}" == *connected ]] ||
        fail "expected A connected, A done, B connected, B done; the log says: ${lines[*]}"
    [ "${lines[0]% *}" = "${lines[1]% *}" ] || fail "the first client to finish was not the first to connect: ${lines[*]}"
}

@test "while blocked in accept() the server sleeps in the kernel and uses no CPU" {
    local before after
    server_start "${SERVER_CMD[@]}" -p 0
    wait_blocked_in accept
    grep -q '^State:.*S (sleeping)' "/proc/$SERVER_PID/status" ||
        fail "expected state S (sleeping), got: $(grep '^State' "/proc/$SERVER_PID/status")"
    before=$(cpu_ticks "$SERVER_PID")
    sleep 1
    after=$(cpu_ticks "$SERVER_PID")
    # a clock tick is usually 10 ms; allow a few for the scheduler's rounding
    [ $((after - before)) -le 5 ] ||
        fail "a sleeping server used $((after - before)) CPU ticks in 1 s (before $before, after $after)"
    stop_within 5 TERM
}

@test "SIGTERM while blocked in accept() exits 0 within 5 s" {
    server_start "${SERVER_CMD[@]}" -p 0
    wait_blocked_in accept
    stop_within 5 TERM
}

@test "SIGINT while blocked in accept() exits 0 within 5 s" {
    server_start "${SERVER_CMD[@]}" -p 0
    wait_blocked_in accept
    stop_within 5 INT
}

@test "SIGTERM while blocked in read() of a connected client exits 0 within 5 s" {
    local fd line
    server_start "${SERVER_CMD[@]}" -p 0
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
    printf 'ping\n' >&"$fd"
    read -r -t 10 line <&"$fd" || fail "no echo"
    wait_blocked_in read
    stop_within 5 TERM
    # the server closed our connection on its way out: we read EOF
    if read -r -t 5 line <&"$fd"; then
        fail "expected EOF after the server stopped, got '$line'"
    fi
    exec {fd}>&-
}

@test "SIGTERM while blocked in write() to a client that never reads exits 0 within 5 s" {
    server_start "${SERVER_CMD[@]}" -p 0
    flood_never_reading
    wait_blocked_in write
    stop_within 5 TERM
    flood_end
}

# ---- echo-naive: the bug of ignoring write()'s count -------------------------------

@test "echo-naive loses bytes under short writes; echo-blocking returns every byte" {
    local in="$BATS_TEST_TMPDIR/in" sent got
    payload "$in" 1000000
    sent=$(stat -c %s "$in")

    server_start env $(faults_env FAULTS_SHORT_WRITE=50) "$(chapter_bin echo-naive)" -p 0
    run_client -p "$PORT" <"$in" >"$in.naive" || fail "echo-client against echo-naive: status $?"
    server_stop TERM
    got=$(stat -c %s "$in.naive")
    [ "$(faults_count short_writes)" -gt 0 ] || fail "the shim injected no short writes"
    [ "$got" -lt "$sent" ] || fail "expected echo-naive to lose bytes: sent $sent, got $got back"
    # and its log claims it echoed them all: it counted what it offered, not what went out
    grep -q "done, $sent bytes echoed" "$SERVER_OUT" ||
        fail "expected echo-naive's log to claim $sent bytes echoed: $(cat "$SERVER_OUT")"

    rm -f "$BATS_TEST_TMPDIR/faults.log"
    server_start env $(faults_env FAULTS_SHORT_WRITE=50) "$(chapter_bin echo-blocking)" -p 0
    run_client -p "$PORT" <"$in" >"$in.blocking" || fail "echo-client against echo-blocking: status $?"
    server_stop TERM
    [ "$(faults_count short_writes)" -gt 0 ] || fail "the shim injected no short writes"
    cmp -s "$in" "$in.blocking" ||
        fail "echo-blocking under the same faults: sent $sent bytes, got $(stat -c %s "$in.blocking")"
}

@test "echo-naive meets the server contract apart from the bug (echo, SIGTERM)" {
    server_start "$(chapter_bin echo-naive)" -p 0
    run run_client -p "$PORT" hello
    assert_success
    assert_output hello
    stop_within 5 TERM
}

@test "echo-naive stops as echo-blocking does: 40 starts, SIGTERM at another moment each time, all exit 0" {
    SERVER_CMD=("$(chapter_bin echo-naive)")
    suite_stop_anytime 40
}

# ---- stop-race: a stop flag and a blocking call --------------------------------

@test "stop-race flag: a SIGTERM between the flag test and read() is lost: read() sleeps until the 1 s watchdog" {
    run timeout 10 "$(chapter_bin stop-race)" flag
    [ "$status" -eq 1 ] || fail "expected exit status 1 (the signal lost), got $status: $output"
    assert_line --index 0 "flag tested: 0"
    assert_line --index 1 "SIGTERM sent: its handler ran and set the flag to 1"
    assert_line --index 2 --regexp '^read\(\) on the connection returned -1 \(Interrupted system call\) after (0\.9[5-9]|1\.[0-9][0-9]) s$'
    assert_line --index 3 --partial "the signal was lost"
}

@test "stop-race shutdown: the handler shuts the sockets down, so read() returns 0 and accept() fails with EINVAL at once" {
    run timeout 10 "$(chapter_bin stop-race)" shutdown
    assert_success
    assert_line --index 2 --regexp '^read\(\) on the connection returned 0 after 0\.[0-4][0-9] s$'
    assert_line --index 3 "accept() on the listener returned -1 (Invalid argument)"
    assert_line --index 4 --partial "stopped at once"
}

@test "stop-race ppoll: SIGTERM blocked outside ppoll() waits, pending, and interrupts ppoll() at once" {
    run timeout 10 "$(chapter_bin stop-race)" ppoll
    assert_success
    assert_line --index 1 "SIGTERM sent: blocked, so it waits, pending; the flag is still 0"
    assert_line --index 2 --regexp '^ppoll\(\) on the connection, with SIGTERM unblocked, returned -1 \(Interrupted system call\) after 0\.[0-4][0-9] s$'
    assert_line --index 3 --partial "stopped at once"
}

@test "stop-race with a wrong argument: usage on stderr, exit 2" {
    run --separate-stderr "$(chapter_bin stop-race)" sometimes
    assert_failure 2
    assert_equal "$output" ""
    [[ "$stderr" == "usage: stop-race flag|shutdown|ppoll"* ]] || fail "expected the usage on stderr, got: $stderr"
}

# load_seconds ARGS...: start echo-blocking ARGS under short writes, run
# echo-load (100 messages of 3000 bytes), set LOAD_SECONDS to its "seconds".
load_seconds() {
    server_start env $(faults_env FAULTS_SHORT_WRITE=50) "$(chapter_bin echo-blocking)" "$@" -p 0
    run timeout 60 "$(tool_bin echo-load)" -p "$PORT" -n 100 -l 3000
    assert_success
    assert_output --partial "errors 0"
    stop_within 10 TERM
    LOAD_SECONDS=$(sed -n 's/.* seconds \([0-9.]*\).*/\1/p' <<<"$output")
    [ -n "$LOAD_SECONDS" ] || fail "no 'seconds' in echo-load's report: $output"
}

@test "after short writes, Nagle's algorithm stalls the echo unless TCP_NODELAY is set (-N leaves it on)" {
    local fast slow
    load_seconds
    fast=$LOAD_SECONDS
    load_seconds -N
    slow=$LOAD_SECONDS
    echo "TCP_NODELAY: $fast s, Nagle on: $slow s"
    awk -v f="$fast" -v s="$slow" 'BEGIN { exit !(s >= 4 * f) }' ||
        fail "expected the run with Nagle on to take at least 4 times as long: TCP_NODELAY $fast s, Nagle $slow s"
}

# ---- short-write-demo: the kernel's own short writes -------------------------------

@test "a blocking write() to a peer that does not read returns a short count, or EINTR, when a signal comes" {
    local total=16777216
    run "$(chapter_bin short-write-demo)"
    assert_success
    echo "$output"
    assert_line --index 0 "no SA_RESTART, peer not reading:"
    assert_line --index 3 "SA_RESTART, peer not reading:"
    local re='returned (-?[0-9]+) after ([0-9.]+) s'
    local counts=() times=() i
    for i in 1 2 4 5; do
        [[ "${lines[$i]}" =~ $re ]] || fail "line $i has no 'returned N after T s': ${lines[$i]}"
        counts+=("${BASH_REMATCH[1]}")
        times+=("${BASH_REMATCH[2]}")
    done
    # without SA_RESTART: a short count, then -1 EINTR, each after the 1 s timer
    [ "${counts[0]}" -gt 0 ] && [ "${counts[0]}" -lt $total ] ||
        fail "expected a short count (0 < n < $total), got ${counts[0]}"
    [ "${counts[1]}" -eq -1 ] && [[ "${lines[2]}" == *"Interrupted system call"* ]] ||
        fail "expected -1 with EINTR, got: ${lines[2]}"
    # with SA_RESTART: still a short count; and the write that had copied
    # nothing was restarted by the first signal, ending only at the 2 s reset
    [ "${counts[2]}" -gt 0 ] && [ "${counts[2]}" -lt $total ] ||
        fail "expected a short count with SA_RESTART too, got ${counts[2]}"
    [ "${counts[3]}" -eq -1 ] || fail "expected -1 once the peer reset, got ${counts[3]}"
    # timers never fire early, so these lower bounds hold on any machine
    for i in 0 1 2; do
        awk -v t="${times[$i]}" 'BEGIN { exit !(t >= 0.9) }' ||
            fail "write $i returned after ${times[$i]} s: it did not block until the signal"
    done
    awk -v t="${times[3]}" 'BEGIN { exit !(t >= 1.9) }' ||
        fail "the SA_RESTART write returned after ${times[3]} s: the first signal ended it"
}

# ---- the default address ------------------------------------------------------

# network_address: this machine's first IPv4 address that is not loopback.
network_address() {
    { ip -4 -o addr show scope global 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4 }'
      hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9.]+$'; } | grep -v '^127\.' | head -n 1
}

@test "bound to 127.0.0.1 by default, the server is unreachable at the network address; bound to 0.0.0.0 it is reachable" {
    local ip
    ip="$(network_address)"
    [ -n "$ip" ] || skip "this machine has no IPv4 address besides loopback"
    server_start "${SERVER_CMD[@]}" -p 0
    head -n 1 "$SERVER_OUT" | grep -q '^listening on 127\.0\.0\.1:' ||
        fail "expected the default address 127.0.0.1, got: $(head -n 1 "$SERVER_OUT")"
    run run_client -b "$ip" -p "$PORT" hi
    assert_failure
    [[ "$output" == *"Connection refused"* ]] || fail "expected Connection refused at $ip:$PORT, got: $output"
    stop_within 10 TERM

    server_start "${SERVER_CMD[@]}" -b 0.0.0.0 -p 0
    run run_client -b "$ip" -p "$PORT" hi
    assert_success
    assert_output hi
    stop_within 10 TERM
}

# ---- arguments -------------------------------------------------------------

@test "bad arguments: usage on stderr and exit 2; -h: usage on stdout and exit 0" {
    local prog args
    for prog in echo-blocking echo-naive; do
        for args in "-p notaport" "-b nowhere" "-x" "extra"; do
            run --separate-stderr "$(chapter_bin "$prog")" $args
            [ "$status" -eq 2 ] || fail "$prog $args: expected exit 2, got $status"
            [[ "$stderr" == *usage:* ]] || fail "$prog $args: no usage on stderr: $stderr"
        done
    done
    run --separate-stderr "$(chapter_bin blocking-cat)"
    [ "$status" -eq 2 ] && [[ "$stderr" == *usage:* ]] || fail "blocking-cat with no FILE: status $status, stderr: $stderr"
    run --separate-stderr "$(chapter_bin blocking-cat)" -x
    [ "$status" -eq 2 ] && [[ "$stderr" == *usage:* ]] || fail "blocking-cat -x: status $status, stderr: $stderr"
    run --separate-stderr "$(chapter_bin file-readiness)"
    [ "$status" -eq 2 ] && [[ "$stderr" == *usage:* ]] || fail "file-readiness with no FILE: status $status, stderr: $stderr"
    run --separate-stderr "$(chapter_bin short-write-demo)" extra
    [ "$status" -eq 2 ] && [[ "$stderr" == *usage:* ]] || fail "short-write-demo extra: status $status, stderr: $stderr"
    for prog in echo-blocking echo-naive blocking-cat file-readiness short-write-demo; do
        run --separate-stderr "$(chapter_bin "$prog")" -h
        [ "$status" -eq 0 ] && [[ "$output" == *usage:* ]] || fail "$prog -h: status $status, stdout: $output"
    done
}
