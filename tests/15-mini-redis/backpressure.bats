#!/usr/bin/env bats
# Chapter 15: a subscriber that does not read is cut off at its output limit
# (Redis's client-output-buffer-limit pubsub), while the publisher and the
# subscribers that read go on at full speed, and the server's memory stays
# bounded by the limit, not by what was published.

load ../helpers/common
load redis

MSG_BYTES=524288 # each message
MSGS=200         # 100 MB in all

# numsub CHANNEL: PUBSUB NUMSUB's count, from mini-redis.
numsub() {
    printf 'PUBSUB NUMSUB %s\r\n' "$1" | timeout 10 "$(chapter_bin resp-cat)" -r -p "$PORT" |
        sed -n 's/.*:\([0-9]*\)\\r\\n$/\1/p' | head -n 1
}

# publishes FILE: a resp-cat script of $MSGS "PUBLISH ch <512 KiB>", into
# FILE. resp-cat sends each after the reply to the last: the publisher goes
# as fast as the server answers it, and no faster, as a client library does.
publishes() {
    local i one="$BATS_TEST_TMPDIR/one"
    printf 'publish ch ' >"$one"
    head -c "$MSG_BYTES" /dev/zero | tr '\0' m >>"$one"
    printf '\n' >>"$one"
    for ((i = 0; i < MSGS; i++)); do cat "$one"; done >"$1"
}

@test "a subscriber that never reads is cut off at the limit; the reading one gets all 100 MB; RSS stays bounded" {
    local slow fast reader want got t0 hwm bound=$((10 * $(san_slowdown)))
    mini_start -o 33554432 # Redis's hard limit; no soft one
    untraced publishes "$BATS_TEST_TMPDIR/pub.resp"
    conn_open slow
    printf 'SUBSCRIBE ch\r\n' >&"$slow" # and never read
    conn_open fast
    printf 'SUBSCRIBE ch\r\n' >&"$fast"
    # what the reader must get: its subscription's reply, then every message
    want=$(($(printf '*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:2\r\n' | wc -c) +
        MSGS * ($(printf '*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$%d\r\n\r\n' "$MSG_BYTES" | wc -c) + MSG_BYTES)))
    timeout $((60 * $(san_slowdown))) head -c "$want" <&"$fast" >"$BATS_TEST_TMPDIR/fast.out" &
    reader=$!
    t0=$SECONDS
    until [ "$(numsub ch)" = 2 ]; do
        [ $((SECONDS - t0)) -lt "$bound" ] || fail "PUBSUB NUMSUB ch is not 2 after $bound s"
        sleep 0.05
    done
    timeout $((60 * $(san_slowdown))) "$(chapter_bin resp-cat)" -p "$PORT" "$BATS_TEST_TMPDIR/pub.resp" |
        grep -v '^> ' >"$BATS_TEST_TMPDIR/pub.out" || fail "the publisher failed: $(tail -n 3 "$BATS_TEST_TMPDIR/pub.out")"
    [ "$(grep -c '^:[12]\\r\\n$' "$BATS_TEST_TMPDIR/pub.out")" -eq "$MSGS" ] ||
        fail "the publisher did not get $MSGS replies: $(sort "$BATS_TEST_TMPDIR/pub.out" | uniq -c | head)"
    wait "$reader" || fail "the reading subscriber got $(wc -c <"$BATS_TEST_TMPDIR/fast.out") of $want bytes"
    got=$(wc -c <"$BATS_TEST_TMPDIR/fast.out")
    [ "$got" -eq "$want" ] || fail "the reading subscriber got $got bytes, not $want"
    # the one that never read was closed: what it has is what the kernel
    # held, then the end
    timeout 10 cat <&"$slow" >"$BATS_TEST_TMPDIR/slow.out" || fail "the slow subscriber is still connected"
    grep -q "closed for overcoming of output buffer limits" "$SERVER_ERR" ||
        fail "no word of the cut on stderr: $(cat "$SERVER_ERR")"
    hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SERVER_PID/status")
    echo "# 100 MB published: the slow subscriber got $(wc -c <"$BATS_TEST_TMPDIR/slow.out") bytes before the cut; the server's peak RSS $hwm KiB" >&3
    if ! course_valgrind && [[ "$BUILD" != */san-* ]]; then
        # the limit (32 MiB) for the slow one, a little for the fast one and
        # the publisher's request: well below the 100 MB that went through
        [ "$hwm" -lt 65536 ] || fail "the server's peak RSS was $hwm KiB"
    fi
    exec {slow}>&- {fast}>&-
    server_stop
    [ "$SERVER_STATUS" -eq 0 ]
}

@test "-o: a bad output limit prints the usage and exits 2" {
    local bad
    for bad in 100 abc 1048576:2097152:60 1048576:1024 1048576:1024:x 1048576:1024:60:1; do
        run timeout 10 "$(chapter_bin mini-redis)" -p 0 -o "$bad"
        [ "$status" -eq 2 ] || fail "-o $bad: exit $status, expected 2: $output"
    done
}
