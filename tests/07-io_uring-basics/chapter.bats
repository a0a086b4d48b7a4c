#!/usr/bin/env bats
# Chapter 07: io_uring basics. The programs of chapters/07-io_uring-basics/:
# uring-cat-raw, uring-cat, uring-cp, uring-probe, uring-demo, no-uring.
# Every test that needs io_uring starts with uring_require: where io_uring is
# refused it skips, with the reason.

bats_require_minimum_version 1.5.0
load ../helpers/common
load ../helpers/echo_suite # require_strace
load uring

setup_file() {
    uring_setup_file
}

# ---- uring-probe and no-uring --------------------------------------------------

@test "uring-probe names the sysctl, the features and the opcodes in words" {
    uring_require
    run "$(chapter_bin uring-probe)"
    assert_success
    assert_output --regexp "kernel.io_uring_disabled: (0|1|2|absent)"
    assert_output --partial "io_uring_setup():         works"
    assert_output --regexp "features \(io_uring_params.features = 0x[0-9a-f]+\)"
    assert_output --regexp "SINGLE_MMAP +5\.4 +(yes|no) +the SQ and CQ rings share one mmap"
    assert_output --regexp "multishot accept \(chapter 08\) +5\.19 +(yes|no)"
    assert_output --regexp "opcodes \([0-9]+ supported; the highest this kernel knows is [0-9]+\)"
    assert_output --regexp " 22 READ +5\.6 +yes"
}

@test "uring-probe --check says io_uring works here and exits 0" {
    uring_require
    run "$(chapter_bin uring-probe)" --check
    assert_success
    assert_output --regexp "^io_uring works here \(Linux .*, features 0x[0-9a-f]+\)$"
}

@test "under a seccomp filter (no-uring) uring-probe exits 77 and blames seccomp" {
    uring_require
    run "$(chapter_bin no-uring)" "$(chapter_bin uring-probe)"
    assert_failure 77
    assert_output --partial "seccomp of this process:  2"
    assert_output --partial "refused: EPERM: a seccomp filter forbids it"
    run "$(chapter_bin no-uring)" "$(chapter_bin uring-probe)" --check
    assert_failure 77
    assert_output --partial "io_uring is not usable here: io_uring_setup: EPERM"
}

@test "where io_uring is refused, every program says so and exits 1" {
    uring_require
    local p f="$BATS_TEST_TMPDIR/f"
    printf 'x\n' >"$f"
    for p in uring-cat-raw uring-cat uring-demo; do
        if [ "$p" = uring-demo ]; then
            run --separate-stderr "$(chapter_bin no-uring)" "$(chapter_bin $p)" -d "$BATS_TEST_TMPDIR"
        else
            run --separate-stderr "$(chapter_bin no-uring)" "$(chapter_bin $p)" "$f"
        fi
        [ "$status" -eq 1 ] || fail "$p under no-uring: expected exit 1, got $status"
        [[ "$stderr" == *"Operation not permitted (io_uring is not allowed here: run make doctor)"* ]] ||
            fail "$p under no-uring: expected the reason on stderr, got: $stderr"
    done
    run --separate-stderr "$(chapter_bin no-uring)" "$(chapter_bin uring-cp)" "$f" "$f.copy"
    assert_failure 1
    [[ "$stderr" == *"io_uring_queue_init(32): Operation not permitted (io_uring is not allowed here"* ]] ||
        fail "uring-cp under no-uring: expected the reason on stderr, got: $stderr"
}

# ---- uring-cat-raw and uring-cat ---------------------------------------------------

@test "uring-cat-raw and uring-cat copy files of 0, 1, 4096, 100001 and 1 MiB + 13 bytes" {
    uring_require
    local p size opts in
    for p in uring-cat-raw uring-cat; do
        for opts in "" "-q 4 -b 4096"; do # the second: more than DEPTH x BLOCK
            for size in "${COPY_SIZES[@]}"; do
                in="$BATS_TEST_TMPDIR/in$size"
                [ -f "$in" ] || payload "$in" "$size"
                # shellcheck disable=SC2086
                "$(chapter_bin $p)" $opts "$in" >"$in.$p" || fail "$p $opts: exit $? on $size bytes"
                same_file "$in" "$in.$p" "$p $opts, $size bytes"
            done
        done
    done
}

