#!/usr/bin/env bats
# Chapter 00: `latency` measures this machine's time scales.
#
# The program runs twice in quick mode (once as a table, once as CSV) in
# setup_file; the tests read those outputs. Timing comparisons are only the
# ones that hold by a wide margin on a loaded 2-core VM: an L1 hit against a
# loopback round trip, never two figures of the same order of magnitude.

bats_require_minimum_version 1.5.0
load ../helpers/common

setup_file() {
    local bin="$BUILD/chapters/00-latency/latency"
    [ -x "$bin" ] || return 0 # each test reports the missing binary itself
    OUT="$BATS_FILE_TMPDIR"
    mkdir -p "$OUT/files"
    timeout 60 "$bin" -q -d "$OUT/files" >"$OUT/text" 2>"$OUT/text.err" 3>&-
    echo $? >"$OUT/text.status"
    timeout 60 "$bin" -q --csv -d "$OUT/files" >"$OUT/csv" 2>"$OUT/csv.err" 3>&-
    echo $? >"$OUT/csv.status"
}

setup() {
    LATENCY="$(chapter_bin latency)"
    OUT="$BATS_FILE_TMPDIR"
}

# csv_value NAME: the value field of row NAME in the CSV output.
csv_value() {
    awk -F, -v k="$1" '$1 == k { print $2 }' "$OUT/csv"
}

# assert_faster A B: figure A is below figure B (CSV names), with both shown on failure.
assert_faster() {
    local a b
    a="$(csv_value "$1")"
    b="$(csv_value "$2")"
    if ! awk -v a="$a" -v b="$b" 'BEGIN { exit !(a + 0 > 0 && a + 0 < b + 0) }'; then
        fail "expected $1 < $2, got $1 = ${a:-missing} ns, $2 = ${b:-missing} ns
--- csv ---
$(cat "$OUT/csv")"
    fi
}

@test "quick mode exits 0 and names the machine: CPU count and kernel" {
    status="$(cat "$OUT/text.status")"
    [ "$status" -eq 0 ] || fail "expected exit 0, got $status
--- stderr ---
$(cat "$OUT/text.err")"
    run head -n 1 "$OUT/text"
    assert_output --partial "machine  "
    assert_output --partial "$(nproc) CPUs"
    assert_output --partial "$(uname -r)"
}

@test "the table has every row" {
    local row
    for row in "clock_gettime" "L1 hit" "RAM access (chase in 64 MiB, 4 KiB pages)" \
        "RAM access (chase in 64 MiB, 2 MiB pages)" "syscall (getppid)" "page-cache read" \
        "thread switch" "loopback TCP round trip" "thread create + join" "uncached read" \
        "default thread stack" "idle threads: address space" "idle threads: resident"; do
        grep -qF "$row" "$OUT/text" || fail "no row '$row' in:
$(cat "$OUT/text")"
    done
}

@test "--csv prints a header and exactly five fields on every line" {
    [ "$(cat "$OUT/csv.status")" -eq 0 ] || fail "--csv failed: $(cat "$OUT/csv.err")"
    run head -n 1 "$OUT/csv"
    assert_output "name,value,unit,x_ram,note"
    run awk -F, 'NF != 5 { print NR ": " $0 }' "$OUT/csv"
    assert_output ""
    [ "$(wc -l <"$OUT/csv")" -ge 18 ] || fail "too few lines: $(cat "$OUT/csv")"
}

@test "every time is a positive number, or the row says why it is not measurable" {
    local name value unit note
    while IFS=, read -r name value unit _ note; do
        [ "$unit" = ns ] || continue
        if [ -z "$value" ]; then
            [[ "$note" == "not measurable here ("?*")" ]] ||
                fail "$name has no value and no reason: '$note'"
            [[ "$name" == uncached_read || "$name" == ram_access_huge ]] ||
                fail "$name must always be measurable"
        else
            awk -v v="$value" 'BEGIN { exit !(v + 0 > 0) }' || fail "$name = '$value'"
        fi
    done <"$OUT/csv"
}

@test "an L1 hit is faster than a RAM access, a syscall and a loopback round trip" {
    assert_faster l1_hit ram_access
    assert_faster l1_hit syscall
    assert_faster l1_hit loopback_rtt
}

