#!/usr/bin/env bats
# Capstone stage 15-mini-redis/stage-1: RESP2 requests parsed from whatever
# the reads bring (a request split anywhere, many in one read, the inline
# form), PING, ECHO and QUIT, the errors for an unknown command or a wrong
# number of arguments, and the protocol errors, each followed by the close.
# Every reply is compared with a real redis-server 7.0's, byte for byte.
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

# raw FORMAT [RESP-CAT OPTIONS]: the bytes printf FORMAT makes, sent raw to
# both servers on a fresh connection, then the client's sending side is
# closed; every reply until the server closes must be redis-server's.
raw() {
    local fmt="$1"
    shift
    # shellcheck disable=SC2059 # the format is the test case
    printf "$fmt" | both -r "$@"
    replies_match "raw input '$fmt'${1:+ sent in pieces ($*)}"
}

# raw_file FILE [RESP-CAT OPTIONS]: raw for every case (line) of FILE.
raw_file() {
    local line file="$1"
    shift
    while IFS= read -r line; do
        case "$line" in '#'* | '') continue ;; esac
        raw "$line" "$@"
    done <"$file"
}

# mixed_requests N: N requests, RESP and inline in turn.
mixed_requests() {
    local i
    for ((i = 0; i < $1; i++)); do
        case $((i % 3)) in
        0) printf '*2\r\n$4\r\nECHO\r\n$%d\r\nmessage %d\r\n' $((${#i} + 8)) "$i" ;;
        1) printf 'PING\r\n' ;;
        2) printf 'ECHO inline-%d\r\n' "$i" ;;
        esac
    done
}

@test "PING, ECHO, QUIT, unknown commands and wrong arity: redis-server's replies, byte for byte (scripts/stage-1-commands.txt)" {
    both "$SCRIPTS/stage-1-commands.txt" </dev/null
    replies_match "stage-1-commands.txt"
}

@test "many requests in one read: 1,000 pipelined in one write (RESP and inline mixed) get their 1,000 replies, in order" {
    untraced mixed_requests 1000 >"$BATS_TEST_TMPDIR/pipelined"
    both -r "$BATS_TEST_TMPDIR/pipelined" </dev/null
    replies_match "1,000 pipelined requests"
}

@test "requests split anywhere: sent one byte at a time (and three at a time), the replies are redis-server's" {
    local stream='*2\r\n$4\r\nECHO\r\n$5\r\nva\r\nl\r\nPING\r\n*1\r\n$4\r\nPING\r\nECHO "a b"\r\n*2\r\n$4\r\nEcHo\r\n$10\r\n0123456789\r\n*2\r\n$4\r\nPING\r\n$0\r\n\r\n'
    raw "$stream" -c 1 -d 1
    raw "$stream" -c 3 -d 1
}

@test "an argument of 1 MiB, NUL bytes and CRLFs inside, arriving over many reads: ECHO sends it back whole" {
    local f="$BATS_TEST_TMPDIR/big.txt"
    payload "$BATS_TEST_TMPDIR/payload" 1048576
    # one resp-cat line, every byte written \xHH: sent as one RESP array
    {
        printf 'echo "'
        od -An -v -tx1 "$BATS_TEST_TMPDIR/payload" | tr -d ' \n' | sed 's/../\\x&/g'
        printf '"\nping\n'
    } >"$f"
    both "$f" </dev/null
    replies_match "ECHO of 1 MiB"
}

@test "inline requests, QUIT, and malformed ones (scripts/stage-1-raw.txt): redis-server's replies and its close, whole and one byte at a time" {
    raw_file "$SCRIPTS/stage-1-raw.txt"
    raw_file "$SCRIPTS/stage-1-raw.txt" -c 1 -d 1
    # the protocol errors closed only their own connections
    run mini_cmd ping
    assert_output '+PONG\r\n'
}
