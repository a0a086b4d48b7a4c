#!/usr/bin/env bats
# Capstone stage 15-mini-redis/stage-2: a key space of strings. GET, SET
# (NX XX GET), DEL, EXISTS, INCR, DECR, INCRBY, DECRBY, APPEND, STRLEN,
# MGET, MSET, TYPE, DBSIZE, FLUSHALL, with Redis's errors; keys and values
# are bytes (NUL bytes, a megabyte); 10,000 keys, then all but 100 of them
# deleted. Every reply is compared with a real redis-server 7.0's.
# Runs $IMPL's program (solutions: the chapter's mini-redis; `make ex` uses
# exercises: yours, exercises/15-mini-redis/my-redis/).

load ../helpers/common
load redis

setup() {
    stage_setup
    require_redis
    redis_start
    mini_start
}

@test "strings: GET SET (NX XX GET) DEL EXISTS INCR DECR INCRBY DECRBY APPEND STRLEN MGET MSET TYPE DBSIZE FLUSHALL and their errors, as redis-server (scripts/stage-2-strings.txt)" {
    both "$SCRIPTS/stage-2-strings.txt" </dev/null
    replies_match "stage-2-strings.txt"
}

# sets N: N pipelined inline SETs, key:I value-I.
sets() {
    local i
    for ((i = 0; i < $1; i++)); do
        printf 'SET key:%d value-%d\r\n' "$i" "$i"
    done
}

# checks N: a resp-cat script over the N keys: DBSIZE, 100 of them read
# back, all but those 100 deleted (99 to a DEL), and the 100 read again.
checks() {
    local i j line
    echo dbsize
    line=mget
    for ((i = 0; i < $1; i += $1 / 100)); do line+=" key:$i"; done
    echo "$line"
    for ((i = 0; i < $1; i += 100)); do
        line=del
        for ((j = i + 1; j < i + 100 && j < $1; j++)); do line+=" key:$j"; done
        echo "$line"
    done
    echo dbsize
    line=mget
    for ((i = 0; i < $1; i += 100)); do line+=" key:$i"; done
    echo "$line"
    echo "exists key:0 key:1 key:100 key:101 key:9900 key:9999"
    echo "get key:9900"
    echo flushall
    echo dbsize
    echo "get key:0"
}

@test "10,000 keys set on one connection are all there for another; DEL of all but 100 leaves exactly those 100" {
    untraced sets 10000 >"$BATS_TEST_TMPDIR/sets"
    untraced checks 10000 >"$BATS_TEST_TMPDIR/checks"
    both -r "$BATS_TEST_TMPDIR/sets" </dev/null
    replies_match "10,000 pipelined SETs"
    both "$BATS_TEST_TMPDIR/checks" </dev/null
    replies_match "the 10,000 keys read, then deleted but 100, from another connection"
}

# escaped FILE: FILE's bytes, each written \xHH, for a resp-cat line.
escaped() {
    od -An -v -tx1 "$1" | tr -d ' \n' | sed 's/../\\x&/g'
}

@test "a value of 1 MiB, NUL bytes inside, as two halves: SET, APPEND, STRLEN, GET and MGET give back every byte" {
    local f="$BATS_TEST_TMPDIR/big.txt"
    payload "$BATS_TEST_TMPDIR/a" 524288
    payload "$BATS_TEST_TMPDIR/b" 524288
    {
        printf 'set "big\\x00key" "%s"\n' "$(escaped "$BATS_TEST_TMPDIR/a")"
        printf 'append "big\\x00key" "%s"\n' "$(escaped "$BATS_TEST_TMPDIR/b")"
        printf 'strlen "big\\x00key"\nstrlen big\nget "big\\x00key"\nmget big "big\\x00key"\n'
    } >"$f"
    both "$f" </dev/null
    replies_match "a value of 1 MiB"
}

@test "values overwritten, deleted or flushed give their memory back: 180 values of 1 MiB through three keys, and the server grows by less than 32 MiB" {
    local out rss0
    mini_start
    rss0=$(rss_kb "$SERVER_PID")
    out=$(timeout 30 python3 - "$PORT" "$SERVER_PID" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(10)
f = s.makefile("rb")
value = bytes(range(256)) * 4096
def cmd(*a):
    s.sendall(b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a))
    return f.readline().strip().decode()
for i in range(60):  # the same key, a new value each time
    if cmd(b"SET", b"k", value) != "+OK":
        sys.exit("SET k: no +OK")
for i in range(60):  # a key made, then deleted
    if cmd(b"SET", b"d", value) != "+OK" or cmd(b"DEL", b"d") != ":1":
        sys.exit("SET d, DEL d: not +OK and :1")
for i in range(60):  # a key made, then flushed
    if cmd(b"SET", b"f", value) != "+OK" or cmd(b"FLUSHALL") != "+OK":
        sys.exit("SET f, FLUSHALL: not +OK and +OK")
for line in open(f"/proc/{sys.argv[2]}/status"):
    if line.startswith("VmRSS:"):
        print(line.split()[1])
PY
    ) || server_gone "the client of 180 values of 1 MiB failed: $out"
    echo "# RSS $rss0 KiB at start, $out KiB after 180 values of 1 MiB overwritten, deleted and flushed" >&3
    if ! course_valgrind && [[ "$BUILD" != */san-* ]]; then
        [ "$out" -lt $((rss0 + 32768)) ] || fail "the server grew from $rss0 KiB to $out KiB: values overwritten, deleted or flushed were not freed"
    fi
    run mini_cmd dbsize
    assert_output ':0\r\n'
}
