#!/usr/bin/env bats
# test-long: the .NET runtime started under strace and under ulimit sweeps, about 30 s of test time; the two C# servers' shared suite (suite-echo-dotnet-*.bats) stays in make test
# Chapter 05's C# programs (chapters/05-epoll-edge/dotnet/): the two echo
# servers beyond the shared suite (their suite-echo-dotnet-*.bats), what
# strace shows .NET doing with epoll underneath them, and saea-recursion,
# the stack-depth hazard of handling SocketAsyncEventArgs' "completed at
# once" by recursion. Each test skips, saying why, without the .NET SDK.

load ../helpers/common
load ../helpers/echo_suite

setup() {
    require_dotnet
}

# ---- the servers' contract ----------------------------------------------------------

@test "echo-dotnet-async and echo-dotnet-saea: -h prints the usage, a bad argument exits 2 naming it" {
    local s
    for s in echo-dotnet-async echo-dotnet-saea; do
        run "$(chapter_bin "$s")" -h
        assert_success
        assert_line --index 0 "usage: $s [-b ADDR] [-p PORT]"
        assert_output --partial "  -p PORT   port to listen on, 0 for any free port (default 8080)"
        run "$(chapter_bin "$s")" -p 70000
        [ "$status" -eq 2 ] || fail "$s -p 70000: expected exit status 2, got $status"
        assert_line --index 0 "$s: -p 70000: not a port number (0-65535)"
        run "$(chapter_bin "$s")" -b 10.1
        [ "$status" -eq 2 ] || fail "$s -b 10.1: expected exit status 2, got $status"
        assert_line --index 0 "$s: -b 10.1: not an IPv4 address"
        run "$(chapter_bin "$s")" -x
        [ "$status" -eq 2 ] || fail "$s -x: expected exit status 2, got $status"
        assert_line --index 0 "$s: unknown option -x"
    done
}

@test "echo-dotnet-async and echo-dotnet-saea: SIGINT, like SIGTERM, stops them with a client connected, exit 0" {
    local s a
    for s in echo-dotnet-async echo-dotnet-saea; do
        server_start "$(chapter_bin "$s")" -p 0
        conn_open a
        expect_echo "$a" ping
        stop_within 5 INT
        exec {a}>&-
    done
}

# ---- a low limit on open files ---------------------------------------------------------

# The .NET runtime holds about 60 descriptors before it listens, and the
# servers keep 32 more spare (ServerCli.MaxClients says why). Under a limit
# that leaves no room for a client they refuse to start, in one line.

# under_limit N SERVER: run SERVER -p 0 under `ulimit -n N` until it prints
# its port or exits; sets LIMIT_STATUS (empty while it runs: then it is the
# server of server_start's variables, with $PORT), LIMIT_OUT and LIMIT_ERR.
under_limit() {
    LIMIT_STATUS=""
    LIMIT_OUT="$BATS_TEST_TMPDIR/limit-$2-$1.out"
    LIMIT_ERR="$BATS_TEST_TMPDIR/limit-$2-$1.err"
    # no core file: a crash is reported by the status
    bash -c 'ulimit -c 0; ulimit -n "$0" && exec "$@"' "$1" "$(chapter_bin "$2")" -p 0 >"$LIMIT_OUT" 2>"$LIMIT_ERR" 3>&- &
    SERVER_PID=$!
    SERVER_OUT=$LIMIT_OUT
    SERVER_ERR=$LIMIT_ERR
    _course_pids+=("$SERVER_PID")
    local i
    for ((i = 0; i < 200; i++)); do
        if grep -q '^listening on ' "$LIMIT_OUT"; then
            PORT=$(sed -n 's/^listening on [0-9.]*:\([0-9]*\)$/\1/p' "$LIMIT_OUT")
            return 0
        fi
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            LIMIT_STATUS=0
            wait "$SERVER_PID" || LIMIT_STATUS=$?
            return 0
        fi
        sleep 0.05
    done
    fail "$2 under ulimit -n $1: neither a port nor an exit within 10 s"
}

