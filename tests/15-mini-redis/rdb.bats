#!/usr/bin/env bats
# Chapter 15: persistence, beside what the capstone's stage 7
# (stage-7.bats) checks of any server: expired keys neither written nor
# loaded; BGSAVE's snapshot of its moment while the writes go on, and a
# second save refused as redis-server refuses it; a damaged, foreign or
# too-new file refused in one line; no fd leaked by a save.

bats_require_minimum_version 1.5.0

load ../helpers/common
load ../helpers/echo_suite
load redis

# fill: the keys every test saves: strings (binary, empty, long, numbers),
# lists of many sizes whose elements cross every listpack encoding and
# backlen size (63/64, 4095/4096 bytes; 125/126, 16377/16378), expire times.
fill() {
    local many
    many=$(seq 1 5000 | tr '\n' ' ')
    {
        echo 'set plain hello'
        echo 'set empty ""'
        echo 'set bin "\x00\x01\r\n\xff end"'
        echo 'setrange long 99999 z'
        echo 'set num 12345'
        echo 'set neg -7'
        echo 'rpush one a'
        echo 'rpush two "" "\x00"'
        echo "rpush hundred $(seq 1 100 | tr '\n' ' ')"
        echo "rpush many $many"
        printf 'rpush wide'
        for n in 63 64 125 126 4095 4096 16377 16378 70000; do
            printf ' %s' "$(head -c "$n" /dev/zero | tr '\0' "$((n % 10))")"
        done
        echo
        echo 'set ttl v ex 100000'
        echo 'rpush ttllist a b'
        echo 'pexpireat ttllist 99999999999999'
    } >"$BATS_TEST_TMPDIR/fill.txt"
    timeout 30 "$(chapter_bin resp-cat)" -p "$PORT" "$BATS_TEST_TMPDIR/fill.txt" >/dev/null ||
        server_gone "filling mini-redis failed"
}

# read_script: what the comparisons read: every key's type, value and
# absolute expire time (PEXPIRETIME: the same on both sides).
read_script() {
    echo '~ keys *'
    echo 'dbsize'
    for k in plain empty bin long num neg one two hundred many wide ttl ttllist gone; do
        echo "type $k"
        echo "pexpiretime $k"
        case $k in
        one | two | hundred | many | wide | ttllist) echo "lrange $k 0 -1" ;;
        *) echo "get $k" ;;
        esac
    done
}

# redis_on_dump DIR NAME: redis-server 7.0 started on DIR/NAME, checking every
# listpack deeply as it loads (sanitize-dump-payload yes).
redis_on_dump() {
    redis_start --dir "$1" --dbfilename "$2" --sanitize-dump-payload yes
}

# reads_from OUT -p PORT | -s SOCK: run read_script, replies to OUT.
reads_from() {
    local out=$1
    shift
    read_script | timeout 30 "$(chapter_bin resp-cat)" "$@" >"$out" ||
        fail "resp-cat $* failed: $(tail -n 3 "$out")"
}

# until_log TEXT: wait (bounded) for TEXT in the server's stderr.
until_log() {
    local i
    for ((i = 0; i < 100 * $(san_slowdown); i++)); do
        grep -q "$1" "$SERVER_ERR" && return 0
        sleep 0.05
    done
    fail "no \"$1\" on mini-redis's stderr: $(cat "$SERVER_ERR")"
}

@test "a key already expired is not written, and one that expired while the server was down is not loaded" {
    require_redis
    mini_start -d "$BATS_TEST_TMPDIR"
    fill
    # One read, one batch: nothing runs between the commands, so "gone" is
    # still in the table, expired, when the second SAVE walks it (the first
    # SAVE, of 100 KB and more, takes well over the 1 ms).
    printf 'set gone v px 1\r\nsave\r\nsave\r\n' |
        timeout 10 "$(chapter_bin resp-cat)" -r -p "$PORT" >"$BATS_TEST_TMPDIR/saves.out"
    assert_equal "$(cat "$BATS_TEST_TMPDIR/saves.out")" "$(printf '%s\n' '+OK\r\n' '+OK\r\n' '+OK\r\n' '(closed)')"
    run redis-check-rdb "$BATS_TEST_TMPDIR/dump.rdb"
    assert_output --partial '[info] 13 keys read'
    # ttllist expires at 99999999999999 ms: in the file those 8 bytes, little
    # endian. Put it in 1970 (1 ms), and the checksum to 0 ("not computed").
    server_stop
    local f="$BATS_TEST_TMPDIR/dump.rdb" at size
    at=$(LC_ALL=C grep -obUaP '\xff\x3f\x7a\x10\xf3\x5a' "$f" | cut -d: -f1)
    [ -n "$at" ] || fail "the expire time of ttllist is not in the file"
    printf '\x01\x00\x00\x00\x00\x00\x00\x00' | dd of="$f" bs=1 seek="$at" conv=notrunc status=none
    size=$(stat -c %s "$f")
    head -c 8 /dev/zero | dd of="$f" bs=1 seek=$((size - 8)) conv=notrunc status=none
    run redis-check-rdb "$f"
    assert_output --partial '[info] 1 already expired'
    mini_start -d "$BATS_TEST_TMPDIR"
    run mini_cmd dbsize
    assert_output ':12\r\n'
    redis_on_dump "$BATS_TEST_TMPDIR" dump.rdb
    reads_from "$BATS_TEST_TMPDIR/redis.out" -s "$REDIS_SOCK"
    reads_from "$BATS_TEST_TMPDIR/mini.out" -p "$PORT"
    same_replies "the keys loaded from a file with an expired key"
}

