#!/usr/bin/env bats
# Capstone stage 15-mini-redis/stage-4: expiry. SET EX PX EXAT PXAT
# KEEPTTL, EXPIRE PEXPIRE TTL PTTL PERSIST, as redis-server 7.0 answers
# them; a key is gone the moment its time passes, whoever asks (lazy
# expiry), and gone too if nobody asks (an active cycle: DBSIZE falls with
# no access to the keys); and 10,000 keys with 10,000 different expire
# times do not cost 10,000 wake-ups: counted under strace, on epoll.
# Runs $IMPL's program (solutions: the chapter's mini-redis; `make ex` uses
# exercises: yours, exercises/15-mini-redis/my-redis/).

load ../helpers/common
load redis

setup() { stage_setup; }

@test "SET EX PX EXAT PXAT KEEPTTL, EXPIRE PEXPIRE TTL PTTL PERSIST and their errors, as redis-server (scripts/stage-4-expire.txt); EXAT and PXAT in the future" {
    local now
    require_redis
    redis_start
    mini_start
    both "$SCRIPTS/stage-4-expire.txt" </dev/null
    replies_match "stage-4-expire.txt"
    # an absolute time in the future: what is left depends on the moment
    now=$(date +%s)
    run mini_cmd set k v exat $((now + 100))
    assert_output '+OK\r\n'
    run mini_cmd ttl k
    [[ "$output" =~ ^:(99|100|101)\\r\\n$ ]] || fail "SET k v EXAT now+100, then TTL k: $output"
    run mini_cmd set k v pxat $(((now + 200) * 1000))
    assert_output '+OK\r\n'
    run mini_cmd pttl k
    [[ "$output" =~ ^:([0-9]+)\\r\\n$ ]] && [ "${BASH_REMATCH[1]}" -gt 197000 ] && [ "${BASH_REMATCH[1]}" -le 201000 ] ||
        fail "SET k v PXAT (now+200 s, in ms), then PTTL k: $output"
}

@test "a key is gone the moment its time passes, whoever asks (lazy expiry): 5 keys with PXAT, read in a loop, to the millisecond" {
    local out
    mini_start
    out=$(timeout 20 python3 - "$PORT" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(5)
f = s.makefile("rb")
def cmd(*a):
    s.sendall(b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a))
    line = f.readline()
    if line.startswith(b"$") and line != b"$-1\r\n":
        f.read(int(line[1:]) + 2)
        return "the value"
    return line.strip().decode()
def ms():
    return time.time() * 1000
now = int(ms())
times = {b"k%d" % i: now + 150 + 40 * i for i in range(5)}
for k, t in times.items():
    r = cmd(b"SET", k, b"v", b"PXAT", str(t).encode())
    if r != "+OK":
        sys.exit(f"SET {k.decode()} v PXAT {t}: {r}")
wrong, reads = [], 0
while ms() < max(times.values()) + 30 and not wrong:
    for k, t in times.items():
        sent = ms()
        r = cmd(b"GET", k)
        came = ms()
        reads += 1
        if sent >= t + 2 and r != "$-1":
            wrong.append(f"GET {k.decode()} sent {sent - t:.0f} ms after its time: {r}")
        if came <= t - 2 and r != "the value":
            wrong.append(f"GET {k.decode()} answered {t - came:.0f} ms before its time: {r}")
print(f"{reads} reads;", "; ".join(wrong[:3]) or "every one right")
PY
    ) || server_gone "the client that reads the keys failed: $out"
    echo "# $out" >&3
    [[ "$out" == *"every one right" ]] || fail "$out"
}

