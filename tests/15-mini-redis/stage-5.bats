#!/usr/bin/env bats
# Capstone stage 15-mini-redis/stage-5: lists (LPUSH RPUSH LPOP RPOP with a
# count, LLEN LRANGE LINDEX, WRONGTYPE) and the blocking pops BLPOP and
# BRPOP: served first come, first served, one element to one waiter, timed
# out after their time and never before, forgotten when their client
# leaves, while the other clients go on being served. The replies are
# compared with a real redis-server 7.0's where there is one to compare;
# INFO's blocked_clients says when a client is blocked.
# Runs $IMPL's program (solutions: the chapter's mini-redis; `make ex` uses
# exercises: yours, exercises/15-mini-redis/my-redis/).

load ../helpers/common
load ../helpers/echo_suite
load redis

setup() { stage_setup; }

# blocked_clients: INFO's blocked_clients, into BLOCKED. A server that does
# not answer, or whose INFO has no such line, fails the test.
blocked_clients() {
    local out
    out=$(printf 'INFO clients\r\n' | timeout 5 "$(chapter_bin resp-cat)" -r -p "$PORT" 2>&1) || true
    [[ "$out" =~ blocked_clients:([0-9]+) ]] ||
        server_gone "INFO clients: no blocked_clients:N line in its reply: ${out:0:300}"
    BLOCKED=${BASH_REMATCH[1]}
}

# wait_blocked N: until INFO counts N blocked clients, within 5 s.
wait_blocked() {
    local t0=$SECONDS bound=$((5 * $(san_slowdown)))
    for ((;;)); do
        blocked_clients
        [ "$BLOCKED" = "$1" ] && return 0
        [ $((SECONDS - t0)) -lt "$bound" ] ||
            fail "INFO counts $BLOCKED blocked clients after $bound s, expected $1"
        sleep 0.02
    done
}

# reply_on FD N: the next N lines on FD (one reply of N lines, due now),
# each without its \r, joined by spaces, into GOT; each within 2 s.
reply_on() {
    local line i got=() secs=$((2 * $(san_slowdown)))
    for ((i = 0; i < $2; i++)); do
        IFS= read -r -t "$secs" line <&"$1" ||
            server_gone "expected a reply of $2 lines within $secs s, got: ${got[*]:-nothing}"
        got+=("${line%$'\r'}")
    done
    GOT="${got[*]}"
}

# expect_cmd WANT CMD...: one command (mini_cmd) must get the reply WANT.
expect_cmd() {
    local want="$1" out
    shift
    out=$(mini_cmd "$@")
    [ "$out" = "$want" ] || server_gone "$*: expected $want, got ${out:-nothing}"
}

@test "LPUSH RPUSH LPOP RPOP LLEN LRANGE LINDEX and WRONGTYPE: redis-server's replies, byte for byte (scripts/stage-5-lists.txt)" {
    require_redis
    redis_start
    mini_start
    both "$SCRIPTS/stage-5-lists.txt" </dev/null
    require_server_alive
    same_replies "stage-5-lists.txt"
}

@test "BLPOP and BRPOP over several connections: served at once or after a push, in order, timed out, left by clients that go (scripts/stage-5-blocking.txt, as redis-server)" {
    require_redis
    redis_start
    mini_start
    both -m -t $((3000 * $(san_slowdown))) "$SCRIPTS/stage-5-blocking.txt" </dev/null
    require_server_alive
    same_replies "stage-5-blocking.txt"
}

# served_in_order FROM TO: waiters FROM to TO - 1 of fds (0: the first to
# block) got, each, the element that is their number plus one, from q.
served_in_order() {
    local i n
    for ((i = $1; i < $2; i++)); do
        n=$((i + 1))
        reply_on "${fds[$i]}" 5
        [ "$GOT" = "*2 \$1 q \$${#n} $n" ] ||
            fail "waiter $n (in the order they blocked) got '$GOT', expected element $n"
    done
}