@test "BGSAVE writes the snapshot of its moment while the writes go on; a second BGSAVE or a SAVE meanwhile is refused, as redis-server refuses them" {
    require_redis
    redis_start
    mkdir "$BATS_TEST_TMPDIR/mini"
    mini_start -d "$BATS_TEST_TMPDIR/mini"
    # In one batch: the refusals cannot depend on how fast the child is.
    printf 'bgsave\r\nbgsave\r\nsave\r\n' | both -r
    same_replies "BGSAVE while one runs"
    until_log 'terminated with success'
    : >"$SERVER_ERR"
    printf 'set s before\r\nrpush l a\r\nbgsave\r\nset s after\r\nrpush l b\r\ndel l2\r\n' |
        timeout 10 "$(chapter_bin resp-cat)" -r -p "$PORT" >/dev/null
    until_log 'terminated with success'
    server_stop
    mini_start -d "$BATS_TEST_TMPDIR/mini"
    run mini_cmd get s
    assert_output '$6\r\nbefore\r\n'
    run mini_cmd llen l
    assert_output ':1\r\n'
}

@test "a truncated, corrupt or foreign file is refused at start: one line on stderr, exit 1" {
    mini_start -d "$BATS_TEST_TMPDIR"
    fill
    run mini_cmd save
    server_stop
    local f="$BATS_TEST_TMPDIR/dump.rdb" size cut
    size=$(stat -c %s "$f")
    for cut in 3 9 40 $((size / 2)) $((size - 9)) $((size - 1)); do
        head -c "$cut" "$f" >"$BATS_TEST_TMPDIR/cut.rdb"
        run --separate-stderr timeout 30 "$(chapter_bin mini-redis)" -p 0 -d "$BATS_TEST_TMPDIR" -f cut.rdb
        assert_failure 1
        [ "${#stderr_lines[@]}" -eq 1 ] || fail "cut at $cut: ${#stderr_lines[@]} lines: $stderr"
        [[ "$stderr" == *"cut.rdb: at byte "*"ends early"* ]] || fail "cut at $cut: $stderr"
    done
    cp "$f" "$BATS_TEST_TMPDIR/bad.rdb"
    printf '\x7e' | dd of="$BATS_TEST_TMPDIR/bad.rdb" bs=1 seek=$((size / 2)) conv=notrunc status=none
    run --separate-stderr timeout 30 "$(chapter_bin mini-redis)" -p 0 -d "$BATS_TEST_TMPDIR" -f bad.rdb
    assert_failure 1
    [ "${#stderr_lines[@]}" -eq 1 ] || fail "${#stderr_lines[@]} lines: $stderr"
    [[ "$stderr" == *"bad.rdb: at byte"*"wrong checksum"* ]] || fail "a corrupt byte: $stderr"
    printf 'REDIS0011\xff' >"$BATS_TEST_TMPDIR/new.rdb"
    run --separate-stderr timeout 30 "$(chapter_bin mini-redis)" -p 0 -d "$BATS_TEST_TMPDIR" -f new.rdb
    assert_failure 1
    [[ "$stderr" == *'RDB version "0011"'* ]] || fail "version 11: $stderr"
    run --separate-stderr timeout 30 "$(chapter_bin mini-redis)" -p 0 -d "$BATS_TEST_TMPDIR/none" -f x.rdb
    assert_failure 1
    [[ "$stderr" == *"none/x.rdb"* ]] || fail "a folder that is not there: $stderr"
}

@test "SAVE and BGSAVE leak no fd, in the server or in the child's stead" {
    mini_start -d "$BATS_TEST_TMPDIR"
    fill
    local before after i
    run mini_cmd save
    before=$(fd_count "$SERVER_PID")
    for i in 1 2 3; do
        run mini_cmd save
        assert_output '+OK\r\n'
        : >"$SERVER_ERR"
        run mini_cmd bgsave
        assert_output '+Background saving started\r\n'
        until_log 'terminated with success'
    done
    after=$(fd_count "$SERVER_PID")
    assert_equal "$after" "$before"
    server_stop
    assert_equal "$SERVER_STATUS" 0
}
