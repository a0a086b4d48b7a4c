#!/usr/bin/env bats
# Chapter 15: mini-redis as a server: its contract, the parser's unit test,
# expiry, many clients, stops at any moment, no leaked fds, the query buffer
# limit, clients that leave while blocked, a slow reader. The replies
# themselves are compared with redis-server's in differential.bats; real
# clients drive it in redis-cli.bats; pipelining under strace, resets and
# half-close are the capstone's stage 3 (stage-3.bats), blocking pops'
# timeouts stage 5's.

load ../helpers/common
load ../helpers/echo_suite
load redis

@test "mini-redis and resp-cat: bad arguments print the usage and exit 2; -h exits 0" {
    usage_contract mini-redis resp-cat
    run timeout 10 "$(chapter_bin mini-redis)" -q 100
    assert_failure 2
    run timeout 10 "$(chapter_bin resp-cat)" -p 0
    assert_failure 2
}

@test "mini-redis: an unknown RT_BACKEND names the backends and exits 2" {
    RT_BACKEND=select run timeout 10 "$(chapter_bin mini-redis)" -p 0
    assert_failure 2
    assert_output --partial "RT_BACKEND=select: no such backend (there are: uring epoll kqueue)"
}

@test "resp-test: the parser finds the same requests and errors however the bytes are cut" {
    run timeout 60 "$(chapter_bin resp-test)"
    echo "$output" | sed 's/^/# /' >&3
    assert_success
    refute_output --partial "not ok"
}

@test "HELLO and HELLO 2 answer as redis-server does (but for the server's name and the client id); HELLO 3 is refused" {
    require_redis
    redis_start
    mini_start
    printf 'hello\nhello 2\nhello 2 setname me\n' | both
    sed -i -e 's/\$5\\r\\nredis\\r\\n/$10\\r\\nmini-redis\\r\\n/' -e 's/\$2\\r\\nid\\r\\n:[0-9]*/$2\\r\\nid\\r\\n:ID/' \
        "$BATS_TEST_TMPDIR/redis.out"
    sed -i 's/\$2\\r\\nid\\r\\n:[0-9]*/$2\\r\\nid\\r\\n:ID/' "$BATS_TEST_TMPDIR/mini.out"
    same_replies "HELLO"
    run mini_cmd hello 3
    assert_output '-NOPROTO unsupported protocol version\r\n'
}

@test "COMMAND lists every command with its arity and keys, COMMAND COUNT counts them; there is no COMMAND DOCS, as in Redis 6" {
    mini_start
    run mini_cmd command count
    [[ "$output" =~ ^:([0-9]+)\\r\\n$ ]] || fail "COMMAND COUNT: $output"
    local n=${BASH_REMATCH[1]}
    [ "$n" -ge 81 ] || fail "COMMAND COUNT: $n commands, expected 81 or more"
    run mini_cmd command
    [[ "$output" == "*$n\\r\\n"* ]] || fail "COMMAND does not list $n commands: ${output:0:80}"
    assert_output --partial '*6\r\n$3\r\nget\r\n:2\r\n*0\r\n:1\r\n:1\r\n:1\r\n'
    assert_output --partial '*6\r\n$4\r\nmset\r\n:-3\r\n*0\r\n:1\r\n:-1\r\n:2\r\n'
    run mini_cmd command docs
    assert_output "-ERR unknown subcommand 'docs'. Try COMMAND HELP.\\r\\n"
}

