#!/usr/bin/env bats
# Capstone stage 15-mini-redis/stage-7: snapshots. SAVE and BGSAVE write an
# RDB file (./dump.rdb, or -d DIR -f NAME) that Debian's redis-check-rdb
# accepts, checksum included, and a real redis-server 7.0 loads with the
# same strings, lists and expire times; the server loads its file at start
# and refuses one it cannot read; BGSAVE leaves the loop serving and writes
# the key space of its moment, SAVE holds everyone until its file is in
# place; the file is replaced whole or not at all, LASTSAVE moves with it,
# and SIGTERM during a BGSAVE leaves the old file alone. The test knob
# MINI_REDIS_SAVE_PAUSE_MS=N makes every save wait N ms before its file
# takes the place of the old one, so that the tests see a save under way.
# Runs $IMPL's program (solutions: the chapter's mini-redis; `make ex` uses
# exercises: yours, exercises/15-mini-redis/my-redis/).

load ../helpers/common
load redis

setup() { stage_setup; }

# The keys every test saves: strings of every length encoding (63/64 and
# 16383/16384 bytes, 100 KB), binary and empty, numbers; lists of one, of
# empty and binary elements, of 100 and of 5,000, and one of elements of
# many sizes; three keys with an expire time, the rest without.
KEYS=(plain empty bin s63 s64 s16383 s16384 long num neg big one two hundred many wide ttl ttllist at)
LISTS=" one two hundred many wide ttllist "
EXPIRING=" ttl ttllist at "
AT_MS=99999999999999 # the PXAT of "at"

# word N C: N times the character C.
word() {
    head -c "$1" /dev/zero | tr '\0' "$2"
}

# fill_script: the resp-cat script that makes the keys above.
fill_script() {
    local n
    echo 'set plain hello'
    echo 'set empty ""'
    echo 'set bin "\x00\x01\r\n\xff end"'
    echo "set s63 $(word 63 a)"
    echo "set s64 $(word 64 b)"
    echo "set s16383 $(word 16383 c)"
    echo "set s16384 $(word 16384 d)"
    echo "set long $(word 100000 e)"
    echo 'set num 12345'
    echo 'set neg -7'
    echo 'set big 9223372036854775807'
    echo 'rpush one a'
    echo 'rpush two "" "\x00"'
    echo "rpush hundred $(seq 1 100 | tr '\n' ' ')"
    echo "rpush many $(seq 1 5000 | tr '\n' ' ')"
    printf 'rpush wide'
    for n in 1 63 64 125 126 4095 4096 16377 16378 70000; do
        printf ' %s' "$(word "$n" "$((n % 10))")"
    done
    echo
    echo 'set ttl v px 100000000'
    echo 'rpush ttllist a b'
    echo 'pexpire ttllist 200000000'
    echo "set at v pxat $AT_MS"
}

# fill: the keys, into mini-redis on $PORT.
fill() {
    fill_script >"$BATS_TEST_TMPDIR/fill.txt"
    timeout 30 "$(chapter_bin resp-cat)" -p "$PORT" "$BATS_TEST_TMPDIR/fill.txt" >"$BATS_TEST_TMPDIR/fill.out" ||
        server_gone "filling mini-redis failed: $(tail -c 300 "$BATS_TEST_TMPDIR/fill.out")"
    require_server_alive
    grep -q '^[-(]' "$BATS_TEST_TMPDIR/fill.out" &&
        fail "a command that makes the keys failed: $(grep -B1 '^[-(]' "$BATS_TEST_TMPDIR/fill.out" | head -c 300)"
    return 0
}

# read_script: what the comparisons read: DBSIZE, then each key's type and
# value, and for a key without an expire time its TTL (-1).
read_script() {
    local k
    echo dbsize
    for k in "${KEYS[@]}"; do
        echo "exists $k"
        echo "type $k"
        if [[ "$LISTS" == *" $k "* ]]; then echo "lrange $k 0 -1"; else echo "get $k"; fi
        [[ "$EXPIRING" == *" $k "* ]] || echo "ttl $k"
    done
}

# reads_from OUT -p PORT | -s SOCKET: read_script's replies, into OUT.
reads_from() {
    local out=$1
    shift
    read_script | timeout 30 "$(chapter_bin resp-cat)" "$@" >"$out" ||
        server_gone "reading the keys failed: $(tail -c 300 "$out")"
}