@test "20 clients blocked on one key are served in the order they blocked, one element each; a push of fewer elements than waiters leaves the others waiting" {
    local fds=() fd i
    mini_start
    for ((i = 1; i <= 20; i++)); do
        conn_open fd
        fds+=("$fd")
        send_on "$fd" 'BLPOP q 0\r\n'
        wait_blocked "$i"
    done
    expect_cmd ':10\r\n' rpush q 1 2 3 4 5 6 7 8 9 10
    served_in_order 0 10
    wait_blocked 10
    expect_cmd ':0\r\n' llen q
    expect_cmd ':10\r\n' rpush q 11 12 13 14 15 16 17 18 19 20
    served_in_order 10 20
    wait_blocked 0
    expect_cmd ':0\r\n' exists q
}

@test "a blocking pop's timeout: a null array after the time, not before and not much after (BLPOP 0.3 s; BRPOP on two keys, 0.2 s)" {
    local t0 t1 ms out cat bound=$((500 * $(san_slowdown))) case want
    mini_start
    cat="$(chapter_bin resp-cat)"
    for case in "blpop k 0.3" "brpop k other 0.2"; do
        want=${case##* }
        want=$(awk -v s="$want" 'BEGIN { print s * 1000 }')
        t0=${EPOCHREALTIME/./}
        out=$(timeout 10 "$cat" -t $((want + bound)) -p "$PORT" <<<"$case") ||
            server_gone "$case: no reply within $((want + bound)) ms: $out"
        t1=${EPOCHREALTIME/./}
        ms=$(((t1 - t0) / 1000))
        echo "# $case: answered after $ms ms" >&3
        [ "$out" = "> $case"$'\n''*-1\r\n' ] || server_gone "$case: expected a null array (*-1), got: $out"
        [ "$ms" -ge "$want" ] || fail "$case: the timeout ended early, after $ms ms"
        [ "$ms" -lt $((want + bound)) ] || fail "$case: a timeout of $want ms took $ms ms"
    done
}

@test "50 clients that leave while blocked are forgotten: INFO counts none, the next push stays in the list, no fd is left open" {
    local fds=() fd i before after t0
    mini_start
    expect_cmd '+PONG\r\n' ping
    before=$(fd_count "$SERVER_PID")
    for ((i = 0; i < 50; i++)); do
        conn_open fd
        fds+=("$fd")
        if ((i % 2)); then send_on "$fd" 'BLPOP gone 0\r\n'; else send_on "$fd" 'BRPOP other gone 100\r\n'; fi
    done
    wait_blocked 50
    for fd in "${fds[@]}"; do
        exec {fd}>&-
    done
    wait_blocked 0
    expect_cmd ':1\r\n' rpush gone x
    expect_cmd '*1\r\n$1\r\nx\r\n' lrange gone 0 -1
    t0=$SECONDS
    while after=$(fd_count "$SERVER_PID") && [ "$after" -gt "$before" ] && [ $((SECONDS - t0)) -lt 5 ]; do
        sleep 0.1
    done
    [ "$after" -le "$before" ] || fail "$after fds open after the 50 clients left, $before before them"
}

@test "requests pipelined behind a blocking pop wait for it: its reply comes first, then theirs, in order; other clients are served meanwhile" {
    local a
    mini_start
    conn_open a
    send_on "$a" 'BLPOP k 0\r\nPING\r\nECHO after\r\n'
    wait_blocked 1
    expect_cmd '+PONG\r\n' ping
    expect_cmd ':1\r\n' rpush k v
    reply_on "$a" 8
    assert_equal "$GOT" '*2 $1 k $1 v +PONG $5 after'
    exec {a}>&-
}

@test "SIGTERM with clients blocked, for ever and with a timeout: exit 0 at once" {
    local a b
    mini_start
    conn_open a
    conn_open b
    send_on "$a" 'BLPOP k 0\r\n'
    send_on "$b" 'BRPOP k other 1000\r\n'
    wait_blocked 2
    stop_within 5 TERM
    exec {a}>&- {b}>&-
}
