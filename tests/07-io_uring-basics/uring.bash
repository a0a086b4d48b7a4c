# SPDX-License-Identifier: MIT
# tests/07-io_uring-basics/uring.bash: what the chapter's test files share.
#
#   uring_setup_file     in setup_file(): is io_uring usable here? Sets URING_SKIP.
#   uring_require        in setup() or a test: skip, with the reason, if it is not
#   uring_short_so       the path of uring-short.so (compiled here if `make ex`
#                        built only the exercise)
#   uring_short_env P Q [VAR=VALUE...]  env(1) arguments preloading uring-short.so:
#                        P percent of reads and Q percent of writes made short,
#                        and its other settings (URING_SHORT_EOF=N...)
#   uring_short_count NAME   short_reads, short_writes, eof_reads or links_cut
#                        done, from its log
#   uring_short_injected NAME...  fail unless uring-short did some of each NAME
#   uring_short_once BYTES   fail unless the reads and the writes uring-short
#                        saw asked for BYTES each (the copies' sizes added up):
#                        every byte read once and written once
#   uring_exercise_setup EX  in setup(): uring_require, and CP: EX's uring-cp from $IMPL
#   COPY_SIZES           the file sizes every copy test tries
#   copies_exact CP "Q..." [ARGS...]  CP -q Q ARGS copies files of every
#                        COPY_SIZES byte for byte, at every queue depth Q
#   linked_pairs_fill_sq CP  CP -l -q 8: a pair takes two SQ slots, so the SQ
#                        fills and is submitted early; the copy is exact
#   direct_tail_breaks_link CP  CP -l -d on a file whose last block is short:
#                        the short read breaks that block's link, the copy is exact
#   same_file A B WHAT   fail unless A and B are byte for byte the same
#   strace_run ARGS...   strace, with LeakSanitizer off (it cannot run under ptrace)
#   trace_calls FILE     the system calls in an strace -o FILE log, one a line

# shellcheck disable=SC2154 # output, status and stderr are set by bats' run

URING_CH="$BUILD/chapters/07-io_uring-basics"

# The file sizes every copy test tries: empty, one byte, one page, a size no
# block divides, and more than 32 blocks of 16 KiB.
COPY_SIZES=(0 1 4096 100001 $((1024 * 1024 + 13)))

# io_uring_setup() fails with EPERM under Docker's default seccomp profile or
# the kernel.io_uring_disabled sysctl, and with ENOSYS before Linux 5.1. Then
# every io_uring test skips, with the probe's words for why.
uring_setup_file() {
    local probe="$URING_CH/uring-probe" out status=0
    if [ ! -x "$probe" ]; then
        # `make ex` builds the exercise only: compile the doctor's probe instead.
        probe="$BATS_FILE_TMPDIR/uring-allowed"
        gcc -std=c11 -D_GNU_SOURCE -O1 -o "$probe" "$TOP/common/mk/uring-allowed.c" 2>/dev/null ||
            probe=""
    fi
    URING_SKIP=""
    if [ -n "$probe" ]; then
        out="$("$probe" --check 2>&1)" || status=$?
        if [ "$status" -eq 77 ]; then
            [[ "$out" == "io_uring is not usable here"* ]] || out="io_uring is not usable here: $out"
            URING_SKIP="$out (see: make doctor)"
        fi
    fi
    export URING_SKIP
}

uring_require() {
    [ -z "${URING_SKIP:-}" ] || skip "$URING_SKIP"
}

# `make ex` builds the exercise alone: then the library is compiled here, as
# the chapter's Makefile would (without sanitizers: a preloaded library must
# not bring a second copy of their runtime).
uring_short_so() {
    local shim="$URING_CH/uring-short.so"
    if [ ! -f "$shim" ]; then
        shim="$BATS_FILE_TMPDIR/uring-short.so"
        [ -f "$shim" ] || gcc -std=c11 -D_GNU_SOURCE -O1 -fPIC -shared -o "$shim" \
            "$TOP/chapters/07-io_uring-basics/uring-short.c" -ldl -luring ||
            fail "could not compile chapters/07-io_uring-basics/uring-short.c"
    fi
    echo "$shim"
}