@test "uring-cat-raw (no liburing) and uring-cat (liburing) agree, file after file" {
    uring_require
    local a="$BATS_TEST_TMPDIR/a" b="$BATS_TEST_TMPDIR/b"
    payload "$a" 70000
    payload "$b" 3
    "$(chapter_bin uring-cat-raw)" -q 3 -b 1000 "$a" "$b" "$a" >"$BATS_TEST_TMPDIR/raw"
    "$(chapter_bin uring-cat)" "$a" "$b" "$a" >"$BATS_TEST_TMPDIR/lib"
    cat "$a" "$b" "$a" >"$BATS_TEST_TMPDIR/expected"
    same_file "$BATS_TEST_TMPDIR/expected" "$BATS_TEST_TMPDIR/raw" "uring-cat-raw a b a"
    same_file "$BATS_TEST_TMPDIR/raw" "$BATS_TEST_TMPDIR/lib" "uring-cat a b a against uring-cat-raw"
}

@test "uring-cat-raw -v: the rings, then one io_uring_enter per round of DEPTH reads" {
    uring_require
    local in="$BATS_TEST_TMPDIR/in"
    payload "$in" $((3 * 4 * 4096)) # 3 full rounds of 4 x 4 KiB, then one that finds the end
    run --separate-stderr "$(chapter_bin uring-cat-raw)" -v -q 4 -b 4096 "$in"
    assert_success
    [[ "$stderr" =~ io_uring_setup\(4\)\ =\ fd\ [0-9]+:\ 4\ SQ\ entries,\ 8\ CQ\ entries ]] ||
        fail "expected the io_uring_setup line, got: $stderr"
    local enters
    enters=$(grep -c 'io_uring_enter(fd=[0-9]*, to_submit=4, min_complete=4, IORING_ENTER_GETEVENTS) = 4$' <<<"$stderr")
    [ "$enters" -eq 4 ] || fail "expected 4 rounds of one io_uring_enter each, got $enters: $stderr"
}

@test "a directory is a CQE error (-EISDIR), a missing file an open() error: exit 1, the rest copied" {
    uring_require
    local p
    printf 'kept\n' >"$BATS_TEST_TMPDIR/there"
    for p in uring-cat-raw uring-cat; do
        run --separate-stderr "$(chapter_bin $p)" "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR/nofile" \
            "$BATS_TEST_TMPDIR/there"
        assert_failure 1
        assert_output "kept"
        [[ "$stderr" == *"read($BATS_TEST_TMPDIR, offset 0): Is a directory (cqe->res = -21)"* ]] ||
            fail "$p: expected the directory's cqe->res = -21 on stderr, got: $stderr"
        [[ "$stderr" == *"open($BATS_TEST_TMPDIR/nofile): No such file or directory"* ]] ||
            fail "$p: expected open(...): No such file or directory on stderr, got: $stderr"
    done
    run --separate-stderr bash -c "echo hi | '$(chapter_bin uring-cat)' /dev/stdin"
    assert_failure 1
    [[ "$stderr" == *"a pipe or socket has no offsets"* ]] || fail "expected a pipe to be refused: $stderr"
}

# ---- uring-cp ----------------------------------------------------------------------

@test "uring-cp copies 0, 1, 4096, 100001 and 1 MiB + 13 bytes at queue depth 1, 4 and 32" {
    uring_require
    # 1 MiB + 13 is more than 32 blocks of 16 KiB: slots are reused
    copies_exact "$(chapter_bin uring-cp)" "1 4 32" -b 16k
}

