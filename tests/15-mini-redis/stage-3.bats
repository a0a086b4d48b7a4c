#!/usr/bin/env bats
# Capstone stage 15-mini-redis/stage-3: pipelining and limits. The replies
# to the requests one read brought leave in one send (counted under strace,
# on epoll); -q BYTES closes a connection whose unfinished request grows
# past it, and only that; 100 clients at once, each sending in pieces, get
# their own replies; a client that asks for 200 MiB and reads nothing does
# not grow the server; a half-closed client still gets every reply; resets
# leave no fd behind; SIGTERM with clients mid-request exits 0.
# Runs $IMPL's program (solutions: the chapter's mini-redis; `make ex` uses
# exercises: yours, exercises/15-mini-redis/my-redis/).

load ../helpers/common
load redis

setup() { stage_setup; }

# strace_start: the server on epoll under strace, its socket calls logged.
strace_start() {
    command -v strace >/dev/null || skip "strace is not installed (make deps)"
    # LeakSanitizer cannot run under ptrace: the SAN= build checks leaks elsewhere
    RT_BACKEND=epoll ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" \
        server_start strace -f -qq -e trace=recvfrom,read,recvmsg,sendto,write,sendmsg,writev \
        -o "$BATS_TEST_TMPDIR/strace.log" "$MINI_REDIS" -p 0
}

# calls_on FD NAME: how many calls NAME the server made on FD that moved bytes.
calls_on() {
    grep -cE "^[0-9]+ +$2\($1, .*= [1-9][0-9]*$" "$BATS_TEST_TMPDIR/strace.log" || true
}

# reads_sends: "READS SENDS" for the one client of the traced run: the
# reads that brought bytes, and the sends of any kind.
reads_sends() {
    local fd
    fd=$(sed -nE 's/^[0-9]+ +(recvfrom|recvmsg)\(([0-9]+), .*= [1-9][0-9]*$/\2/p' "$BATS_TEST_TMPDIR/strace.log" | head -n 1)
    [ -n "$fd" ] || fail "no receive with bytes in the trace: $(head -n 20 "$BATS_TEST_TMPDIR/strace.log")"
    echo "$(($(calls_on "$fd" recvfrom) + $(calls_on "$fd" read) + $(calls_on "$fd" recvmsg))) $(($(calls_on "$fd" sendto) + $(calls_on "$fd" write) + $(calls_on "$fd" sendmsg) + $(calls_on "$fd" writev)))"
}

@test "pipelining: 100 requests in one write get their 100 replies in one send; 10 sent one after another's reply take 10 (epoll, under strace)" {
    local i out reads sends
    strace_start
    out=$(for ((i = 0; i < 100; i++)); do printf 'INCR n\r\n'; done | timeout 10 "$(chapter_bin resp-cat)" -r -p "$PORT") ||
        server_gone "100 pipelined INCRs: resp-cat failed: $out"
    [ "$(grep -c '^:' <<<"$out")" -eq 100 ] && grep -q '^:100\\r\\n$' <<<"$out" ||
        server_gone "100 pipelined INCRs: expected :1 to :100, got: $(head -n 5 <<<"$out")"
    traced_stop
    [ "$SERVER_STATUS" -eq 0 ] || fail "exit status $SERVER_STATUS after SIGTERM"
    read -r reads sends <<<"$(reads_sends)"
    echo "# 100 pipelined requests: $reads reads, $sends sends" >&3
    # 800 bytes written at once arrive in one read on loopback, or now and then two
    [ "$reads" -le 2 ] || fail "100 requests (800 bytes) in one write took $reads reads"
    [ "$sends" -eq "$reads" ] || fail "$sends sends for $reads reads: the replies of one read must leave together"

    strace_start
    for ((i = 0; i < 10; i++)); do echo "INCR n"; done | timeout 10 "$(chapter_bin resp-cat)" -p "$PORT" >/dev/null ||
        server_gone "10 INCRs one after another"
    traced_stop
    read -r reads sends <<<"$(reads_sends)"
    echo "# 10 requests, each after the last reply: $reads reads, $sends sends" >&3
    [ "$reads" -eq 10 ] && [ "$sends" -eq 10 ] || fail "expected 10 reads and 10 sends, got $reads and $sends"
}