# pttl_near WHERE... -- KEY MS: PTTL KEY (redis-cli WHERE...) is within 60 s
# below MS, as it is for a key that had MS left when it was set.
pttl_near() {
    local where=() out
    while [ "$1" != -- ]; do
        where+=("$1")
        shift
    done
    out=$(timeout 10 redis-cli "${where[@]}" pttl "$2")
    [[ "$out" =~ ^[0-9]+$ ]] && [ "$out" -le "$3" ] && [ "$out" -gt $(($3 - 60000)) ] ||
        fail "PTTL $2 (${where[*]}) is '$out', expected a little under $3"
}

# expire_times WHERE...: the three keys with an expire time have the times
# they were given, on the server redis-cli WHERE... reaches.
expire_times() {
    pttl_near "$@" -- ttl 100000000
    pttl_near "$@" -- ttllist 200000000
    pttl_near "$@" -- at $((AT_MS - $(date +%s%3N)))
}

# mini_ok CMD...: CMD gets +OK from mini-redis.
mini_ok() {
    local out
    out=$(mini_cmd "$@")
    [ "$out" = '+OK\r\n' ] || server_gone "$*: expected +OK, got ${out:-nothing}"
}

# lastsave: LASTSAVE's integer, from mini-redis.
lastsave() {
    local out
    out=$(mini_cmd lastsave)
    [[ "$out" =~ ^:([0-9]+)\\r\\n$ ]] || server_gone "LASTSAVE: expected an integer, got ${out:-nothing}"
    LASTSAVE=${BASH_REMATCH[1]}
}

# only_file DIR NAME: DIR holds NAME and nothing else (no temp file left).
only_file() {
    local ls
    ls=$(ls -A "$1")
    [ "$ls" = "$2" ] || fail "$1 holds '$(tr '\n' ' ' <<<"$ls")', expected $2 alone"
}

@test "SAVE writes ./dump.rdb by default: redis-check-rdb accepts it, checksum included, and redis-server 7.0 loads the same strings, lists and expire times" {
    require_redis
    command -v redis-check-rdb >/dev/null || skip "redis-check-rdb is not installed (make deps: package redis-tools)"
    mkdir "$BATS_TEST_TMPDIR/mini"
    cd "$BATS_TEST_TMPDIR/mini" # the server's working folder: dump.rdb goes here
    mini_start
    fill
    mini_ok save
    only_file . dump.rdb
    run redis-check-rdb dump.rdb
    echo "$output" | grep -v 'AUX FIELD' | sed 's/^/# /' >&3
    [ "$status" -eq 0 ] && [[ "$output" == *'RDB looks OK'* ]] || fail "redis-check-rdb refuses the file: $output"
    assert_output --partial 'Checksum OK'
    assert_output --partial "[info] ${#KEYS[@]} keys read"
    assert_output --partial '[info] 3 expires'
    redis_start --dir "$BATS_TEST_TMPDIR/mini" --dbfilename dump.rdb --sanitize-dump-payload yes
    reads_from "$BATS_TEST_TMPDIR/redis.out" -s "$REDIS_SOCK"
    reads_from "$BATS_TEST_TMPDIR/mini.out" -p "$PORT"
    same_replies "the keys redis-server loaded from mini-redis's file"
    expire_times -s "$REDIS_SOCK"
}

@test "BGSAVE leaves the loop serving (MINI_REDIS_SAVE_PAUSE_MS=1500): PING answers while the file is not yet in place, another save is refused meanwhile, LASTSAVE moves once it is in place, and it holds the key space of BGSAVE's moment" {
    local dir="$BATS_TEST_TMPDIR/data" before t0 out
    mkdir "$dir"
    cd "$dir"
    # the PING, LASTSAVE and the refusals below all come during the pause
    MINI_REDIS_SAVE_PAUSE_MS=$((1500 * $(san_slowdown))) mini_start
    mini_ok set s before
    lastsave
    before=$LASTSAVE
    run mini_cmd bgsave
    [ "$output" = '+Background saving started\r\n' ] || server_gone "BGSAVE: $output"
    run mini_cmd ping
    [ "$output" = '+PONG\r\n' ] || server_gone "PING during the BGSAVE: $output"
    lastsave
    [ "$LASTSAVE" = "$before" ] ||
        fail "the PONG came once the save was over (LASTSAVE was $before, is $LASTSAVE): BGSAVE held the loop"
    [ ! -e "$dir/dump.rdb" ] ||
        fail "dump.rdb is there while the save waits (MINI_REDIS_SAVE_PAUSE_MS): it must take its name only once whole"
    out=$(printf 'BGSAVE\r\nSAVE\r\nSET s after\r\n' | timeout 10 "$(chapter_bin resp-cat)" -r -p "$PORT")
    [ "$out" = "$(printf '%s\n' '-ERR Background save already in progress\r\n' \
        '-ERR Background save already in progress\r\n' '+OK\r\n' '(closed)')" ] ||
        server_gone "BGSAVE, SAVE, SET while a BGSAVE runs: $out"
    t0=$SECONDS
    until lastsave && [ "$LASTSAVE" != "$before" ]; do
        [ $((SECONDS - t0)) -lt $((5 * $(san_slowdown))) ] || fail "LASTSAVE is still $before $((5 * $(san_slowdown))) s after BGSAVE"
        sleep 0.05
    done
    only_file "$dir" dump.rdb
    server_stop
    mini_start
    run mini_cmd get s
    [ "$output" = '$6\r\nbefore\r\n' ] || server_gone "the file holds s = $output, not the value of BGSAVE's moment"
}

