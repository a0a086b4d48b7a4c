#!/usr/bin/env bats
# Tests of the faults shim (common/faults/libfaults.so), the LD_PRELOAD library
# other tests use to prove that servers survive short reads and writes, EINTR
# and EAGAIN.
#
# Every test that expects a fault reads FAULTS_LOG, where each process writes
# its counts at exit: a test that passed while no fault was injected would
# prove nothing. The program under the shim is common/tests/test-faults, which
# pushes 1 MiB through a socketpair with plain write()/read() loops, checks
# every byte and prints what it saw; system tools (cat) show what the shim
# leaves alone.
#
#   make -C common && bats tests/common/faults.bats
#   make -C common SAN=address,undefined &&
#       BUILD=$PWD/build/san-address-undefined bats tests/common/faults.bats

bats_require_minimum_version 1.5.0 # run --separate-stderr

load ../helpers/common

setup() {
    PROG="$BUILD/common/tests/test-faults"
    require_bin "$PROG" common
    require_bin "$FAULTS_SHIM" common
    LOG="$BATS_TEST_TMPDIR/faults.log" # where faults_env points FAULTS_LOG
}

# shimmed VAR=VALUE... -- CMD...: run CMD (timeout 60 s) with the shim preloaded.
shimmed() {
    local settings=()
    while [ "$1" != -- ]; do
        settings+=("$1")
        shift
    done
    shift
    # shellcheck disable=SC2046 # faults_env prints words for env(1)
    run --separate-stderr timeout 60 env $(faults_env "${settings[@]}") "$@"
}

# seen NAME: a count from test-faults' own line (bytes=N writes=N short_writes=N ...).
seen() {
    sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$output"
}

assert_ran_clean() {
    if [ "$status" -ne 0 ]; then
        fail "$(printf 'exit status %d, expected 0\n--- stdout\n%s\n--- stderr\n%s\n--- faults log\n%s' \
            "$status" "$output" "$stderr" "$(cat "$LOG" 2>/dev/null)")"
    fi
    assert_output --partial "bytes=1048576 "
}

# assert_count WHAT OP N: e.g. assert_count "short writes in the log" -gt 0 "$n".
assert_count() {
    local what=$1 op=$2 want=$3 got=$4
    [ -n "$got" ] || fail "$what: no count found (output: $output)"
    test "$got" "$op" "$want" || fail "$what: expected $op $want, got $got"
}

@test "without the shim a socketpair never writes short: the control run" {
    run --separate-stderr timeout 60 "$PROG"
    assert_ran_clean
    assert_output --partial "short_writes=0 "
    assert_output --partial "short_reads=0 "
    assert_output --partial "eintr=0 eagain=0"
}

@test "FAULTS_SHORT_WRITE=50 makes writes short, and a write loop still delivers every byte" {
    shimmed FAULTS_SHORT_WRITE=50 -- "$PROG"
    assert_ran_clean
    assert_count "short writes in the log" -gt 0 "$(faults_count short_writes)"
    assert_count "short writes seen by the program" -gt 0 "$(seen short_writes)"
    # Each cut is the shim's (the control run has none), and the program saw each one.
    assert_count "short writes seen, against the log" -eq "$(faults_count short_writes)" \
        "$(seen short_writes)"
    assert_count "short reads in the log (none asked for)" -eq 0 "$(faults_count short_reads)"
}

@test "every wrapped call can come back short: write, send, sendto, writev, sendmsg and their reads" {
    shimmed FAULTS_SHORT_WRITE=50 FAULTS_SHORT_READ=50 -- "$PROG" -a
    assert_ran_clean
    assert_count "short writes" -gt 0 "$(seen short_writes)"
    assert_count "short reads" -gt 0 "$(seen short_reads)"
    assert_count "short writes seen, against the log" -eq "$(faults_count short_writes)" \
        "$(seen short_writes)"
    assert_count "short reads seen, against the log" -eq "$(faults_count short_reads)" \
        "$(seen short_reads)"
}