uring_short_env() {
    local shim read="$1" write="$2"
    shim="$(uring_short_so)"
    shift 2
    echo "LD_PRELOAD=$shim URING_SHORT_READ=$read URING_SHORT_WRITE=$write URING_SHORT_LOG=$BATS_TEST_TMPDIR/short.log ASAN_OPTIONS=verify_asan_link_order=0:${ASAN_OPTIONS:-} $*"
}

uring_short_count() {
    log_total "$BATS_TEST_TMPDIR/short.log" "$1"
}

uring_short_injected() {
    counted_positive uring_short_count "uring-short" "$@"
}

# The reads and writes of a cached file move every byte they ask for, once
# uring-short has lowered their length: so a copy that reads and writes each
# byte once asks for the file's size in each. A rest asked from the block's
# start, or a block read again whole, asks for more.
uring_short_once() {
    local want="$1" read write
    read=$(uring_short_count read_bytes) write=$(uring_short_count write_bytes)
    [ "$read" -eq "$want" ] && [ "$write" -eq "$want" ] ||
        fail "expected every byte read once and written once ($want bytes each), got reads asking for $read and writes for $write"
}

uring_exercise_setup() {
    uring_require
    # shellcheck disable=SC2034 # the exercise's tests run it
    CP="$(impl_bin "$1" uring-cp)"
}

copies_exact() {
    local cp="$1" depths="$2" size q in
    shift 2
    for size in "${COPY_SIZES[@]}"; do
        in="$BATS_TEST_TMPDIR/in$size"
        payload "$in" "$size"
        for q in $depths; do
            "$cp" -q "$q" "$@" "$in" "$in.q$q" || fail "uring-cp -q $q $*: exit $? on $size bytes"
            same_file "$in" "$in.q$q" "uring-cp -q $q $*, $size bytes"
        done
    done
}

linked_pairs_fill_sq() {
    local in="$BATS_TEST_TMPDIR/in"
    payload "$in" $((1024 * 1024))
    run --separate-stderr "$1" -v -l -q 8 -b 16k "$in" "$in.copy"
    assert_success
    same_file "$in" "$in.copy" "uring-cp -l -q 8"
    [[ "$stderr" =~ SQ\ full\ ([0-9]+) ]] || fail "no SQ full count in: $stderr"
    [ "${BASH_REMATCH[1]}" -gt 0 ] || fail "expected the SQ to fill at least once, got: $stderr"
}

direct_tail_breaks_link() {
    local in="$BATS_TEST_TMPDIR/in"
    payload "$in" 100001 # not a multiple of 4096: O_DIRECT asks for the whole last sector
    run --separate-stderr "$1" -v -l -d -b 8k "$in" "$in.copy"
    if [ "$status" -ne 0 ] && [[ "$stderr" == *"O_DIRECT): Invalid argument"* ]]; then
        skip "this filesystem ($(stat -f -c %T "$BATS_TEST_TMPDIR")) does not support O_DIRECT"
    fi
    assert_success
    same_file "$in" "$in.copy" "uring-cp -l -d"
    [[ "$stderr" == *"links broken 1,"* ]] ||
        fail "expected the last block's link to break (links broken 1), got: $stderr"
}

same_file() {
    cmp -s "$1" "$2" && return 0
    fail "$3: $(basename "$2") differs from $(basename "$1"): expected $(stat -c %s "$1") bytes, got $(stat -c %s "$2" 2>/dev/null || echo none); $(cmp "$1" "$2" 2>&1 | head -n 1)"
}

# A sanitized build's LeakSanitizer stops the program with a fatal error
# under ptrace; the leak check is done by the tests that run without strace.
strace_run() {
    ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" strace "$@"
}

# One line per system call; strace -qq writes "name(args) = result" lines.
trace_calls() {
    sed -n 's/^\([a-z_0-9]*\)(.*/\1/p' "$1"
}