@test "a RAM access and a syscall are both faster than a loopback round trip" {
    assert_faster ram_access loopback_rtt
    assert_faster syscall loopback_rtt
}

@test "a thread switch and a thread creation each cost more than a syscall" {
    assert_faster syscall thread_switch
    assert_faster syscall thread_create
}

@test "a page-cache read is faster than an uncached read, or the row says why" {
    local uncached
    uncached="$(csv_value uncached_read)"
    if [ -z "$uncached" ]; then
        run grep -F "uncached read" "$OUT/text"
        assert_output --partial "not measurable here ("
        return
    fi
    assert_faster page_cache_read uncached_read
}

@test "an idle thread reserves its whole stack but keeps only a few pages of it resident" {
    local stack vmsize rss
    # ThreadSanitizer keeps about 1 MiB of its own state per thread.
    [[ "$BUILD" != *san-thread* ]] || skip "ThreadSanitizer adds its own memory to every thread"
    stack="$(csv_value default_stack)"
    vmsize="$(csv_value idle_vmsize_per_thread)"
    rss="$(csv_value idle_vmrss_per_thread)"
    # Address space: about one default stack per thread (at least half of it).
    awk -v s="$stack" -v v="$vmsize" 'BEGIN { exit !(s > 0 && v >= s / 2) }' ||
        fail "address space per thread $vmsize, default stack $stack"
    # Resident: a small fraction of it (a few 4 KiB pages where the stack is 8 MiB).
    awk -v s="$stack" -v r="$rss" 'BEGIN { exit !(r > 0 && r < s / 8) }' ||
        fail "resident per thread $rss, default stack $stack"
}

@test "the test file is removed from the -d directory" {
    run ls -A "$OUT/files"
    assert_output ""
}

@test "on tmpfs the uncached read says it cannot be measured, and why" {
    local free_kb
    [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "/dev/shm is not a tmpfs here"
    # root may write anywhere; an ordinary account only where the mode says
    [ -w /dev/shm ] && [ -x /dev/shm ] || skip "/dev/shm is not writable by $(id -un) here: $(ls -ld /dev/shm)"
    free_kb=$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')
    [ "${free_kb:-0}" -ge 8192 ] || skip "/dev/shm has ${free_kb:-no} KiB free, and latency -q writes a 4 MiB file there"
    run timeout 60 "$LATENCY" -q -d /dev/shm
    assert_success
    run grep -F "uncached read (4 KiB)" <<<"$output"
    assert_output --regexp 'not measurable here \(tmpfs keeps files in RAM only: no device; O_DIRECT (accepted|refused: .+)\)$'
}

@test "-d with a missing directory fails at once with a clear message" {
    run --separate-stderr timeout 10 "$LATENCY" -q -d "$BATS_TEST_TMPDIR/no-such-dir"
    [ "$status" -eq 1 ] || fail "expected exit 1, got $status"
    [[ "$stderr" == *"no-such-dir: No such file or directory"* ]] || fail "stderr: $stderr"
    assert_output ""
}

@test "-d with a regular file fails with 'Not a directory'" {
    touch "$BATS_TEST_TMPDIR/file"
    run --separate-stderr timeout 10 "$LATENCY" -q -d "$BATS_TEST_TMPDIR/file"
    [ "$status" -eq 1 ] || fail "expected exit 1, got $status"
    [[ "$stderr" == *"Not a directory"* ]] || fail "stderr: $stderr"
}

@test "a bad option prints the usage on stderr and exits 2" {
    run --separate-stderr timeout 10 "$LATENCY" --no-such-option
    [ "$status" -eq 2 ] || fail "expected exit 2, got $status"
    [[ "$stderr" == *"usage: latency"* ]] || fail "no usage on stderr: $stderr"
    assert_output ""
}

@test "an unexpected argument prints the usage on stderr and exits 2" {
    run --separate-stderr timeout 10 "$LATENCY" -q extra
    [ "$status" -eq 2 ] || fail "expected exit 2, got $status"
    [[ "$stderr" == *"usage: latency"* ]] || fail "no usage on stderr: $stderr"
}

@test "-h prints the usage on stdout and exits 0" {
    run --separate-stderr timeout 10 "$LATENCY" -h
    assert_success
    assert_output --partial "usage: latency"
    assert_output --partial "--csv"
}
