#!/usr/bin/env bats
# Chapter 15: mini-redis against the real redis-server 7.0, reply for reply.
# Each script of scripts/ goes to a redis-server this test starts and to
# mini-redis on each backend; the raw bytes of every reply must be the same.
# The .sessions scripts drive several connections (resp-cat -m), for the
# blocking pops and pub/sub.
# Keys come back in each server's own order (KEYS, SCAN): the scripts mark
# those commands ("~ ") and resp-cat sorts their elements before printing;
# SCAN's cursors are each server's own, so its scripts only compare scans
# that end in one call, and the full walk is compared below as a set.

load ../helpers/common
load redis

setup() {
    require_redis
    redis_start
}

# script_on BACKEND NAME: scripts/NAME.redis against both, mini-redis on
# BACKEND; NAME.sessions (several connections) goes through resp-cat -m.
script_on() {
    local backend="$1" name="$2" file="$SCRIPTS/$2.redis" opts=()
    if [ "$backend" = uring ]; then
        require_not_uring_under_valgrind
        RT_BACKEND=uring run timeout 10 "$BUILD/chapters/13-mini-runtime/rt-test" probe
        [ "$status" -ne 77 ] || skip "io_uring is not allowed here: $output"
    fi
    if [ ! -e "$file" ]; then
        file="$SCRIPTS/$name.sessions"
        opts=(-m -t $((5000 * $(san_slowdown))))
    fi
    RT_BACKEND="$backend" mini_start
    both "${opts[@]}" "$file" </dev/null
    same_replies "${file##*/} on $backend"
    server_stop
    [ "$SERVER_STATUS" -eq 0 ] || fail "mini-redis exited with $SERVER_STATUS"
}

# Every script, in the order the tests below take them.
ALL_SCRIPTS=(strings float keys expire server lists multi blocking pubsub)

@test "strings: every reply to scripts/strings.redis is redis-server's, byte for byte (epoll)" {
    script_on epoll strings
}

@test "INCRBYFLOAT: every reply to scripts/float.redis is redis-server's, byte for byte (epoll)" {
    valgrind_skip "memcheck computes long double (80-bit x87) arithmetic in 64 bits, so the digits differ"
    script_on epoll float
}

@test "keys: every reply to scripts/keys.redis is redis-server's, byte for byte (epoll)" {
    script_on epoll keys
}

@test "expire times: every reply to scripts/expire.redis is redis-server's, byte for byte (epoll)" {
    script_on epoll expire
}

@test "server commands, unknown commands and arity errors: scripts/server.redis as redis-server (epoll)" {
    script_on epoll server
}

@test "lists: every reply to scripts/lists.redis is redis-server's, byte for byte (epoll)" {
    script_on epoll lists
}

@test "MULTI, EXEC, DISCARD: scripts/multi.redis as redis-server, a blocking pop inside included (epoll)" {
    script_on epoll multi
}

@test "blocking pops over several connections: served in order, timed out, left by clients that go (scripts/blocking.sessions, epoll)" {
    script_on epoll blocking
}

@test "pub/sub over several connections: messages, patterns, subscriber mode, PUBSUB (scripts/pubsub.sessions, epoll)" {
    script_on epoll pubsub
}

@test "every script gives redis-server's replies on io_uring too" {
    local s
    for s in "${ALL_SCRIPTS[@]}"; do
        script_on uring "$s"
        redis-cli -s "$REDIS_SOCK" flushall >/dev/null
    done
}

@test "every script gives redis-server's replies on kqueue (chapter 06's layer) too" {
    local s
    for s in "${ALL_SCRIPTS[@]}"; do
        [ "$s" != float ] || ! course_valgrind || continue # long double: see the INCRBYFLOAT test
        script_on kqueue "$s"
        redis-cli -s "$REDIS_SOCK" flushall >/dev/null
    done
}

# raw_case FORMAT [RESP-CAT OPTIONS]: the bytes printf FORMAT makes, sent raw
# to both servers on a fresh connection; every reply until the close compared.
raw_case() {
    local fmt="$1"
    shift
    # shellcheck disable=SC2059 # the format is the test case
    printf "$fmt" | both -r "$@"
    same_replies "raw input '$fmt'${1:+ sent in pieces ($*)}"
}

@test "malformed requests (scripts/protocol.raw): the same errors, then the same close" {
    local line
    mini_start
    while IFS= read -r line; do
        case "$line" in '#'* | '') continue ;; esac
        raw_case "$line"
    done <"$SCRIPTS/protocol.raw"
}

@test "requests split anywhere: sent one byte at a time, the replies are redis-server's" {
    mini_start
    raw_case '*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nva\r\nl\r\n*2\r\n$3\r\nGET\r\n$3\r\nkey\r\nECHO "a b"\r\n' -c 1 -d 1
    raw_case '*2\r\n$4\r\nECHO\r\n$10\r\n0123456789\r\n*1\r\n$4\r\nPING\r\n' -c 3 -d 2
    raw_case 'PING\r\n*1\r\n$x\r\n' -c 1 -d 1
}

@test "a huge announced length: within the limit it waits for the bytes, above it the error" {
    mini_start
    raw_case '*1\r\n$536870912\r\nabc'
    raw_case '*1\r\n$536870913\r\nabc'
    raw_case '*2147483647\r\n$4\r\nPING\r\n'
    raw_case '*1\r\n$9223372036854775808\r\n'
}

# scan_all REDIS-CLI-ARGS -- SCAN-OPTIONS...: every key a full walk of SCAN
# returns, cursor after cursor until 0, sorted.
scan_all() {
    local where=() cursor=0 out
    while [ "$1" != -- ]; do
        where+=("$1")
        shift
    done
    shift
    while :; do
        out=$(timeout 10 redis-cli "${where[@]}" scan "$cursor" "$@") || fail "SCAN failed: $out"
        cursor=$(head -n 1 <<<"$out")
        [[ "$cursor" =~ ^[0-9]+$ ]] || fail "SCAN answered: $out"
        tail -n +2 <<<"$out"
        [ "$cursor" != 0 ] || break
    done | sed '/^$/d' | sort
}

@test "SCAN: a full walk with MATCH, COUNT and TYPE finds the same set of keys as redis-server's" {
    local i args=() opts
    mini_start
    for ((i = 0; i < 60; i++)); do
        args+=("key:$i" "$i")
    done
    timeout 10 redis-cli -s "$REDIS_SOCK" mset "${args[@]}" other 1 >/dev/null
    timeout 10 redis-cli -p "$PORT" mset "${args[@]}" other 1 >/dev/null
    set -f # the patterns are SCAN's, not the shell's
    for opts in "count 20" "match key:1* count 7" "match key:?? count 5" "type string count 50" \
        "type list count 100" "match * type STRING count 40"; do
        # shellcheck disable=SC2086 # the options are words
        scan_all -s "$REDIS_SOCK" -- $opts >"$BATS_TEST_TMPDIR/redis.out"
        # shellcheck disable=SC2086
        scan_all -p "$PORT" -- $opts >"$BATS_TEST_TMPDIR/mini.out"
        if [ "$opts" = "type list count 100" ]; then
            [ ! -s "$BATS_TEST_TMPDIR/mini.out" ] || fail "SCAN TYPE list found keys: $(head -n 3 "$BATS_TEST_TMPDIR/mini.out")"
            continue
        fi
        same_replies "a full SCAN $opts"
    done
    set +f
    [ "$(wc -l <"$BATS_TEST_TMPDIR/mini.out")" -eq 61 ] || fail "expected 61 keys, got $(wc -l <"$BATS_TEST_TMPDIR/mini.out")"
}
