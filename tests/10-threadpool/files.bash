# SPDX-License-Identifier: MIT
# tests/10-threadpool/files.bash: a served root and a client vocabulary for
# file-server, shared by chapter.bats and the exercise files (whose own
# set-up is in exercise.bash).
#
#   make_root DIR        files of many sizes, a subfolder, symlinks in and out, a FIFO
#   fetch ARGS...        file-client -p $PORT ARGS (with a timeout), via bats' run
#   stat_of NAME         one counter from the server's STATS reply
#   wait_stat NAME VALUE wait up to 10 s until the counter has that value
#   wait_pool_idle       wait until no job runs or waits
#   fetch_cmp PATH...    fetch each file, compare it byte for byte with the original
#   full_queue_answers_busy MS SECONDS   one thread, one queue slot, both taken: ERR BUSY
#   idle_for_2s WHY      the server uses under a quarter of a CPU over 2 s, or fail with WHY

# FILE_CLIENT: the client program (the chapter's: the exercise changes only the server).
FILE_CLIENT="$BUILD/chapters/10-threadpool/file-client"

make_root() {
    local root="$1" n
    mkdir -p "$root/sub/deeper"
    for n in 0 1 4095 4096 4097 65536; do
        payload "$root/f$n.bin" "$n"
    done
    payload "$root/big.bin" $((5 * 1024 * 1024 + 3))
    payload "$root/slow.bin" $((1024 * 1024))
    printf 'hello from a subfolder\n' >"$root/sub/deeper/hello.txt"
    printf 'TOP SECRET\n' >"$root/../secret.txt"
    ln -s sub/deeper/hello.txt "$root/link-inside"
    ln -s ../secret.txt "$root/link-outside"
    ln -s /etc/hostname "$root/link-absolute"
    mkfifo "$root/fifo"
}

fetch() {
    [ -x "$FILE_CLIENT" ] || fail "missing ${FILE_CLIENT#"$TOP"/}: build it first with: make -C chapters/10-threadpool"
    run timeout 60 "$FILE_CLIENT" -p "$PORT" -t "${FETCH_TIMEOUT:-50}" "$@"
}

stat_of() {
    timeout 20 "$FILE_CLIENT" -p "$PORT" -t 10 -S | awk -v k="$1" '$1 == k { print $2 }'
}

wait_stat() {
    local i v=""
    for ((i = 0; i < 200; i++)); do
        v="$(stat_of "$1")"
        [ "$v" = "$2" ] && return 0
        sleep 0.05
    done
    fail "expected STATS $1 to reach $2 within 10 s, last seen '$v'"
}

# wait_pool_idle: wait up to 20 s until no job runs or waits (STATS busy 0, queued 0).
wait_pool_idle() {
    local i st=""
    for ((i = 0; i < 400; i++)); do
        st="$(timeout 20 "$FILE_CLIENT" -p "$PORT" -t 10 -S | tr '\n' ' ')"
        [[ "$st" == *" busy 0 "* && "$st" == *" queued 0 "* ]] && return 0
        sleep 0.05
    done
    fail "the pool did not become idle within 20 s: $st"
}

# fetch_cmp PATH...: each file alone, compared byte for byte with the original.
fetch_cmp() {
    local f out="$BATS_TEST_TMPDIR/fetched"
    for f in "$@"; do
        timeout 60 "$FILE_CLIENT" -p "$PORT" -t "${FETCH_TIMEOUT:-50}" -o "$out" "$f" ||
            server_gone "file-client $f failed (status $?)"
        cmp -s "$ROOT/$f" "$out" ||
            fail "$f: expected $(stat -c %s "$ROOT/$f") bytes, got $(stat -c %s "$out"); $(cmp "$ROOT/$f" "$out" 2>&1 | head -n 1)"
    done
}

# full_queue_answers_busy MS SECONDS: file-server (${SERVER[@]}) with one
# thread and one queue slot (-w 1 -q 1), each read slowed by MS ms (-s): a
# slow read runs, a second waits in the queue, and a third request gets
# ERR BUSY at once, counted in STATS rejected; the server then stops with
# exit 0 within 10 s of the end of the read that runs (a read is never cut
# short: under valgrind, one of MS = 20 s is most of the wait). The two slow
# clients wait at most SECONDS.
full_queue_answers_busy() {
    local a b
    server_start "${SERVER[@]}" -p 0 -w 1 -q 1 -s "$1"
    timeout --foreground "$2" "$FILE_CLIENT" -p "$PORT" -o /dev/null slow.bin &
    a=$!
    wait_stat busy 1
    timeout --foreground "$2" "$FILE_CLIENT" -p "$PORT" -o /dev/null slow.bin &
    b=$!
    wait_stat queued 1
    fetch f1.bin
    assert_failure 1
    assert_output --regexp "^f1.bin: ERR BUSY "
    [ "$(stat_of rejected)" -eq 1 ] || fail "expected STATS rejected 1, got $(stat_of rejected)"
    stop_within $((10 + $1 / 1000))
    wait "$a" "$b" 2>/dev/null || true
}

# idle_for_2s WHY: the server, with nothing to do, uses under a quarter of a
# CPU over 2 s (a busy loop takes about all of one); fail with WHY if not.
idle_for_2s() {
    local hz ticks t0
    hz=$(getconf CLK_TCK)
    t0=$(cpu_ticks "$SERVER_PID")
    sleep 2
    ticks=$(($(cpu_ticks "$SERVER_PID") - t0))
    [ $((ticks * 4)) -lt $((2 * hz)) ] ||
        fail "the idle server used $ticks CPU ticks ($hz per second) in 2 s: $1"
}
