# SPDX-License-Identifier: MIT
# tests/07-io_uring-basics/uring.bash: what the chapter's test files share.
#
#   uring_setup_file     in setup_file(): is io_uring usable here? Sets URING_SKIP.
#   uring_require        in setup() or a test: skip, with the reason, if it is not
#   uring_short_env P Q  env(1) arguments preloading uring-short.so: P percent
#                        of reads and Q percent of writes made short
#   uring_short_count NAME   short_reads or short_writes done, from its log
#   same_file A B WHAT   fail unless A and B are byte for byte the same
#   strace_run ARGS...   strace, with LeakSanitizer off (it cannot run under ptrace)
#   trace_calls FILE     the system calls in an strace -o FILE log, one a line

URING_CH="$BUILD/chapters/07-io_uring-basics"

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

uring_short_env() {
    local shim="$URING_CH/uring-short.so"
    require_bin "$shim" chapters/07-io_uring-basics
    echo "LD_PRELOAD=$shim URING_SHORT_READ=$1 URING_SHORT_WRITE=$2 URING_SHORT_LOG=$BATS_TEST_TMPDIR/short.log ASAN_OPTIONS=verify_asan_link_order=0:${ASAN_OPTIONS:-}"
}

uring_short_count() {
    local total=0 n
    [ -f "$BATS_TEST_TMPDIR/short.log" ] || { echo 0; return; }
    for n in $(grep -o "$1=[0-9]*" "$BATS_TEST_TMPDIR/short.log" | cut -d= -f2); do
        total=$((total + n))
    done
    echo "$total"
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