# client_script I: what client I sends (SET and GET of a key of its own
# in RESP, an inline ECHO), and client_expect I, the replies it must get,
# then the close.
client_script() {
    local j k="client:$1" v
    for ((j = 0; j < 20; j++)); do
        v="$1-$j"
        printf '*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n' ${#k} "$k" ${#v} "$v"
        printf '*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\nECHO c%d-m%d\r\n' ${#k} "$k" "$1" "$j"
    done
}
client_expect() {
    local j v e
    for ((j = 0; j < 20; j++)); do
        v="$1-$j" e="c$1-m$j"
        printf '+OK\\r\\n\n$%d\\r\\n%s\\r\\n\n$%d\\r\\n%s\\r\\n\n' ${#v} "$v" ${#e} "$e"
    done
    echo '(closed)'
}

client_files() {
    local i
    for ((i = 0; i < $1; i++)); do
        client_script "$i" >"$BATS_TEST_TMPDIR/c$i.in"
        client_expect "$i" >"$BATS_TEST_TMPDIR/c$i.want"
    done
}

@test "100 clients at once, each sending 60 requests (RESP and inline) 7 bytes at a time: each gets exactly its own 60 replies, in order" {
    local i pids=() failed=() cat
    cat=$(chapter_bin resp-cat)
    mini_start
    untraced client_files 100
    for ((i = 0; i < 100; i++)); do
        timeout --foreground 30 "$cat" -r -c 7 -d 1 -p "$PORT" "$BATS_TEST_TMPDIR/c$i.in" \
            >"$BATS_TEST_TMPDIR/c$i.out" 2>&1 &
        pids+=($!)
        _course_pids+=($!)
    done
    for ((i = 0; i < 100; i++)); do
        if ! wait "${pids[$i]}" || ! cmp -s "$BATS_TEST_TMPDIR/c$i.want" "$BATS_TEST_TMPDIR/c$i.out"; then
            failed+=("$i")
        fi
    done
    [ "${#failed[@]}" -eq 0 ] || server_gone "${#failed[@]} clients did not get their replies (clients ${failed[*]:0:10}...); client ${failed[0]} expected (-) and got (+):
$(diff -u "$BATS_TEST_TMPDIR/c${failed[0]}.want" "$BATS_TEST_TMPDIR/c${failed[0]}.out" | tail -n +3 | head -n 20)"
}

@test "-q BYTES: a request that grows past it closes the connection, with no reply, before the bytes pile up; the server's memory stays bounded" {
    local rss0 out hwm
    mini_start -q 1048576
    rss0=$(rss_kb "$SERVER_PID")
    # a SET of 2,000,000 bytes, 1,500,000 of them sent: past the limit
    {
        printf '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n'
        head -c 1500000 /dev/zero
    } >"$BATS_TEST_TMPDIR/over"
    run timeout 10 "$(chapter_bin resp-cat)" -r -p "$PORT" "$BATS_TEST_TMPDIR/over"
    [ "$output" = '(closed)' ] || server_gone "a request past -q 1048576: expected the close and no reply, got: $output"
    # an argument of 100 MB, streamed: the server must close long before it has it all
    out=$(timeout 20 python3 - "$PORT" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(5)
sent, how = 0, "all sent"
try:
    s.sendall(b"*2\r\n$4\r\nECHO\r\n$100000000\r\n")
    chunk = b"\0" * 65536
    while sent < 100000000:
        sent += s.send(chunk)
except socket.timeout:
    how = "stuck: the server stopped reading but kept the connection"
except OSError as e:
    how = "closed"
print(sent, how)
PY
    ) || fail "the streaming client failed: $out"
    hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SERVER_PID/status")
    echo "# -q 1048576: a client streaming a 100 MB argument sent $out; the server's RSS $rss0 KiB at start, peak $hwm KiB" >&3
    [[ "$out" == *closed ]] || server_gone "a 100 MB argument with -q 1048576: expected the connection closed, got: $out"
    [ "${out%% *}" -lt $((32 * 1024 * 1024)) ] || fail "the server took ${out%% *} bytes of a request before closing it (-q 1048576)"
    if ! course_valgrind && [[ "$BUILD" != */san-* ]]; then
        [ "$hwm" -lt $((rss0 + 16384)) ] || fail "the server's peak RSS was $hwm KiB ($rss0 KiB at start) with a query buffer limit of 1 MiB"
    fi
    run mini_cmd exists k
    assert_output ':0\r\n'
    local bad
    for bad in abc 100 1073741825; do
        run timeout 10 "$MINI_REDIS" -p 0 -q "$bad"
        [ "$status" -eq 2 ] || fail "-q $bad: exit status $status, expected 2 (a bad option): $output"
    done
}

@test "-q BYTES limits a request, not a connection: one of 900,000 bytes is served, and so are 4 MB of small ones pipelined" {
    local big="$BATS_TEST_TMPDIR/big" out
    mini_start -q 1048576
    {
        printf '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$900000\r\n'
        head -c 900000 /dev/zero
        printf '\r\n*2\r\n$6\r\nSTRLEN\r\n$1\r\nk\r\n'
    } >"$big"
    run timeout 10 "$(chapter_bin resp-cat)" -r -p "$PORT" "$big"
    [ "$output" = $'+OK\\r\\n\n:900000\\r\\n\n(closed)' ] || server_gone "a SET of 900,000 bytes under -q 1048576: $output"
    seq 0 59999 | awk '{ printf "SET key:%d 012345678901234567890123456789012345678901234567890123456789\r\n", $1 }' >"$BATS_TEST_TMPDIR/sets"
    printf 'DBSIZE\r\n' >>"$BATS_TEST_TMPDIR/sets"
    out=$(timeout 20 "$(chapter_bin resp-cat)" -r -p "$PORT" "$BATS_TEST_TMPDIR/sets" | LC_ALL=C sort | uniq -c | sed 's/^ *//')
    [ "$out" = "1 (closed)
60000 +OK\\r\\n
1 :60001\\r\\n" ] || server_gone "60,000 pipelined SETs (4 MB) under -q 1048576: expected 60,000 +OK, then :60001; got (count, reply): $out"
}

@test "a client that pipelines 200 GETs of a 1 MiB value and reads nothing: the server stops reading it, its memory stays bounded, others are served; then every byte arrives" {
    local rss0 py out="$BATS_TEST_TMPDIR/slow.out" paused got want
    mini_start
    rss0=$(rss_kb "$SERVER_PID")
    timeout --foreground 60 python3 - "$PORT" "$SERVER_PID" $((5 * $(san_slowdown))) >"$out" 2>&1 <<'PY' &
import socket, sys, time
port, pid, quiet = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
def rss():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.connect(("127.0.0.1", port))
value = bytes(range(256)) * 4096
s.sendall(b"*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$1048576\r\n" + value + b"\r\n")
if s.recv(5) != b"+OK\r\n":
    sys.exit("SET big: no +OK")
n = 200
s.sendall(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n" * n)
time.sleep(1)
paused = rss()
s.settimeout(quiet)
one = b"$1048576\r\n" + value + b"\r\n"
want, got, bad = n * len(one), 0, 0
while got < want:
    try:
        b = s.recv(1 << 20)
    except socket.timeout:
        sys.exit(f"nothing for {quiet} s after {got} of {want} bytes")
    if not b:
        break
    i = 0
    while i < len(b):  # each piece against the same place of the expected reply
        off = (got + i) % len(one)
        k = min(len(b) - i, len(one) - off)
        bad += b[i:i + k] != one[off:off + k]
        i += k
    got += len(b)
print("paused_rss_kb", paused, "got", got, "want", want, "bad", bad)
PY
    py=$!
    _course_pids+=("$py")
    sleep 0.5
    run mini_cmd ping
    [ "$output" = '+PONG\r\n' ] || server_gone "PING while a client held 200 MiB of replies unread: $output"
    wait "$py" || server_gone "the client of 200 GETs failed: $(cat "$out")"
    read -r _ paused _ got _ want _ bad <"$out" || fail "the client of 200 GETs said: $(cat "$out")"
    echo "# RSS $rss0 KiB at start, $paused KiB with 200 MiB of replies asked for and none read; $got of $want bytes received" >&3
    [ "$got" -eq "$want" ] && [ "$bad" -eq 0 ] || fail "the client got $got of $want bytes ($bad replies not the value)"
    if ! course_valgrind && [[ "$BUILD" != */san-* ]]; then
        [ "$paused" -lt $((rss0 + 32768)) ] || fail "the server grew from $rss0 KiB to $paused KiB for a client that did not read"
    fi
}

@test "half-close: a client that pipelines 300 GETs of a 4,000-byte value (1.2 MB of replies) and shuts down its sending side gets every reply, then the close" {
    local out i
    mini_start
    {
        printf 'SET v %04000d\r\n' 7
        for ((i = 0; i < 300; i++)); do printf 'GET v\r\n'; done
        printf 'PING\r\n'
    } >"$BATS_TEST_TMPDIR/reqs"
    out=$(timeout 10 "$(chapter_bin resp-cat)" -r -p "$PORT" "$BATS_TEST_TMPDIR/reqs" | cut -c 1-12 | uniq -c | sed 's/^ *//')
    [ "$out" = "1 +OK\\r\\n
300 \$4000\\r\\n000
1 +PONG\\r\\n
1 (closed)" ] || server_gone "300 GETs, then a half-close: expected +OK, 300 values, +PONG and the close; got (count, reply start): $out"
    # a client that sends nothing and shuts down: the server closes too
    run timeout 10 "$(chapter_bin resp-cat)" -r -p "$PORT" </dev/null
    assert_output '(closed)'
}

@test "10 clients that reset in the middle of a request: the server goes on serving, and keeps no fd of theirs" {
    local i before after t0
    mini_start
    mini_cmd ping >/dev/null
    before=$(find "/proc/$SERVER_PID/fd" -mindepth 1 -maxdepth 1 | wc -l)
    printf '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n' >"$BATS_TEST_TMPDIR/half"
    head -c 50000 /dev/zero >>"$BATS_TEST_TMPDIR/half"
    for ((i = 0; i < 10; i++)); do
        run_client -p "$PORT" --reset <"$BATS_TEST_TMPDIR/half" >/dev/null || server_gone "echo-client --reset failed"
    done
    run mini_cmd exists k
    [ "$output" = ':0\r\n' ] || server_gone "EXISTS k after 10 resets: $output"
    t0=${EPOCHREALTIME/./}
    while after=$(find "/proc/$SERVER_PID/fd" -mindepth 1 -maxdepth 1 | wc -l) && [ "$after" -gt "$before" ] &&
        [ $(((${EPOCHREALTIME/./} - t0) / 1000)) -lt $((2000 * $(san_slowdown))) ]; do
        sleep 0.1
    done
    [ "$after" -le "$before" ] || fail "$after fds open 2 s after 10 resets, $before before"
}

@test "SIGTERM with clients connected, one idle and one mid-request: exit 0 at once" {
    local a b
    mini_start
    conn_open a
    conn_open b
    printf '*2\r\n$3\r\nGET\r\n' >&"$b"
    run mini_cmd ping
    [ "$output" = '+PONG\r\n' ] || server_gone "PING: $output"
    stop_within 5 TERM
    exec {a}>&- {b}>&-
}