@test "uring-cp -l (linked), -f (registered buffers) and both copy byte for byte" {
    uring_require
    # -f registers 32 buffers of 64 KiB (2 MiB), and the ring takes up to 32 KiB more
    require_memlock $((32 * 64 + 64)) "uring-cp -f -b 64k"
    local opts in="$BATS_TEST_TMPDIR/in"
    payload "$in" $((3 * 1024 * 1024 + 5))
    for opts in "-l" "-f" "-l -f" "-l -f -q 1"; do
        # shellcheck disable=SC2086
        "$(chapter_bin uring-cp)" $opts -b 64k "$in" "$in.copy" || fail "uring-cp $opts: exit $?"
        same_file "$in" "$in.copy" "uring-cp $opts"
    done
}

@test "uring-cp finishes short reads and short writes where they stopped (uring-short)" {
    uring_require
    require_memlock $((32 * 16 + 64)) "uring-cp -f -b 16k"
    local opts in="$BATS_TEST_TMPDIR/in"
    payload "$in" $((1024 * 1024 + 13))
    for opts in "" "-f" "-q 1" "-l"; do # -l: only writes are shortened (see uring-short.c)
        # shellcheck disable=SC2046,SC2086
        env $(uring_short_env 30 30) "$(chapter_bin uring-cp)" $opts -b 16k "$in" "$in.copy" ||
            fail "uring-cp $opts under uring-short: exit $?"
        same_file "$in" "$in.copy" "uring-cp $opts with short reads and writes"
    done
    uring_short_injected short_reads short_writes
}

@test "uring-cp -l -d: a real short read at the end of the file breaks the link, the copy is exact" {
    uring_require
    direct_tail_breaks_link "$(chapter_bin uring-cp)"
}

@test "uring-cp -l: a linked pair needs two SQ slots, so the SQ fills and is submitted early" {
    uring_require
    linked_pairs_fill_sq "$(chapter_bin uring-cp)"
}

@test "strace: uring-cp's first io_uring_enter submits DEPTH reads at once" {
    uring_require
    local in="$BATS_TEST_TMPDIR/in" first
    require_strace
    payload "$in" $((1024 * 1024))
    strace_run -qq -e trace=io_uring_enter -o "$BATS_TEST_TMPDIR/trace" \
        "$(chapter_bin uring-cp)" -q 8 -b 16k "$in" "$in.copy"
    same_file "$in" "$in.copy" "uring-cp under strace"
    first="$(grep -m1 '^io_uring_enter(' "$BATS_TEST_TMPDIR/trace")"
    [[ "$first" =~ ^io_uring_enter\([0-9]+,\ 8,\ .*\)\ =\ 8$ ]] ||
        fail "expected the first io_uring_enter to submit 8 SQEs, got: $first"
}