@test "FAULTS_EINTR=30 interrupts calls, and retrying on EINTR survives it" {
    shimmed FAULTS_EINTR=30 -- "$PROG"
    assert_ran_clean
    assert_count "EINTR in the log" -gt 0 "$(faults_count eintr)"
    assert_count "EINTR seen, against the log" -eq "$(faults_count eintr)" "$(seen eintr)"
}

@test "FAULTS_EAGAIN is never injected on a blocking socket, only non-blocking or with MSG_DONTWAIT" {
    # test-faults itself fails on an EAGAIN from a blocking call.
    shimmed FAULTS_EAGAIN=100 -- "$PROG"
    assert_ran_clean
    assert_count "EAGAIN on blocking sockets, in the log" -eq 0 "$(faults_count eagain)"
    assert_count "EAGAIN on blocking sockets, seen" -eq 0 "$(seen eagain)"

    rm -f "$LOG"
    shimmed FAULTS_EAGAIN=30 -- "$PROG" -n
    assert_ran_clean
    assert_count "EAGAIN on non-blocking sockets, in the log" -gt 0 "$(faults_count eagain)"
    assert_count "EAGAIN seen, against the log" -eq "$(faults_count eagain)" "$(seen eagain)"

    rm -f "$LOG"
    shimmed FAULTS_EAGAIN=100 -- "$PROG" -a -d
    assert_ran_clean
    assert_count "EAGAIN with MSG_DONTWAIT, in the log" -gt 0 "$(faults_count eagain)"
}

@test "by default the shim leaves files and pipes alone: cat copies exactly under 100% faults" {
    payload "$BATS_TEST_TMPDIR/in" 3000000
    # Through a pipe, both cats really call read() and write(): cat from one
    # regular file to another would use copy_file_range(2) and prove nothing.
    shimmed FAULTS_SHORT_WRITE=100 FAULTS_SHORT_READ=100 FAULTS_EINTR=50 FAULTS_EAGAIN=100 -- \
        sh -c 'cat "$1" | cat >"$2"' sh "$BATS_TEST_TMPDIR/in" "$BATS_TEST_TMPDIR/out"
    assert_success
    cmp "$BATS_TEST_TMPDIR/in" "$BATS_TEST_TMPDIR/out"
    assert_count "calls the shim saw" -gt 0 "$(faults_count calls)"
    local kind
    for kind in short_reads short_writes eintr eagain; do
        assert_count "$kind on files and pipes" -eq 0 "$(faults_count "$kind")"
    done

    # And the plain form, stdout redirected to a file.
    # shellcheck disable=SC2046
    timeout 60 env $(faults_env FAULTS_SHORT_WRITE=100 FAULTS_EINTR=50) \
        cat "$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out2"
    cmp "$BATS_TEST_TMPDIR/in" "$BATS_TEST_TMPDIR/out2"
}

@test "with FAULTS_FDS=all cat gets short reads from a file and a pipe, and loops to copy exactly" {
    payload "$BATS_TEST_TMPDIR/in" 3000000
    shimmed FAULTS_FDS=all FAULTS_SHORT_READ=100 -- \
        sh -c 'cat "$1" | cat >"$2"' sh "$BATS_TEST_TMPDIR/in" "$BATS_TEST_TMPDIR/out"
    assert_success
    cmp "$BATS_TEST_TMPDIR/in" "$BATS_TEST_TMPDIR/out"
    assert_count "short reads in the log" -gt 0 "$(faults_count short_reads)"
    assert_count "short writes in the log (none asked for)" -eq 0 "$(faults_count short_writes)"
}

