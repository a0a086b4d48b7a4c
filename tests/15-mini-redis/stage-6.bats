#!/usr/bin/env bats
# Capstone stage 15-mini-redis/stage-6: pub/sub. SUBSCRIBE, PSUBSCRIBE,
# their UNs and PUBLISH answer as a real redis-server 7.0 does, a
# subscriber may send only what Redis lets it, every message reaches every
# subscriber once and in order, a subscriber that leaves is forgotten, and
# the output limit (-o HARD[:SOFT:SECONDS], Redis's client-output-buffer-
# limit pubsub) cuts off a subscriber that does not read, so that a
# publisher's flood never grows the server beyond the limit.
# Runs $IMPL's program (solutions: the chapter's mini-redis; `make ex` uses
# exercises: yours, exercises/15-mini-redis/my-redis/).

load ../helpers/common
load ../helpers/echo_suite
load redis

setup() { stage_setup; }

# subscribed FD KIND NAME COUNT: the reply to one (p)subscription comes on
# FD within 5 s: KIND (subscribe or psubscribe), NAME, and the count.
subscribed() {
    local line i got=() want
    for ((i = 0; i < 6; i++)); do
        IFS= read -r -t 5 line <&"$1" || server_gone "$2 $3: expected its reply within 5 s, got: ${got[*]:-nothing}"
        got+=("${line%$'\r'}")
    done
    want="*3 \$${#2} $2 \$${#3} $3 :$4"
    [ "${got[*]}" = "$want" ] || server_gone "$2 $3: expected '$want', got '${got[*]}'"
}

# subscriber VAR KIND NAME: a new connection, subscribed to NAME (KIND:
# subscribe or psubscribe); its fd in VAR.
subscriber() {
    conn_open "$1"
    send_on "${!1}" "$2 $3\r\n"
    subscribed "${!1}" "$2" "$3" 1
}

# receivers CHANNEL WANT: PUBLISH CHANNEL x answers :WANT, within 5 s (a
# subscriber that left may take a moment to be counted out).
receivers() {
    local out t0=$SECONDS
    for ((;;)); do
        out=$(mini_cmd publish "$1" x)
        [ "$out" = ":$2\\r\\n" ] && return 0
        [ -n "$out" ] || server_gone "PUBLISH $1 x: no reply"
        [ $((SECONDS - t0)) -lt 5 ] || fail "PUBLISH $1 x answers $out after 5 s, expected :$2"
        sleep 0.05
    done
}

# publishes FILE N BYTES: N lines "publish ch <BYTES bytes>", into FILE, for
# resp-cat, which sends each after the reply to the last, as a client
# library does.
publishes() {
    local i one="$BATS_TEST_TMPDIR/one"
    printf 'publish ch ' >"$one"
    head -c "$3" /dev/zero | tr '\0' m >>"$one"
    printf '\n' >>"$one"
    for ((i = 0; i < $2; i++)); do cat "$one"; done >"$1"
}