@test "SAVE holds every client until its file is in place (MINI_REDIS_SAVE_PAUSE_MS=1000), then answers +OK, and LASTSAVE moves" {
    local dir="$BATS_TEST_TMPDIR/data" saver t0 t1 ms slowest=0 n=0 before
    mkdir "$dir"
    cd "$dir"
    MINI_REDIS_SAVE_PAUSE_MS=1000 mini_start
    mini_ok set k v
    lastsave
    before=$LASTSAVE
    timeout --foreground 20 "$(chapter_bin resp-cat)" -p "$PORT" <<<save >"$BATS_TEST_TMPDIR/save.out" 3>&- &
    saver=$!
    _course_pids+=("$saver")
    # PINGs, each on a new connection, until the SAVE is answered: one of
    # them comes while the save runs, and must wait for it
    while kill -0 "$saver" 2>/dev/null; do
        t0=${EPOCHREALTIME/./}
        run mini_cmd ping
        t1=${EPOCHREALTIME/./}
        [ "$output" = '+PONG\r\n' ] || server_gone "PING during a SAVE: $output"
        ms=$(((t1 - t0) / 1000))
        ((ms <= slowest)) || slowest=$ms
        n=$((n + 1))
        [ "$n" -lt 500 ] || fail "500 PINGs and the SAVE still runs"
    done
    wait "$saver" || server_gone "SAVE got no reply: $(cat "$BATS_TEST_TMPDIR/save.out")"
    echo "# $n PINGs during the SAVE, the slowest answered after $slowest ms" >&3
    assert_equal "$(cat "$BATS_TEST_TMPDIR/save.out")" '> save
+OK\r\n'
    [ "$slowest" -ge 500 ] || fail "no PING waited for the SAVE (the slowest took $slowest ms): SAVE must hold the loop"
    only_file "$dir" dump.rdb
    # a save of a second or more, after LASTSAVE was read: a later second
    lastsave
    [ "$LASTSAVE" -gt "$before" ] || fail "LASTSAVE is $LASTSAVE after the SAVE, $before before it"
}