@test "the same FAULTS_SEED injects the same faults, another seed others" {
    local settings=(FAULTS_SEED=7 FAULTS_SHORT_WRITE=40 FAULTS_SHORT_READ=40 FAULTS_EINTR=20
        FAULTS_EAGAIN=20)
    shimmed "${settings[@]}" -- "$PROG" -n -a
    assert_ran_clean
    local first="$output" first_log
    first_log="$(sed 's/^pid=[0-9]* //' "$LOG")"

    rm -f "$LOG"
    shimmed "${settings[@]}" -- "$PROG" -n -a
    assert_ran_clean
    assert_equal "$output" "$first"
    assert_equal "$(sed 's/^pid=[0-9]* //' "$LOG")" "$first_log"

    shimmed "${settings[@]}" FAULTS_SEED=8 -- "$PROG" -n -a
    assert_ran_clean
    [ "$output" != "$first" ] || fail "seeds 7 and 8 gave the same run: $output"
}

@test "even at 100% the shim only does what a kernel may: whole datagrams, MSG_WAITALL, eventfd" {
    shimmed FAULTS_FDS=all FAULTS_SHORT_READ=100 FAULTS_SHORT_WRITE=100 FAULTS_EAGAIN=100 -- \
        "$PROG" -r
    [ "$status" -eq 0 ] || fail "$(printf 'status %d\n%s' "$status" "$stderr")"
    assert_output "rules: ok"
    assert_count "short writes in the log (the shim was active)" -gt 0 \
        "$(faults_count short_writes)"
}

@test "an ASan+UBSan program runs under the shim with ASAN_OPTIONS=verify_asan_link_order=0" {
    local san="$TOP/build/san-address-undefined/common/tests/test-faults"
    [ -x "$san" ] || skip "no sanitized build: make -C common SAN=address,undefined"

    # GCC links the ASan runtime as a shared library that wants to come first;
    # a preloaded shim comes before it, so ASan refuses to start...
    if ldd "$san" | grep -q libasan; then
        run --separate-stderr timeout 60 env LD_PRELOAD="$FAULTS_SHIM" ASAN_OPTIONS= "$san"
        assert_failure
        [[ "$stderr" == *"ASan runtime does not come first"* ]] ||
            fail "expected ASan's link-order complaint, got: $stderr"
    fi

    # ...unless told not to check (faults_env does).
    shimmed FAULTS_SHORT_WRITE=50 FAULTS_EINTR=20 -- "$san"
    assert_ran_clean
    assert_count "short writes in the log" -gt 0 "$(faults_count short_writes)"
    assert_count "short writes seen, against the log" -eq "$(faults_count short_writes)" \
        "$(seen short_writes)"
}

# ---- FAULTS_SPURIOUS_WAKEUP: condition waits that end without a signal --------
# build/common/faults/cond-check hands a flag from one thread to another
# through a condition variable, the waiter testing it with `while` (-m while)
# or once with `if` (-m if); it exits 1 when the waiter went on without it.

@test "without the shim a condition wait in an if passes: the control run" {
    local prog="$BUILD/common/faults/cond-check"
    require_bin "$prog" common
    run --separate-stderr timeout 60 "$prog" -m if -n 200
    [ "$status" -eq 0 ] || fail "expected exit 0 without the shim, got $status: $output $stderr"
}

@test "FAULTS_SPURIOUS_WAKEUP=50 catches a condition wait in an if, and a while survives it" {
    local prog="$BUILD/common/faults/cond-check" t
    require_bin "$prog" common
    for t in "" -t; do
        rm -f "$LOG"
        shimmed FAULTS_SPURIOUS_WAKEUP=50 -- "$prog" -m if -n 200 $t
        [ "$status" -eq 1 ] ||
            fail "cond-check -m if $t: expected exit 1 (caught), got $status: $output $stderr"
        assert_output --partial "the \`if\` went on"
        assert_count "spurious wake-ups in the log (-m if $t)" -gt 0 "$(faults_count spurious)"

        rm -f "$LOG"
        shimmed FAULTS_SPURIOUS_WAKEUP=50 -- "$prog" -m while -n 200 $t
        [ "$status" -eq 0 ] ||
            fail "cond-check -m while $t: expected exit 0, got $status: $output $stderr"
        assert_count "spurious wake-ups in the log (-m while $t)" -gt 0 "$(faults_count spurious)"
        # each of 200 rounds waits at least once on each side
        assert_count "condition waits in the log (-m while $t)" -ge 400 "$(faults_count cond_waits)"
    done
}