@test "the active cycle: 10,000 keys with PX 500, never read again, are gone within 2 s of their time; keys with no time, or whose time was taken away or put off, stay" {
    local t0 ms n bound=$((2000 * $(san_slowdown))) out
    mini_start
    {
        seq 0 9999 | awk '{ printf "SET ttl:%d v PX 500\r\n", $1 }'
        seq 0 99 | awk '{ printf "SET keep:%d v\r\n", $1 }'
        seq 0 99 | awk '{ printf "SET persisted:%d v PX 500\r\nPERSIST persisted:%d\r\n", $1, $1 }'
        seq 0 99 | awk '{ printf "SET overwritten:%d v PX 500\r\nSET overwritten:%d w\r\n", $1, $1 }'
        seq 0 99 | awk '{ printf "SET put-off:%d v PX 500\r\nPEXPIRE put-off:%d 100000\r\n", $1, $1 }'
    } >"$BATS_TEST_TMPDIR/sets"
    t0=${EPOCHREALTIME/./}
    out=$(timeout 20 "$(chapter_bin resp-cat)" -r -p "$PORT" "$BATS_TEST_TMPDIR/sets" | LC_ALL=C sort | uniq -c | sed 's/^ *//')
    [ "$out" = "1 (closed)
10500 +OK\\r\\n
200 :1\\r\\n" ] || server_gone "10,700 pipelined SETs, PERSISTs and PEXPIREs: expected 10,500 +OK and 200 :1, got (count, reply): $out"
    n=$(mini_cmd dbsize)
    ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
    # before the keys' time, every one counts (a slow machine may be past it)
    [ "$ms" -ge 400 ] || [ "$n" = ':10400\r\n' ] || server_gone "DBSIZE $ms ms after the SETs (10,000 keys with PX 500, 400 more): $n"
    while n=$(mini_cmd dbsize) && [ "$n" != ':400\r\n' ]; do
        ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
        [ "$ms" -lt $((500 + bound)) ] || break
        sleep 0.05
    done
    ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
    echo "# DBSIZE $n $ms ms after the SETs (PX 500)" >&3
    [ "$n" = ':400\r\n' ] || server_gone "DBSIZE is $n, not 400, $ms ms after 10,000 SETs with PX 500 that nobody read again"
    run mini_cmd exists $(seq -f 'keep:%g' 0 99) $(seq -f 'persisted:%g' 0 99) $(seq -f 'overwritten:%g' 0 99) $(seq -f 'put-off:%g' 0 99)
    assert_output ':400\r\n'
    run mini_cmd get overwritten:42
    assert_output '$1\r\nw\r\n'
    run mini_cmd ttl persisted:42
    assert_output ':-1\r\n'
}

@test "10,000 keys with 10,000 different expire times cost no more wake-ups than none: at most 50 in an idle second, and little CPU (epoll, under strace)" {
    local t0 t1 ticks0 ticks1 calls out
    command -v strace >/dev/null || skip "strace is not installed (make deps)"
    RT_BACKEND=epoll ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" \
        server_start strace -f -qq -ttt -e trace=epoll_wait,epoll_pwait,epoll_pwait2 \
        -o "$BATS_TEST_TMPDIR/strace.log" "$MINI_REDIS" -p 0
    # one key expiring every millisecond for the next 10 s
    seq 0 9999 | awk '{ printf "SET k:%d v PX %d\r\n", $1, 300 + $1 }' >"$BATS_TEST_TMPDIR/sets"
    out=$(timeout 20 "$(chapter_bin resp-cat)" -r -p "$PORT" "$BATS_TEST_TMPDIR/sets" | LC_ALL=C sort | uniq -c | sed 's/^ *//')
    [ "$out" = "1 (closed)
10000 +OK\\r\\n" ] || server_gone "10,000 pipelined SETs with PX: expected 10,000 +OK, got (count, reply): $out"
    traced_child
    # the measure: one second of a server nobody talks to
    t0=$EPOCHREALTIME
    ticks0=$(cpu_ticks "$TRACED_PID")
    sleep 1
    ticks1=$(cpu_ticks "$TRACED_PID")
    t1=$EPOCHREALTIME
    run mini_cmd dbsize
    [[ "$output" =~ ^:[0-9]+\\r\\n$ ]] || server_gone "DBSIZE after the idle second: $output"
    traced_stop
    [ "$SERVER_STATUS" -eq 0 ] || fail "exit status $SERVER_STATUS after SIGTERM"
    calls=$(awk -v a="$t0" -v b="$t1" '$2 >= a && $2 <= b { n++ } END { print n + 0 }' "$BATS_TEST_TMPDIR/strace.log")
    echo "# an idle second with 10,000 keys expiring one a millisecond: $calls epoll_wait calls, $((ticks1 - ticks0)) CPU ticks" >&3
    [ "$calls" -le 50 ] || fail "$calls wake-ups (epoll_wait calls) in one idle second with 10,000 keys to expire: a timer per key, or a loop that never sleeps?"
    [ $((ticks1 - ticks0)) -le $((10 * $(san_slowdown))) ] ||
        fail "the server used $((ticks1 - ticks0)) CPU ticks in one idle second (expected 10 or fewer)"
}