# message_stream N: N requests PUBLISH ch <message i> in RESP, into
# $BATS_TEST_TMPDIR/pub, and what a subscriber to ch gets of them
# (want.message) and one to the pattern c? (want.pmessage). Message i is
# "m<i>", every 250th with 100 KB before it, which takes more than one send.
message_stream() {
    local i m big
    big=$(head -c 102400 /dev/zero | tr '\0' b)
    for ((i = 0; i < $1; i++)); do
        m="m$i"
        ((i % 250)) || m="$big$m"
        printf '*3\r\n$7\r\nPUBLISH\r\n$2\r\nch\r\n$%d\r\n%s\r\n' ${#m} "$m" >&4
        printf '*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$%d\r\n%s\r\n' ${#m} "$m" >&5
        printf '*4\r\n$8\r\npmessage\r\n$2\r\nc?\r\n$2\r\nch\r\n$%d\r\n%s\r\n' ${#m} "$m" >&6
    done 4>"$BATS_TEST_TMPDIR/pub" 5>"$BATS_TEST_TMPDIR/want.message" 6>"$BATS_TEST_TMPDIR/want.pmessage"
}

# closed_by_server FD SECS: the server closes the connection on FD within
# SECS seconds (what it sent before is read and dropped; a reset counts).
closed_by_server() {
    local st=0
    timeout "$2" cat <&"$1" >/dev/null 2>&1 || st=$?
    [ "$st" -ne 124 ] || fail "the connection is still open $2 s later"
}

@test "SUBSCRIBE PSUBSCRIBE UNSUBSCRIBE PUNSUBSCRIBE PUBLISH and the subscribed context: redis-server's replies and messages (scripts/stage-6-pubsub.txt)" {
    require_redis
    redis_start
    mini_start
    both -m -t $((3000 * $(san_slowdown))) "$SCRIPTS/stage-6-pubsub.txt" </dev/null
    require_server_alive
    same_replies "stage-6-pubsub.txt"
}

@test "5,000 messages published in one stream reach each of 3 subscribers (2 by channel, 1 by pattern) once, whole and in order; each PUBLISH counts 3" {
    local n=5000 fd subs=() pids=() i f want
    mini_start
    subscriber fd subscribe ch
    subs+=("$fd")
    subscriber fd subscribe ch
    subs+=("$fd")
    subscriber fd psubscribe 'c?'
    subs+=("$fd")
    untraced message_stream "$n"
    for i in 1 2 3; do
        f="$BATS_TEST_TMPDIR/want.message"
        [ "$i" != 3 ] || f="$BATS_TEST_TMPDIR/want.pmessage"
        timeout --foreground 20 head -c "$(stat -c %s "$f")" <&"${subs[$((i - 1))]}" >"$BATS_TEST_TMPDIR/got.$i" 3>&- &
        pids+=($!)
        _course_pids+=($!)
    done
    timeout 20 "$(chapter_bin resp-cat)" -r -p "$PORT" <"$BATS_TEST_TMPDIR/pub" >"$BATS_TEST_TMPDIR/pub.out" ||
        server_gone "the publisher failed: $(tail -n 2 "$BATS_TEST_TMPDIR/pub.out")"
    [ "$(grep -c '^:3\\r\\n$' "$BATS_TEST_TMPDIR/pub.out")" -eq "$n" ] ||
        server_gone "not $n replies :3 to the PUBLISHes: $(sort "$BATS_TEST_TMPDIR/pub.out" | uniq -c | head -n 5)"
    for i in 1 2 3; do
        wait "${pids[$((i - 1))]}" || true
        want="$BATS_TEST_TMPDIR/want.message"
        [ "$i" != 3 ] || want="$BATS_TEST_TMPDIR/want.pmessage"
        cmp "$want" "$BATS_TEST_TMPDIR/got.$i" >/dev/null ||
            server_gone "subscriber $i did not get the $n messages as published: $(cmp "$want" "$BATS_TEST_TMPDIR/got.$i" 2>&1 | head -n 1)"
    done
}

@test "subscribers that leave are forgotten: 40 come (channels and patterns) and go, and PUBLISH counts none of them; no fd is left open" {
    local fds=() fd i before after t0
    mini_start
    receivers ch 0
    before=$(fd_count "$SERVER_PID")
    for ((i = 0; i < 40; i++)); do
        if ((i % 2)); then subscriber fd subscribe ch; else subscriber fd psubscribe 'c*'; fi
        fds+=("$fd")
    done
    receivers ch 40
    for fd in "${fds[@]}"; do
        exec {fd}>&-
    done
    receivers ch 0
    t0=$SECONDS
    while after=$(fd_count "$SERVER_PID") && [ "$after" -gt "$before" ] && [ $((SECONDS - t0)) -lt 5 ]; do
        sleep 0.1
    done
    [ "$after" -le "$before" ] || fail "$after fds open after the 40 subscribers left, $before before them"
}

@test "SIGTERM with a subscriber that does not read, its sends stuck on a full socket: exit 0 at once" {
    local slow
    mini_start
    subscriber slow subscribe ch
    publishes "$BATS_TEST_TMPDIR/pub.txt" 16 524288
    timeout 20 "$(chapter_bin resp-cat)" -p "$PORT" "$BATS_TEST_TMPDIR/pub.txt" >"$BATS_TEST_TMPDIR/pub.out" ||
        server_gone "the publisher failed: $(tail -c 300 "$BATS_TEST_TMPDIR/pub.out")"
    [ "$(grep -c '^:1\\r\\n$' "$BATS_TEST_TMPDIR/pub.out")" -eq 16 ] ||
        fail "expected 16 replies :1: $(grep -v '^>' "$BATS_TEST_TMPDIR/pub.out" | sort | uniq -c)"
    stop_within 5 TERM
    exec {slow}>&-
}

@test "the hard output limit (-o 8388608): a subscriber that never reads is cut off, the one that reads gets all 48 MB, the publisher is answered all along, and the server stays small" {
    local slow fast reader chunk one hwm0 hwm c t0 got size=65536 per=64 chunks=12
    mini_start -o 8388608
    subscriber slow subscribe ch
    subscriber fast subscribe ch
    publishes "$BATS_TEST_TMPDIR/chunk.txt" "$per" "$size"
    one=$(($(printf '*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$%d\r\n\r\n' "$size" | wc -c) + size))
    chunk=$((per * one))
    # cat writes each read as it comes (head would hold the last bytes back)
    timeout --foreground 60 cat <&"$fast" >"$BATS_TEST_TMPDIR/fast.out" 3>&- &
    reader=$!
    _course_pids+=("$reader")
    require_server_alive
    hwm0=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SERVER_PID/status")
    # 4 MB at a time, each once the reading subscriber has it all: it never
    # has more than that waiting, whatever the machine's load; the other
    # one has everything published since it stopped reading
    for ((c = 1; c <= chunks; c++)); do
        timeout 30 "$(chapter_bin resp-cat)" -p "$PORT" "$BATS_TEST_TMPDIR/chunk.txt" >>"$BATS_TEST_TMPDIR/pub.out" ||
            server_gone "the publisher failed: $(tail -c 300 "$BATS_TEST_TMPDIR/pub.out")"
        t0=$SECONDS
        until got=$(stat -c %s "$BATS_TEST_TMPDIR/fast.out") && [ "$got" -ge $((c * chunk)) ]; do
            [ $((SECONDS - t0)) -lt 10 ] ||
                server_gone "the reading subscriber got $got of the $((c * chunk)) bytes published so far"
            sleep 0.01
        done
    done
    kill "$reader"
    wait "$reader" || true
    [ "$(stat -c %s "$BATS_TEST_TMPDIR/fast.out")" -eq $((chunks * chunk)) ] ||
        fail "the reading subscriber got $(stat -c %s "$BATS_TEST_TMPDIR/fast.out") bytes, not the $((chunks * chunk)) published"
    grep -v '^> ' "$BATS_TEST_TMPDIR/pub.out" | grep -qv '^:[12]\\r\\n$' &&
        fail "a PUBLISH got something other than :2 or :1: $(grep -v '^> ' "$BATS_TEST_TMPDIR/pub.out" | sort | uniq -c)"
    hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SERVER_PID/status")
    echo "# 48 MB published: peak RSS $hwm0 KiB before, $hwm KiB after" >&3
    if ! course_valgrind && [[ "$BUILD" != */san-* ]]; then
        # the limit for the slow one, a chunk for the other, the
        # publisher's request: half the 48 MB published
        [ $((hwm - hwm0)) -lt 24576 ] || fail "the server's peak RSS grew by $((hwm - hwm0)) KiB"
    fi
    closed_by_server "$slow" 3
    receivers ch 1
    exec {slow}>&- {fast}>&-
}

@test "the soft output limit (-o 33554432:1048576:1): a subscriber over it is not cut off before a second, and is by the first message 2 s after" {
    local slow i out t0 t1 now wait_us
    mini_start -o 33554432:1048576:1
    subscriber slow subscribe ch
    publishes "$BATS_TEST_TMPDIR/pub.txt" 24 524288
    # 12 MB: more than the kernel holds for a client that does not read,
    # less than the hard limit. It goes over the soft limit between t0 and
    # t1, so it may be cut off from t0 + 1 s on (Redis counts whole seconds
    # of its clock: more than 1 of them, between 1 and 2 s), and must be by
    # a message from t1 + 2 s on.
    t0=${EPOCHREALTIME/./}
    timeout 20 "$(chapter_bin resp-cat)" -p "$PORT" "$BATS_TEST_TMPDIR/pub.txt" >"$BATS_TEST_TMPDIR/pub.out" ||
        server_gone "the publisher failed: $(tail -c 300 "$BATS_TEST_TMPDIR/pub.out")"
    t1=${EPOCHREALTIME/./}
    [ "$(grep -c '^:1\\r\\n$' "$BATS_TEST_TMPDIR/pub.out")" -eq 24 ] || [ $((t1 - t0)) -ge 1000000 ] ||
        server_gone "over the soft limit for less than 1 s, it was cut off: $(grep -v '^>' "$BATS_TEST_TMPDIR/pub.out" | sort | uniq -c)"
    for ((i = 0; i < 5; i++)); do
        now=${EPOCHREALTIME/./}
        out=$(mini_cmd publish ch x)
        [ "$out" = ':1\r\n' ] || [ $((now - t0)) -ge 1000000 ] ||
            server_gone "over the soft limit for less than 1 s, PUBLISH answers ${out:-nothing}, not :1"
        sleep 0.05
    done
    wait_us=$((t1 + 2100000 - ${EPOCHREALTIME/./}))
    if [ "$wait_us" -gt 0 ]; then
        sleep "$((wait_us / 1000000)).$(printf '%06d' $((wait_us % 1000000)))"
    fi
    run mini_cmd publish ch x
    closed_by_server "$slow" 5
    receivers ch 0
    exec {slow}>&-
}