# sets_with_ttl MS: 10,000 SET key:I v PX MS requests, in RESP.
sets_with_ttl() {
    local i
    for ((i = 0; i < 10000; i++)); do
        printf '*5\r\n$3\r\nSET\r\n$%d\r\nkey:%d\r\n$1\r\nv\r\n$2\r\nPX\r\n$%d\r\n%d\r\n' \
            $((${#i} + 4)) "$i" ${#1} "$1"
    done
}

@test "expiry: 10,000 keys with a short TTL, never read again, are all gone within seconds (the active cycle)" {
    local ttl_ms=$((1500 * $(san_slowdown))) n t0 bound=$((6 * $(san_slowdown)))
    mini_start
    untraced sets_with_ttl "$ttl_ms" >"$BATS_TEST_TMPDIR/set.resp"
    timeout 30 "$(chapter_bin resp-cat)" -r -p "$PORT" <"$BATS_TEST_TMPDIR/set.resp" >"$BATS_TEST_TMPDIR/set.out"
    [ "$(grep -c '^+OK' "$BATS_TEST_TMPDIR/set.out")" -eq 10000 ] || fail "not 10,000 OKs: $(sort "$BATS_TEST_TMPDIR/set.out" | uniq -c | head)"
    n=$(mini_cmd dbsize)
    [ "$n" = ':10000\r\n' ] || fail "DBSIZE just after the SETs: $n (expected 10000: too slow a machine?)"
    t0=$SECONDS
    while n=$(mini_cmd dbsize) && [ "$n" != ':0\r\n' ] && [ $((SECONDS - t0)) -lt "$bound" ]; do
        sleep 0.1
    done
    echo "# DBSIZE $n after $((SECONDS - t0)) s" >&3
    [ "$n" = ':0\r\n' ] || fail "DBSIZE is still $n $bound s after the keys were set with PX $ttl_ms"
    server_stop
    [ "$SERVER_STATUS" -eq 0 ]
}

@test "200 clients at once, 50 pipelined INCRs each, on one key: the total is exactly 10,000" {
    local i pids=() pid failed=0
    mini_start
    for ((i = 0; i < 50; i++)); do printf 'INCR total\r\n'; done >"$BATS_TEST_TMPDIR/incr"
    for ((i = 0; i < 200; i++)); do
        timeout --foreground 30 "$(chapter_bin resp-cat)" -r -p "$PORT" <"$BATS_TEST_TMPDIR/incr" >"$BATS_TEST_TMPDIR/c$i.out" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do
        wait "$pid" || failed=$((failed + 1))
    done
    [ "$failed" -eq 0 ] || fail "$failed clients failed"
    run mini_cmd get total
    assert_output '$5\r\n10000\r\n'
    [ "$(cat "$BATS_TEST_TMPDIR"/c*.out | grep -c '^:')" -eq 10000 ] || fail "not 10,000 replies"
}

@test "no fd growth over 300 connect/close cycles, some mid-request" {
    local i fd before after t0
    mini_start
    mini_cmd ping >/dev/null
    before=$(fd_count "$SERVER_PID")
    trap '' PIPE
    for ((i = 0; i < 300; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || server_gone "client $i could not connect"
        if ((i % 2)); then printf 'PING\r\n' >&"$fd"; else printf '*2\r\n$3\r\nGET\r\n' >&"$fd"; fi
        exec {fd}>&-
    done
    trap - PIPE
    t0=$SECONDS
    while after=$(fd_count "$SERVER_PID") && [ "$after" -gt "$before" ] && [ $((SECONDS - t0)) -lt 5 ]; do
        sleep 0.1
    done
    echo "# fds: $before before, $after after" >&3
    [ "$after" -le "$before" ] || fail "$after fds open after 300 cycles, $before before"
}

@test "the query buffer limit (-q): a request that would pass it closes the connection, with no reply; one under it is served" {
    local big="$BATS_TEST_TMPDIR/big"
    mini_start -q 1048576
    printf '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n' >"$big"
    head -c 1500000 /dev/zero >>"$big"
    run bash -c "timeout 10 '$(chapter_bin resp-cat)' -r -p $PORT <'$big'"
    assert_output '(closed)'
    grep -q "query buffer over 1048576 bytes" "$SERVER_ERR" || fail "no word of it on stderr: $(cat "$SERVER_ERR")"
    printf '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$900000\r\n' >"$big"
    head -c 900000 /dev/zero >>"$big"
    printf '\r\n*2\r\n$6\r\nSTRLEN\r\n$1\r\nk\r\n' >>"$big"
    run bash -c "timeout 10 '$(chapter_bin resp-cat)' -r -p $PORT <'$big'"
    assert_output '+OK\r\n
:900000\r\n
(closed)'
}

@test "SIGTERM at any moment (20 starts): every one exits 0" {
    SERVER_CMD=("$(chapter_bin mini-redis)")
    ! course_valgrind || SERVER_CMD=(env RT_BACKEND=epoll "${SERVER_CMD[@]}") # see mini_start
    suite_stop_anytime 20
}

@test "SIGINT with clients connected, one mid-request, exits 0" {
    local a b
    mini_start
    conn_open a
    conn_open b
    printf '*2\r\n$3\r\nGET\r\n' >&"$b"
    mini_cmd ping >/dev/null
    stop_within 5 INT
    exec {a}>&- {b}>&-
}

# blocked_count: INFO's blocked_clients, from mini-redis.
blocked_count() {
    mini_cmd info clients >/dev/null # the first connection may race the server's start
    printf 'INFO clients\r\n' | timeout 10 "$(chapter_bin resp-cat)" -r -p "$PORT" |
        sed -n 's/.*blocked_clients:\([0-9]*\).*/\1/p'
}

# wait_blocked N: until INFO counts N blocked clients, within 10 s (more
# under a sanitizer or valgrind).
wait_blocked() {
    local t0=$SECONDS n bound=$((10 * $(san_slowdown)))
    while n=$(blocked_count) && [ "$n" != "$1" ]; do
        [ $((SECONDS - t0)) -lt "$bound" ] || fail "INFO says $n blocked clients, not $1, after $bound s"
        sleep 0.05
    done
}

@test "INFO server, clients and keyspace: Redis's field names, mini-redis's values; CLIENT ID and TIME" {
    local now
    mini_start
    mini_cmd set a 1 >/dev/null
    run bash -c "printf 'INFO\r\n' | timeout 10 '$(chapter_bin resp-cat)' -r -p $PORT"
    for field in '# Server' redis_version:7.0.15 redis_mode:standalone multiplexing_api: \
        "process_id:$SERVER_PID" "tcp_port:$PORT" uptime_in_seconds: '# Clients' connected_clients:1 \
        blocked_clients:0 '# Keyspace' db0:keys=1,expires=0; do
        assert_output --partial "$field"
    done
    run bash -c "printf 'INFO keyspace\r\n' | timeout 10 '$(chapter_bin resp-cat)' -r -p $PORT"
    refute_output --partial '# Server'
    assert_output --partial '# Keyspace\r\ndb0:keys=1'
    run bash -c "printf 'CLIENT ID\r\nCLIENT ID\r\n' | timeout 10 '$(chapter_bin resp-cat)' -r -p $PORT"
    [[ "${lines[0]}" =~ ^:[0-9]+\\r\\n$ ]] && [ "${lines[1]}" = "${lines[0]}" ] ||
        fail "CLIENT ID twice on one connection: $output"
    now=$(date +%s)
    run mini_cmd time
    [[ "$output" =~ ^\*2\\r\\n\$10\\r\\n([0-9]{10})\\r\\n\$[0-9]\\r\\n[0-9]+\\r\\n$ ]] || fail "TIME: $output"
    [ $((BASH_REMATCH[1] - now)) -le 2 ] && [ $((now - BASH_REMATCH[1])) -le 2 ] ||
        fail "TIME says ${BASH_REMATCH[1]}, the clock $now"
}

# block_and_leave N KEY: N clients, one after another, each sends BLPOP KEY
# 0 and closes its connection without waiting for a reply.
block_and_leave() {
    local i fd
    for ((i = 0; i < $1; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || fail "client $i could not connect"
        printf 'BLPOP %s 0\r\n' "$2" >&"$fd"
        exec {fd}>&-
    done
}

@test "1,000 clients that leave while blocked leave nothing: the next push stays in the list, no fd or memory growth" {
    local fds0 fds1 rss0 rss1
    mini_start
    untraced block_and_leave 1000 k
    wait_blocked 0
    fds0=$(fd_count "$SERVER_PID")
    rss0=$(rss_kb "$SERVER_PID")
    untraced block_and_leave 1000 k
    wait_blocked 0
    fds1=$(fd_count "$SERVER_PID")
    rss1=$(rss_kb "$SERVER_PID")
    echo "# after 1,000 and 2,000 clients: fds $fds0 and $fds1, RSS $rss0 and $rss1 KiB" >&3
    [ "$fds1" -le "$fds0" ] || fail "fds grew from $fds0 to $fds1"
    # a waiter left behind costs some 150 bytes: 1,000 of them, 150 KiB.
    # (valgrind and AddressSanitizer keep freed memory aside: their own
    # leak checks at the exit judge those runs.)
    if ! course_valgrind && [[ "$BUILD" != */san-* ]]; then
        [ $((rss1 - rss0)) -lt 100 ] || fail "RSS grew by $((rss1 - rss0)) KiB over 1,000 clients"
    fi
    run mini_cmd rpush k v
    assert_output ':1\r\n'
    run mini_cmd lrange k 0 -1
    assert_output '*1\r\n$1\r\nv\r\n'
}

@test "SIGTERM with clients blocked (for ever, and with a timeout) and one subscribed: exit 0 at once" {
    local a b s
    mini_start
    conn_open a
    conn_open b
    conn_open s
    printf 'BLPOP k 0\r\n' >&"$a"
    printf 'BRPOP k other 1000\r\n' >&"$b"
    printf 'SUBSCRIBE ch\r\n' >&"$s"
    wait_blocked 2
    stop_within 5 TERM
    exec {a}>&- {b}>&- {s}>&-
}

# A slow reader: a client pipelines 200 GETs of a 1 MiB value (200 MiB of
# replies) and reads nothing for a second. mini-redis stops reading a
# connection while its replies wait to be sent (the next receive waits for
# the send), so it holds at most one batch of replies, not 200 MiB; then
# the client reads them all, and another client is served meanwhile.
@test "a slow reader of 200 MiB of pipelined replies does not grow the server, gets every byte, and others are served meanwhile" {
    mini_start
    run mini_cmd setrange big 1048575 x
    assert_output ':1048576\r\n'
    local rss0 out="$BATS_TEST_TMPDIR/slow.out"
    rss0=$(rss_kb "$SERVER_PID")
    timeout --foreground 60 python3 - "$PORT" "$SERVER_PID" >"$out" 2>&1 <<'PY' &
import socket, sys, time
port, pid = int(sys.argv[1]), sys.argv[2]
def rss():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.connect(("127.0.0.1", port))
n = 200
s.sendall(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n" * n)
time.sleep(1)
paused = rss()
want = n * (len(b"$1048576\r\n") + 1048576 + 2)
got = 0
while got < want:
    b = s.recv(1 << 20)
    if not b:
        break
    got += len(b)
print("paused_rss_kb", paused, "got", got, "want", want)
PY
    local py=$!
    sleep 0.5
    # served while the slow reader holds its replies
    run mini_cmd ping
    assert_output '+PONG\r\n'
    wait "$py" || fail "the slow reader failed: $(cat "$out")"
    local paused got want
    read -r _ paused _ got _ want <"$out"
    echo "# RSS ${rss0} kB at start, ${paused} kB with 200 MiB of replies asked for and none read; ${got} of ${want} bytes received" >&3
    [ "$got" -eq "$want" ] || fail "the slow reader got $got of $want bytes"
    [ "$paused" -lt $((rss0 + 16384)) ] || fail "the server grew from $rss0 kB to $paused kB for a reader that does not read"
    require_server_alive
}