# A lost wake-up: a condition changed and signalled without the mutex while
# the waiter, having tested it, is not yet asleep. FAULTS_LATE_WAIT holds
# every waiter in that moment (its mutex held), so the mistake loses the
# first hand-off every time, and a producer that takes the mutex is never
# hurt: it waits until the waiter sleeps.
@test "FAULTS_LATE_WAIT makes a condition set without the mutex lose its wake-up, every time, and hurts no one who takes it" {
    local prog="$BUILD/common/faults/cond-check" mark="$BATS_TEST_TMPDIR/mark"
    require_bin "$prog" common
    rm -f "$LOG"
    shimmed FAULTS_LATE_WAIT=300 -- timeout 20 "$prog" -u -n 20
    [ "$status" -eq 1 ] || fail "cond-check -u: expected exit 1 (a wake-up lost), got $status: $output $stderr"
    assert_output --partial "its wake-up lost"

    rm -f "$LOG"
    shimmed FAULTS_LATE_WAIT=20 FAULTS_LATE_WAIT_MARK="$mark" -- timeout 20 "$prog" -n 20
    [ "$status" -eq 0 ] || fail "cond-check with the mutex: expected exit 0, got $status: $output $stderr"
    assert_count "late waits in the log" -gt 0 "$(faults_count late_waits)"
    assert_count "bytes in FAULTS_LATE_WAIT_MARK" -eq "$(faults_count late_waits)" "$(stat -c %s "$mark")"
}

@test "FAULTS_LATE_WAIT that is not a number of ms is refused with a message and ignored" {
    local prog="$BUILD/common/faults/cond-check"
    require_bin "$prog" common
    shimmed FAULTS_LATE_WAIT=-5 -- "$prog" -n 5
    [ "$status" -eq 0 ] || fail "expected exit 0, got $status: $stderr"
    [[ "$stderr" == *"FAULTS_LATE_WAIT=-5 is not a number of ms (0-10000); ignored"* ]] || fail "expected the refusal on stderr, got: $stderr"
    assert_count "late waits in the log" -eq 0 "$(faults_count late_waits)"
}

@test "FAULTS_SPURIOUS_WAKEUP=100 never lets a wait sleep, and a while loop still hands every flag over" {
    local prog="$BUILD/common/faults/cond-check"
    require_bin "$prog" common
    shimmed FAULTS_SPURIOUS_WAKEUP=100 -- "$prog" -m while -n 100
    [ "$status" -eq 0 ] || fail "expected exit 0, got $status: $output $stderr"
    assert_count "spurious wake-ups against waits" -eq "$(faults_count cond_waits)" \
        "$(faults_count spurious)"
}

@test "under ThreadSanitizer the shim's spurious wake-ups hold the mutex as a real wait does" {
    local san="$TOP/build/san-thread/common/faults/cond-check"
    [ -x "$san" ] || skip "no ThreadSanitizer build: make -C common SAN=thread"
    # The shim calls TSan's own pthread_cond_wait (dlsym finds it first), so
    # TSan follows the mutex through every wait; a report would fail the run.
    shimmed FAULTS_SPURIOUS_WAKEUP=50 TSAN_OPTIONS=halt_on_error=1:exitcode=66 -- "$san" -m while -n 300
    [ "$status" -eq 0 ] || fail "expected exit 0 and no report, got $status: $stderr"
    [[ "$stderr" != *"ThreadSanitizer"* ]] || fail "ThreadSanitizer reported: $stderr"
    assert_count "spurious wake-ups in the log" -gt 0 "$(faults_count spurious)"
}