# refuses FILE WHAT: mini-redis started in a folder where FILE is dump.rdb
# must exit at once, with a status that is not 0 and not a crash, and a
# message that names the file; and never start serving.
refuses() {
    local pid st="" i folder="$BATS_TEST_TMPDIR/refuses" out="$BATS_TEST_TMPDIR/refused.out" err="$BATS_TEST_TMPDIR/refused.err"
    rm -rf "$folder"
    mkdir "$folder"
    cp "$1" "$folder/dump.rdb"
    (cd "$folder" && exec "$MINI_REDIS" -p 0 >"$out" 2>"$err" 3>&-) &
    pid=$!
    _course_pids+=("$pid")
    for ((i = 0; i < 200; i++)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            st=0
            wait "$pid" || st=$?
            break
        fi
        grep -q '^listening on' "$out" && fail "$2: the server started serving on a file it cannot load"
        sleep 0.05
    done
    [ -n "$st" ] || fail "$2: the server neither served nor exited in 10 s"
    [ "$st" -ne 0 ] || fail "$2: exit status 0"
    [ "$st" -ne 99 ] || fail "$2: exit status 99, a TODO: $(cat "$err")"
    [ "$st" -lt 128 ] || fail "$2: killed by signal $((st - 128)): $(cat "$err")"
    grep -q dump.rdb "$err" || fail "$2: exit status $st, and no word of dump.rdb on stderr: $(cat "$err")"
    echo "# $2: exit $st: $(head -n 3 "$err" | tr '\n' ' ')" >&3
}

@test "a file that cannot be loaded stops the start, with a message naming it: truncated, with a byte changed (checksum), not an RDB file" {
    local dir="$BATS_TEST_TMPDIR/data" f size cut at
    mkdir "$dir"
    cd "$dir"
    mini_start
    fill
    mini_ok save
    server_stop
    f="$dir/dump.rdb"
    size=$(stat -c %s "$f")
    for cut in 5 9 $((size / 2)) $((size - 9)) $((size - 1)); do
        head -c "$cut" "$f" >"$BATS_TEST_TMPDIR/cut.rdb"
        refuses "$BATS_TEST_TMPDIR/cut.rdb" "the file cut at byte $cut of $size"
    done
    # a byte of the value of "plain" (hello): the file still parses
    at=$(LC_ALL=C grep -obUa 'hello' "$f" | head -n 1 | cut -d: -f1)
    [ -n "$at" ] || fail "the value 'hello' is not in the file as it is"
    cp "$f" "$BATS_TEST_TMPDIR/changed.rdb"
    printf 'j' | dd of="$BATS_TEST_TMPDIR/changed.rdb" bs=1 seek="$at" conv=notrunc status=none
    refuses "$BATS_TEST_TMPDIR/changed.rdb" "a byte of a value changed, the checksum not"
    printf 'not a snapshot\n' >"$BATS_TEST_TMPDIR/text.rdb"
    refuses "$BATS_TEST_TMPDIR/text.rdb" "a text file"
}

@test "SIGTERM during a BGSAVE: exit 0 at once, the save's process gone, the old file alone in its folder, unchanged" {
    local dir="$BATS_TEST_TMPDIR/data" kids kid i state
    mkdir "$dir"
    cd "$dir"
    mini_start
    mini_ok set k old
    mini_ok save
    server_stop
    cp "$dir/dump.rdb" "$BATS_TEST_TMPDIR/old.rdb"
    MINI_REDIS_SAVE_PAUSE_MS=5000 mini_start
    mini_ok set k new
    run mini_cmd bgsave
    [ "$output" = '+Background saving started\r\n' ] || server_gone "BGSAVE: $output"
    kids=$(pgrep -P "$SERVER_PID" || true)
    stop_within 5 TERM
    for kid in $kids; do
        for ((i = 0; i < 100; i++)); do
            state=$(cat "/proc/$kid/stat" 2>/dev/null) || break
            state=${state##*) }
            [ "${state%% *}" != Z ] || break
            sleep 0.05
        done
        [ "$i" -lt 100 ] || fail "the server's child $kid (the save?) outlived it by 5 s"
    done
    only_file "$dir" dump.rdb
    cmp -s "$dir/dump.rdb" "$BATS_TEST_TMPDIR/old.rdb" || fail "dump.rdb changed: the interrupted save replaced it"
}

@test "restarted on its own file (-d DIR -f NAME), it answers as before; a key whose time passed while it was down is not loaded" {
    local dir="$BATS_TEST_TMPDIR/data" t0
    mkdir "$dir"
    mini_start -d "$dir" -f my.rdb
    fill
    reads_from "$BATS_TEST_TMPDIR/before.out" -p "$PORT"
    printf 'set gone v px 300\r\nsave\r\n' | timeout 10 "$(chapter_bin resp-cat)" -r -p "$PORT" >"$BATS_TEST_TMPDIR/save.out"
    t0=$(date +%s%3N) # "gone" was set before this moment
    [ "$(cat "$BATS_TEST_TMPDIR/save.out")" = "$(printf '%s\n' '+OK\r\n' '+OK\r\n' '(closed)')" ] ||
        server_gone "SET gone v PX 300, SAVE: $(cat "$BATS_TEST_TMPDIR/save.out")"
    only_file "$dir" my.rdb
    server_stop
    [ "$SERVER_STATUS" -eq 0 ] || fail "SIGTERM: exit status $SERVER_STATUS"
    while [ $(($(date +%s%3N) - t0)) -le 350 ]; do sleep 0.05; done # "gone" has expired
    mini_start -d "$dir" -f my.rdb
    # at once, before any expire cycle: the key was not loaded at all
    run mini_cmd dbsize
    [ "$output" = ":${#KEYS[@]}\\r\\n" ] ||
        server_gone "DBSIZE after the restart: $output, expected ${#KEYS[@]}: the key that expired while the server was down was loaded"
    run mini_cmd exists gone
    assert_output ':0\r\n'
    reads_from "$BATS_TEST_TMPDIR/after.out" -p "$PORT"
    run diff -u --label before --label after "$BATS_TEST_TMPDIR/before.out" "$BATS_TEST_TMPDIR/after.out"
    [ "$status" -eq 0 ] || fail "the keys differ after the restart: $output"
    expire_times -p "$PORT"
}