# refused N SERVER: it exited 1 before listening, with one line on stderr
# that names the limit.
refused() {
    [ "$LIMIT_STATUS" = 1 ] || fail "$2 under ulimit -n $1: expected exit status 1, got ${LIMIT_STATUS:-none (it listens)}
--- stderr ---
$(cat "$LIMIT_ERR")"
    [ ! -s "$LIMIT_OUT" ] || fail "$2 under ulimit -n $1: expected nothing on stdout, got: $(cat "$LIMIT_OUT")"
    [ "$(wc -l <"$LIMIT_ERR")" -eq 1 ] || fail "$2 under ulimit -n $1: expected one line on stderr, got:
$(cat "$LIMIT_ERR")"
    grep -Eq "^$2: ulimit -n $1 (leaves no room for clients|is too low): the \.NET runtime " "$LIMIT_ERR" ||
        fail "$2 under ulimit -n $1: unexpected message: $(cat "$LIMIT_ERR")"
}

@test "echo-dotnet-async and echo-dotnet-saea: under ulimit -n 64 they refuse to start, in one line on stderr, exit 1: no port printed, no unhandled exception" {
    local s
    for s in echo-dotnet-async echo-dotnet-saea; do
        under_limit 64 "$s"
        echo "# $s, ulimit -n 64: exit ${LIMIT_STATUS:-none}: $(cat "$LIMIT_ERR")" >&3
        refused 64 "$s"
        grep -q '^[^:]*: ulimit -n 64 leaves no room for clients: the \.NET runtime holds [0-9]* descriptors already and keeps 32 spare; raise the limit' "$LIMIT_ERR" ||
            fail "$s: expected the count of descriptors the runtime holds: $(cat "$LIMIT_ERR")"
    done
}