@test "strace: uring-cp makes far fewer system calls than a read/write loop, and none on the data" {
    uring_require
    local in="$BATS_TEST_TMPDIR/in" loop uring enters reported
    require_strace
    head -c $((64 * 1024 * 1024)) /dev/urandom >"$in"
    strace_run -qq -y -o "$BATS_TEST_TMPDIR/loop" "$BUILD/chapters/01-blocking/blocking-cat" "$in" \
        >"$in.loop" || fail "blocking-cat (chapter 01) failed: build it with make"
    strace_run -qq -y -o "$BATS_TEST_TMPDIR/uring" "$(chapter_bin uring-cp)" -v -b 64k "$in" \
        "$in.uring" 2>"$BATS_TEST_TMPDIR/stats"
    same_file "$in" "$in.uring" "uring-cp under strace"
    loop=$(trace_calls "$BATS_TEST_TMPDIR/loop" | wc -l)
    uring=$(trace_calls "$BATS_TEST_TMPDIR/uring" | wc -l)
    enters=$(trace_calls "$BATS_TEST_TMPDIR/uring" | grep -c '^io_uring_enter$' || true)
    echo "# 64 MiB: read/write loop $loop system calls, uring-cp $uring ($enters io_uring_enter)" >&3
    [ "$enters" -gt 0 ] || fail "no io_uring_enter in uring-cp's trace"
    [ "$((uring * 4))" -lt "$loop" ] ||
        fail "expected uring-cp to make under a quarter of the loop's $loop system calls, got $uring"
    # the data moved inside io_uring_enter: no read() or write() on either file
    ! grep -E "^(read|write|pread64|pwrite64)\([0-9]+<$in(.uring)?>" "$BATS_TEST_TMPDIR/uring" ||
        fail "uring-cp called read()/write() on the files"
    [ "$(grep -cE "^read\([0-9]+<$in>" "$BATS_TEST_TMPDIR/loop")" -ge 1024 ] ||
        fail "expected the loop to read() the file at least 1024 times"
    # and uring-cp counts its own calls right
    reported=$(sed -n 's/.* in \([0-9]*\) io_uring_enter() calls.*/\1/p' "$BATS_TEST_TMPDIR/stats")
    [ "$reported" = "$enters" ] || fail "uring-cp -v says $reported io_uring_enter calls, strace saw $enters"
}

@test "uring-cp names what failed: missing SRC, a directory, the same file, a write error" {
    uring_require
    local f="$BATS_TEST_TMPDIR/f"
    payload "$f" 5000
    run --separate-stderr "$(chapter_bin uring-cp)" "$BATS_TEST_TMPDIR/nofile" "$f.copy"
    assert_failure 1
    [[ "$stderr" == *"open($BATS_TEST_TMPDIR/nofile): No such file or directory"* ]] || fail "got: $stderr"
    run --separate-stderr "$(chapter_bin uring-cp)" "$BATS_TEST_TMPDIR" "$f.copy"
    assert_failure 1
    [[ "$stderr" == *"$BATS_TEST_TMPDIR: not a regular file"* ]] || fail "got: $stderr"
    run --separate-stderr "$(chapter_bin uring-cp)" "$f" "$f"
    assert_failure 1
    [[ "$stderr" == *"are the same file"* ]] || fail "got: $stderr"
    cmp -s "$f" <(head -c 5000 "$f") && [ "$(stat -c %s "$f")" -eq 5000 ] || fail "the source was damaged"
    run --separate-stderr "$(chapter_bin uring-cp)" -q 4 "$f" /dev/full
    assert_failure 1
    [[ "$stderr" == *"write(/dev/full, offset 0): No space left on device (cqe->res = -28)"* ]] ||
        fail "expected the write's cqe->res = -28 on stderr, got: $stderr"
}

# ---- uring-demo ----------------------------------------------------------------------

@test "uring-demo: errors as cqe->res, short reads, a broken link, a chain cut by submission, a full SQ" {
    uring_require
    run timeout 30 "$(chapter_bin uring-demo)" -d "$BATS_TEST_TMPDIR"
    assert_success
    assert_output --regexp "1: -21 \(EISDIR\)"
    assert_output --regexp "2: -9 \(EBADF\)"
    assert_output --partial "READ 4096 at offset 8192 = 1808 (short: only 1808 bytes are left)"
    assert_output --partial "READ 4096 at offset 10000 = 0: the end of the file"
    assert_output --partial "READ 4096 at offset 8192 = 1808, then the linked WRITE = -125 (ECANCELED)"
    assert_output --partial "the WRITE submitted after it = 4096: it ran"
    assert_output --partial "io_uring_get_sqe() gave 4 SQEs, then NULL"
    assert_output --partial "every step behaved as described"
}

# ---- arguments -------------------------------------------------------------------------

@test "every program: bad arguments print usage on stderr and exit 2; -h exits 0" {
    local args
    usage_contract uring-cat-raw uring-cat uring-cp uring-probe uring-demo
    for args in "-q 0 a b" "-b 0 a b" "-b 12x a b" "-d -b 1000 a b" "a" "-q"; do
        # shellcheck disable=SC2086
        run "$(chapter_bin uring-cp)" $args
        [ "$status" -eq 2 ] || fail "uring-cp $args: expected exit 2, got $status: $output"
    done
    run "$(chapter_bin uring-cat)"
    assert_failure 2
    run "$(chapter_bin no-uring)"
    assert_failure 2
    run "$(chapter_bin no-uring)" -e
    assert_failure 2
    run "$(chapter_bin no-uring)" -e ENOSYS
    assert_failure 2
}
