#!/usr/bin/env bats
# Exercise 01-blocking/cat-loop: cat_copy() of blocking-cat, the read loop.
# Runs against $IMPL (solutions: the chapter's own code; `make ex` uses the
# learner's copy of blocking-cat.c).

bats_require_minimum_version 1.5.0
load ../helpers/common

setup() {
    CAT="$(impl_bin cat-loop blocking-cat)"
}

@test "cat-loop: files come out byte for byte, in order (empty, 3 bytes, 5 MiB binary)" {
    local d="$BATS_TEST_TMPDIR"
    : >"$d/empty"
    printf 'abc' >"$d/three"
    payload "$d/big" $((5 * 1024 * 1024))
    run -0 --separate-stderr bash -c '"$1" "$2/three" "$2/empty" "$2/big" "$2/three" >"$2/out"' _ "$CAT" "$d"
    cat "$d/three" "$d/empty" "$d/big" "$d/three" >"$d/want"
    cmp -s "$d/want" "$d/out" ||
        fail "expected $(stat -c %s "$d/want") bytes, got $(stat -c %s "$d/out"); $(cmp "$d/want" "$d/out" 2>&1 | head -n 1)"
    [ -z "$stderr" ] || fail "unexpected stderr: $stderr"
}

@test "cat-loop: a failed write ends the program at once: one message, exit 1 (/dev/full)" {
    local d="$BATS_TEST_TMPDIR"
    [ -w /dev/full ] || skip "/dev/full is not writable here"
    printf 'one\n' >"$d/a"
    printf 'two\n' >"$d/b"
    run -1 --separate-stderr bash -c 'timeout 10 "$1" "$2/a" "$2/b" >/dev/full' _ "$CAT" "$d"
    [ "$stderr" = "blocking-cat: write(stdout): No space left on device" ] ||
        fail "expected exactly one line 'blocking-cat: write(stdout): No space left on device' on stderr, got: '$stderr'"
}

@test "cat-loop: a read error is reported, the next file is still copied, exit 1 (a directory)" {
    local d="$BATS_TEST_TMPDIR"
    mkdir "$d/dir"
    printf 'one\n' >"$d/a"
    printf 'two\n' >"$d/b"
    # open() of a directory succeeds; read() fails with EISDIR
    run -1 --separate-stderr timeout 10 "$CAT" "$d/a" "$d/dir" "$d/b"
    [ "$output" = "one
two" ] || fail "expected 'one' and 'two' on stdout, got: '$output'"
    [ "$stderr" = "blocking-cat: read($d/dir): Is a directory" ] ||
        fail "expected 'blocking-cat: read($d/dir): Is a directory' on stderr, got: '$stderr'"
}

@test "cat-loop: 1 MiB comes through intact while reads and writes are short and interrupted (EINTR)" {
    local d="$BATS_TEST_TMPDIR"
    payload "$d/in" $((1024 * 1024))
    # FAULTS_FDS=all: the input is a regular file and the output one too;
    # short writes come back from write() to stdout, which net_write_all() finishes.
    run --separate-stderr bash -c 'env $3 timeout 30 "$1" - <"$2/in" >"$2/out"' _ "$CAT" "$d" \
        "$(faults_env FAULTS_FDS=all FAULTS_SHORT_READ=50 FAULTS_SHORT_WRITE=50 FAULTS_EINTR=30)"
    [ "$status" -eq 0 ] || fail "expected exit status 0, got $status; stderr: $stderr"
    [ -z "$stderr" ] || fail "an EINTR or a short read was reported as an error: $stderr"
    cmp -s "$d/in" "$d/out" ||
        fail "sent $(stat -c %s "$d/in") bytes, got $(stat -c %s "$d/out"); $(cmp "$d/in" "$d/out" 2>&1 | head -n 1)"
    faults_injected eintr short_reads short_writes
}

@test "cat-loop: a file that cannot be opened is reported, the others are copied, exit 1" {
    local d="$BATS_TEST_TMPDIR"
    printf 'one\n' >"$d/a"
    printf 'two\n' >"$d/b"
    run -1 --separate-stderr timeout 10 "$CAT" "$d/a" "$d/missing" "$d/b"
    [ "$output" = "one
two" ] || fail "expected 'one' and 'two' on stdout, got: '$output'"
    [[ "$stderr" == *"open($d/missing): No such file or directory"* ]] || fail "stderr: $stderr"
}

@test "cat-loop: a pipe that delivers in pieces is copied to its end (a short read is not EOF)" {
    run -0 --separate-stderr bash -c '{ printf "first line\n"; sleep 0.3; printf "second line\n"; sleep 0.3; printf "third"; } | timeout 10 "$1" -' _ "$CAT"
    [ "$output" = "first line
second line
third" ] || fail "expected three lines from the pipe, got: '$output'"
}