# Below about 20 the runtime cannot start at all, and says so itself
# ("Failed to create CoreCLR"); from there up, this is the servers' answer.
@test "echo-dotnet-async and echo-dotnet-saea: from ulimit -n 24 to 1024 they refuse in one line or serve, clients beyond the limit included; never an unhandled exception" {
    local s n fds=() fd i line served verdicts
    for s in echo-dotnet-async echo-dotnet-saea; do
        verdicts=""
        for n in 24 32 48 64 80 100 256 1024; do
            under_limit "$n" "$s"
            ! grep -q 'Unhandled exception' "$LIMIT_ERR" || fail "$s under ulimit -n $n: $(head -n 5 "$LIMIT_ERR")"
            if [ -n "$LIMIT_STATUS" ]; then
                refused "$n" "$s"
                verdicts+=" $n:refused"
                continue
            fi
            # it serves: 20 clients more than the limit (the test's own
            # limit permitting), each with a line to echo
            fds=()
            if [ "$n" -le 256 ]; then
                for ((i = 0; i < n + 20; i++)); do
                    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || fail "$s under ulimit -n $n: connect $i failed"
                    fds+=("$fd")
                    (printf 'client %d\n' "$i" >&"$fd") 2>/dev/null
                done
                sleep 0.5
            fi
            served=0
            # (a figure, not a check: who has an answer waiting by now;
            # read -t 0 does not wait, so the clients left out cost nothing)
            for fd in "${fds[@]}"; do
                read -r -t 0 <&"$fd" 2>/dev/null && served=$((served + 1))
            done
            server_alive || server_gone "$s under ulimit -n $n, with $((n + 20)) clients"
            for fd in "${fds[@]}"; do exec {fd}>&-; done
            client_echo "after the others"
            stop_within 5
            ! grep -q 'Unhandled exception' "$LIMIT_ERR" || fail "$s under ulimit -n $n: $(head -n 5 "$LIMIT_ERR")"
            verdicts+=" $n:served"
            [ ${#fds[@]} -eq 0 ] || verdicts+="($served of ${#fds[@]} clients at once)"
        done
        echo "# $s:$verdicts" >&3
        [[ "$verdicts" == *" 64:refused"* ]] || fail "$s: expected a refusal under ulimit -n 64:$verdicts"
        [[ "$verdicts" == *" 256:served"* ]] || fail "$s: expected it to serve under ulimit -n 256:$verdicts"
    done
}

# The shared suite's fd_limit case runs under ulimit -n 64, where these
# servers refuse to start (servers.txt says so); here the same case with
# room for the runtime: 200 clients under ulimit -n 128.
@test "echo-dotnet-async: under ulimit -n 128, 200 connection attempts: no crash, no busy loop, and it serves again afterwards" {
    SERVER_CMD=("$(chapter_bin echo-dotnet-async)")
    suite_fd_limit_no_spin 128 200
    grep -q 'as many as the limit on open files leaves room for' "$SERVER_ERR" ||
        fail "expected the server to say it stopped accepting at its limit; stderr: $(cat "$SERVER_ERR")"
}

@test "echo-dotnet-saea: under ulimit -n 128, 200 connection attempts: no crash, no busy loop, and it serves again afterwards" {
    SERVER_CMD=("$(chapter_bin echo-dotnet-saea)")
    suite_fd_limit_no_spin 128 200
}

@test "echo-dotnet-saea: most operations of a ping-pong echo complete at once, and it says how many on exit" {
    server_start "$(chapter_bin echo-dotnet-saea)" -p 0
    run timeout 60 "$(tool_bin echo-load)" -p "$PORT" -c 4 -n 200 -l 128
    assert_success
    assert_output --partial "errors 0"
    stop_within 5
    local line at_once pending
    line=$(grep '^completed at once ' "$SERVER_OUT") || fail "no counts on exit: $(cat "$SERVER_OUT")"
    echo "# 800 messages on 4 connections: $line" >&3
    at_once=$(sed -n 's/^completed at once \([0-9]*\), pending \([0-9]*\)$/\1/p' <<<"$line")
    pending=$(sed -n 's/^completed at once \([0-9]*\), pending \([0-9]*\)$/\2/p' <<<"$line")
    # every send of 128 bytes completes at once: 800 at least, without the receives
    [ "${at_once:-0}" -ge 800 ] || fail "expected at least 800 operations completed at once (the sends), got: $line"
    [ "${pending:-0}" -ge 1 ] || fail "expected some pending operations (receives that waited for epoll), got: $line"
}

# ---- what .NET does with epoll underneath ---------------------------------------------

@test "echo-dotnet-async: the thread asleep in epoll_wait() is named '.NET Sockets', beside the pool's '.NET TP Worker' threads" {
    local nr t comm now=() sockets="" names
    nr=$(syscall_numbers epoll_wait)
    [ -n "$nr" ] || skip "no epoll_wait system call number for $(uname -m) in tests/helpers/common.bash"
    server_start "$(chapter_bin echo-dotnet-async)" -p 0
    run_client -p "$PORT" "warm up" >/dev/null
    for t in /proc/"$SERVER_PID"/task/*; do
        comm=$(cat "$t/comm")
        now=()
        read -r -a now <"$t/syscall" 2>/dev/null || skip "/proc/PID/task/TID/syscall is not readable here (ptrace policy)"
        [[ "${now[0]}" =~ ^($nr)$ ]] && sockets+="$comm,"
    done
    names=$(cat /proc/"$SERVER_PID"/task/*/comm | sort | uniq -c | awk '{ $1 = $1; print }' | paste -sd, -)
    echo "# threads: $names; in epoll_wait: ${sockets%,}" >&3
    [ "$sockets" = ".NET Sockets," ] || fail "expected one thread in epoll_wait, named '.NET Sockets'; in epoll_wait: '${sockets%,}' (threads: $names)"
    grep -q '^\.NET TP Worker$' /proc/"$SERVER_PID"/task/*/comm || fail "no '.NET TP Worker' thread (threads: $names)"
    # chapter 06: signals reach managed code through a pipe read by this thread
    grep -q '^\.NET SigHandler$' /proc/"$SERVER_PID"/task/*/comm || fail "no '.NET SigHandler' thread (threads: $names)"
    stop_within 5
}

@test "echo-dotnet-async: strace shows each socket added once, EPOLLIN|EPOLLOUT|EPOLLET, no EPOLLRDHUP, never modified" {
    require_strace
    local trace="$BATS_TEST_TMPDIR/epoll_ctl" fds=() fd i adds others
    server_start strace -f -qq -e trace=epoll_ctl -o "$trace" "$(chapter_bin echo-dotnet-async)" -p 0
    # 5 clients that wait between messages, so that each receive must wait in epoll
    for ((i = 0; i < 5; i++)); do
        conn_open fd
        fds+=("$fd")
    done
    for i in 1 2 3; do
        sleep 0.1
        for fd in "${fds[@]}"; do expect_echo "$fd" "message $i"; done
    done
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    traced_stop
    [ "$SERVER_STATUS" -eq 0 ] || fail "expected exit status 0 after SIGTERM, got $SERVER_STATUS"
    echo "# $(grep -m 2 EPOLL_CTL_ADD "$trace" | sed 's/^[0-9]* *//' | paste -sd ' ' -)" >&3
    adds=$(grep -c 'EPOLL_CTL_ADD, [0-9]*, {events=EPOLLIN|EPOLLOUT|EPOLLET, ' "$trace")
    others=$(grep -v 'EPOLL_CTL_ADD, [0-9]*, {events=EPOLLIN|EPOLLOUT|EPOLLET, ' "$trace" | grep -c 'epoll_ctl(' || true)
    # the listener and the 5 clients
    [ "$adds" -eq 6 ] || fail "expected 6 EPOLL_CTL_ADD with EPOLLIN|EPOLLOUT|EPOLLET (listener + 5 clients), got $adds:
$(cat "$trace")"
    [ "$others" -eq 0 ] || fail "expected no other epoll_ctl() (no MOD, no DEL, no EPOLLRDHUP), got:
$(grep 'epoll_ctl(' "$trace" | grep -v 'EPOLL_CTL_ADD, [0-9]*, {events=EPOLLIN|EPOLLOUT|EPOLLET, ')"
    # data is not the fd: the engine's own small numbers, 0 for the listener
    grep -q 'EPOLL_CTL_ADD, [0-9]*, {[^}]*, data={u32=0, u64=0}}' "$trace" ||
        fail "expected the first socket (the listener) registered with data 0: $(grep EPOLL_CTL_ADD "$trace")"
    ! sed -n 's/.*EPOLL_CTL_ADD, \([0-9]*\), .*u64=\([0-9]*\)}}.*/\1 \2/p' "$trace" | awk '$1 == $2 { found = 1 } END { exit !found }' ||
        fail "expected epoll_event.data to differ from the fd in every EPOLL_CTL_ADD: $(grep EPOLL_CTL_ADD "$trace")"
}

# thread_calls PREFIX: run `strace -f` on echo-dotnet-async (with the
# environment given before it, if any) while 3 clients send 3 messages each,
# 0.1 s apart, so that every receive waits for epoll; print
# "COUNT THREAD-NAME CALL" for its epoll_wait, recvfrom and sendto calls.
thread_calls() {
    local trace="$BATS_TEST_TMPDIR/trace" names="$BATS_TEST_TMPDIR/names" t fd fds=() i
    server_start "$@" strace -f -qq -e trace=epoll_wait,recvfrom,sendto -o "$trace" "$(chapter_bin echo-dotnet-async)" -p 0
    for ((i = 0; i < 3; i++)); do
        conn_open fd
        fds+=("$fd")
    done
    for i in 1 2 3; do
        sleep 0.1
        for fd in "${fds[@]}"; do expect_echo "$fd" "message $i"; done
    done
    traced_child
    for t in /proc/"$TRACED_PID"/task/*; do echo "${t##*/} $(cat "$t/comm")"; done >"$names"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    traced_stop
    awk 'NR == FNR { tid = $1; sub(/^[0-9]+ /, ""); name[tid] = $0; next }
         $2 ~ /^[a-z_0-9]+[(]/ { call = $2; sub(/\(.*/, "", call); print (($1 in name) ? name[$1] : "thread " $1) " " call }' \
        "$names" "$trace" | sort | uniq -c | awk '{ $1 = $1; print }'
}

@test "echo-dotnet-async: DOTNET_SYSTEM_NET_SOCKETS_THREAD_COUNT=3 makes three '.NET Sockets' threads; INLINE_COMPLETIONS=1 receives and sends on them" {
    require_strace
    local by n
    by=$(thread_calls env DOTNET_SYSTEM_NET_SOCKETS_THREAD_COUNT=3)
    n=$(grep -c ' \.NET Sockets$' "$BATS_TEST_TMPDIR/names" || true)
    echo "# THREAD_COUNT=3: $n '.NET Sockets' threads; $(paste -sd, - <<<"$by")" >&3
    [ "$n" -eq 3 ] || fail "expected 3 '.NET Sockets' threads, got $n: $(cut -d' ' -f2- "$BATS_TEST_TMPDIR/names" | sort | uniq -c)"
    by=$(thread_calls env DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1)
    echo "# INLINE_COMPLETIONS=1: $(paste -sd, - <<<"$by")" >&3
    grep -q ' \.NET Sockets recvfrom$' <<<"$by" && grep -q ' \.NET Sockets sendto$' <<<"$by" ||
        fail "expected recvfrom and sendto on the '.NET Sockets' threads: $by"
}

# strace_c SERVER N FILE: the server under `strace -f -c -o FILE` while
# echo-load sends N ping-pong messages of 128 bytes on each of 10 connections.
strace_c() {
    server_start strace -f -c -o "$3" "$(chapter_bin "$1")" -p 0
    run timeout 120 "$(tool_bin echo-load)" -p "$PORT" -c 10 -n "$2" -l 128
    assert_success
    assert_output --partial "errors 0"
    traced_stop
    [ "$SERVER_STATUS" -eq 0 ] || fail "$1: expected exit status 0 after SIGTERM, got $SERVER_STATUS"
}

# What chapter 05's .NET section says a message costs. No receive, send or
# epoll_wait happens before the first client, so the run's totals are the
# messages' (and the accepts' and the ends', a few dozen calls).
@test "echo-dotnet-async and echo-dotnet-saea: strace -f -c, 10,000 messages on 10 connections: one send each, one to two receives, at most one epoll_wait, one epoll_ctl per connection" {
    require_strace
    local s trace="$BATS_TEST_TMPDIR/strace-c" msgs=10000 recvs sends waits yields ctls
    for s in echo-dotnet-async echo-dotnet-saea; do
        strace_c "$s" 1000 "$trace"
        recvs=$(calls_of "$trace" recvfrom)
        sends=$(calls_of "$trace" sendto)
        waits=$(calls_of "$trace" epoll_wait)
        yields=$(calls_of "$trace" sched_yield)
        ctls=$(calls_of "$trace" epoll_ctl)
        echo "# $s, $msgs messages: sendto $sends, recvfrom $recvs, epoll_wait $waits, sched_yield $yields, epoll_ctl $ctls (under strace)" >&3
        [ "$sends" -ge "$msgs" ] && [ "$sends" -le $((msgs + 20)) ] ||
            fail "$s: expected one sendto per message ($msgs), got $sends: $(cat "$trace")"
        [ "$recvs" -ge "$msgs" ] && [ "$recvs" -le $((2 * msgs + 50)) ] ||
            fail "$s: expected one to two recvfrom per message ($msgs to $((2 * msgs))), got $recvs: $(cat "$trace")"
        [ "$waits" -gt 0 ] && [ "$waits" -le $((msgs + 20)) ] ||
            fail "$s: expected at most one epoll_wait per message ($msgs), got $waits: $(cat "$trace")"
        # the listener and at most the 10 clients; none per message, none to close
        [ "$ctls" -ge 1 ] && [ "$ctls" -le 11 ] ||
            fail "$s: expected at most 11 epoll_ctl (listener + 10 clients), got $ctls: $(cat "$trace")"
    done
}

@test "echo-dotnet-async and echo-dotnet-saea: strace -f, every epoll_wait is the '.NET Sockets' thread's, and the receives and sends are the pool's '.NET TP Worker' threads', none the engine's" {
    require_strace
    local s trace="$BATS_TEST_TMPDIR/trace" names="$BATS_TEST_TMPDIR/names" t by
    for s in echo-dotnet-async echo-dotnet-saea; do
        server_start strace -f -qq -e trace=epoll_wait,recvfrom,sendto -o "$trace" "$(chapter_bin "$s")" -p 0
        run timeout 120 "$(tool_bin echo-load)" -p "$PORT" -c 10 -n 100 -l 128
        assert_success
        assert_output --partial "errors 0"
        traced_child
        for t in /proc/"$TRACED_PID"/task/*; do echo "${t##*/} $(cat "$t/comm")"; done >"$names"
        traced_stop
        # thread name and call of each traced call: ".NET Sockets epoll_wait"
        by=$(awk 'NR == FNR { tid = $1; sub(/^[0-9]+ /, ""); name[tid] = $0; next }
                  $2 ~ /^[a-z_0-9]+[(]/ { call = $2; sub(/\(.*/, "", call); print (($1 in name) ? name[$1] : "thread " $1) " " call }' \
            "$names" "$trace" | sort | uniq -c | awk '{ $1 = $1; print }')
        echo "# $s: $(paste -sd, - <<<"$by")" >&3
        grep -q ' \.NET Sockets epoll_wait$' <<<"$by" || fail "$s: no epoll_wait on '.NET Sockets': $by"
        ! grep -v ' \.NET Sockets epoll_wait$' <<<"$by" | grep -q ' epoll_wait$' ||
            fail "$s: epoll_wait on another thread: $by"
        grep -q ' \.NET TP Worker recvfrom$' <<<"$by" && grep -q ' \.NET TP Worker sendto$' <<<"$by" ||
            fail "$s: expected recvfrom and sendto on '.NET TP Worker' threads: $by"
        ! grep -q ' \.NET Sockets \(recvfrom\|sendto\)$' <<<"$by" ||
            fail "$s: recvfrom or sendto on the engine's thread, without INLINE_COMPLETIONS: $by"
        # Most are the pool's. An operation that completes at once runs on
        # the thread that started it: under load, the first receive after an
        # accept can finish on the thread that accepted (echo-dotnet-saea's
        # main thread), so "every one" would hold only on a quiet machine.
        local pool all
        pool=$(awk '/ \.NET TP Worker (recvfrom|sendto)$/ { n += $1 } END { print n + 0 }' <<<"$by")
        all=$(awk '/ (recvfrom|sendto)$/ { n += $1 } END { print n + 0 }' <<<"$by")
        [ $((pool * 2)) -gt "$all" ] || fail "$s: only $pool of $all recvfrom and sendto on '.NET TP Worker' threads: $by"
    done
}

# ---- saea-recursion ------------------------------------------------------------------

@test "saea-recursion: handled in a loop, 65,536 receives that finish at once stay one call deep" {
    run timeout 60 "$(chapter_bin saea-recursion)"
    assert_success
    assert_line --index 0 "65536 bytes queued, received 1 at a time on a thread with a 1024 KiB stack, a receive that finished at once handled by a loop"
    assert_line --regexp '^received 65536 bytes: [0-9]+ receives finished at once, [0-9]+ pending$'
    assert_line "deepest nesting: 1 handler call, 0 KiB of stack"
}

@test "saea-recursion -r: by recursion, each receive that finishes at once is one call deeper" {
    run timeout 60 "$(chapter_bin saea-recursion)" -r -n 1000
    assert_success
    assert_line "received 1000 bytes: 1001 receives finished at once, 0 pending"
    assert_line --regexp '^deepest nesting: 1001 handler calls, [0-9]+ KiB of stack \([0-9]+ bytes a call\)$'
}

@test "saea-recursion -r: 65,536 of them overflow a 1 MiB stack, and the process dies (SIGABRT), no catch possible" {
    # no core file for a crash we expect
    run bash -c 'ulimit -c 0; exec timeout 60 "$0" -r 2>"$1"' "$(chapter_bin saea-recursion)" "$BATS_TEST_TMPDIR/stderr"
    [ "$status" -eq 134 ] || fail "expected status 134 (SIGABRT), got $status; stdout: $output; stderr: $(head -n 5 "$BATS_TEST_TMPDIR/stderr")"
    [ "$(head -n 1 "$BATS_TEST_TMPDIR/stderr")" = "Stack overflow." ] ||
        fail "expected 'Stack overflow.' first on stderr, got: $(head -n 3 "$BATS_TEST_TMPDIR/stderr")"
    echo "# stderr: $(head -n 1 "$BATS_TEST_TMPDIR/stderr") and $(($(wc -l <"$BATS_TEST_TMPDIR/stderr") - 1)) lines of stack trace" >&3
    refute_output --partial "deepest nesting"
}

# ---- the stacks of .NET's threads (chapter 00's .NET section) -------------------------

# clone3() shows each new thread's stack size; .NET takes the default from
# the stack limit, as glibc does for pthreads.
@test "echo-dotnet-async: the runtime's threads get the stack size ulimit -s sets (8 MiB, then 2 MiB under ulimit -s 2048)" {
    require_strace
    local trace="$BATS_TEST_TMPDIR/clone" kib sizes want
    for kib in 8192 2048; do
        server_start bash -c 'ulimit -s "$1" && exec strace -f -qq -e trace=clone3 -o "$2" "$3" -p 0' _ "$kib" "$trace" "$(chapter_bin echo-dotnet-async)"
        run_client -p "$PORT" "warm up" >/dev/null
        traced_stop
        sizes=$(grep -o 'stack_size=0x[0-9a-f]*' "$trace" | sort | uniq -c | awk '{ $1 = $1; print }' | paste -sd, -)
        echo "# ulimit -s $kib: clone3 $sizes" >&3
        # clone3 is passed the limit less 128 bytes (0x7fff80 for 8 MiB)
        want=$(printf 'stack_size=0x%x' $((kib * 1024 - 128)))
        [ "$(grep -c "$want" "$trace")" -ge 5 ] ||
            fail "ulimit -s $kib: expected most threads created with $want, got: $sizes"
    done
}
