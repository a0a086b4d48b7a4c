#!/usr/bin/env bats
# Exercise 00-latency/chase: build a random single-cycle order (Sattolo's algorithm).
#
# Runs against $IMPL (solutions by default; `make ex` sets IMPL=exercises).
# Every test builds at least one order first, so an untouched exercise stops
# at its TODO (exit 99) in each of them.

load ../helpers/common

setup() {
    CHASE="$(impl_bin chase chase)"
}

# orders N SEED RUNS: RUNS orders over N slots, one per line.
orders() {
    run timeout 30 "$CHASE" -n "$1" -s "$2" -r "$3" --print
    assert_success
}

@test "every order of 1, 2, 3, 10 and 1000 slots is one cycle through every slot" {
    local n
    for n in 1 2 3 10 1000; do
        run timeout 30 "$CHASE" -n "$n" -s 1 -r 50 --check
        assert_success
        refute_output --partial "NOT one cycle"
        [ "$(grep -c "one cycle of length $n\$" <<<"$output")" -eq 50 ] ||
            fail "expected 50 cycles of length $n, got:
$output"
    done
}

@test "next[] is a permutation: every slot appears exactly once" {
    orders 1000 3 5
    # Each line: 1000 values, every one of 0..999 exactly once.
    run awk '{
        delete seen
        if (NF != 1000) { print "line " NR ": " NF " values"; next }
        for (i = 1; i <= NF; i++) {
            if ($i !~ /^[0-9]+$/ || $i + 0 >= 1000 || ($i in seen)) { print "line " NR ": bad or repeated " $i; next }
            seen[$i] = 1
        }
    }' <<<"$output"
    assert_output ""
}

@test "the order is random: no fixed stride, so no prefetcher can follow it" {
    orders 1000 11 5
    # next[i] - i (mod n) is one number for a strided walk ((i + 1) % n, say);
    # for a random cycle no difference should cover even 5% of the slots.
    run awk '{
        delete count
        best = 0
        for (i = 1; i <= NF; i++) {
            d = ($i - (i - 1) + NF) % NF
            if (++count[d] > best) best = count[d]
        }
        if (best > NF / 20) print "line " NR ": " best " of " NF " slots share one stride"
    }' <<<"$output"
    assert_output ""
}

@test "the walk jumps far: few hops land within 64 slots (4 KiB of nodes) of where they left" {
    # For a uniform random cycle over 100,000 slots about 128 hops in
    # 100,000 (0.13%) land that near. An order shuffled only within a small
    # window is one cycle, with no single stride, yet each hop stays within
    # a page or two of the last: the walk then times the caches and the
    # TLB, whatever the size of the array.
    run timeout 30 "$CHASE" -n 100000 -s 5 --print
    assert_success
    run awk '{
        near = 0
        for (i = 1; i <= NF; i++) {
            d = $i - (i - 1)
            if (d < 0) d = -d
            if (d < 64 || d > NF - 64) near++
        }
        if (near > NF / 100) print near " of " NF " hops land within 64 slots (expected about " int(128 * NF / 100000) ")"
    }' <<<"$output"
    assert_output ""
}

@test "different seeds give different orders, the same seed the same order" {
    local a b c
    orders 100 1 1
    a="$output"
    orders 100 2 1
    b="$output"
    orders 100 1 1
    c="$output"
    [ "$a" != "$b" ] || fail "seeds 1 and 2 gave the same order: $a"
    [ "$a" = "$c" ] || fail "seed 1 gave two different orders:
$a
$c"
}

@test "building orders leaks no memory (valgrind, or LeakSanitizer in a SAN=address build)" {
    if [[ ",${SAN:-}," == *,address,* ]]; then
        # LeakSanitizer checks at exit, and fails the run on a leak
        run timeout 60 "$CHASE" -n 1000 -r 20 --check
        assert_success
        return
    fi
    [ -z "${SAN:-}" ] || skip "SAN=$SAN: valgrind does not run sanitized programs, and this build has no LeakSanitizer"
    command -v valgrind >/dev/null || skip "valgrind is not installed (make deps)"
    run timeout 120 valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --error-exitcode=97 "$CHASE" -n 1000 -r 20 --check
    [ "$status" -eq 0 ] || fail "valgrind (exit $status) on chase -n 1000 -r 20 --check:
$output"
}

@test "all 6 cycles of 4 slots come out, each about equally often" {
    # (4-1)! = 6 single cycles exist; 600 orders should hit each about 100
    # times. A biased shuffle misses some or favours others.
    orders 4 1 600
    run bash -c 'sort | uniq -c | sort -n' <<<"$output"
    local lines
    lines="$(wc -l <<<"$output")"
    [ "$lines" -eq 6 ] || fail "expected 6 distinct cycles, got $lines:
$output"
    run awk '$1 < 50 || $1 > 150 { print "cycle " $2 " " $3 " " $4 " " $5 " came " $1 " times of 600" }' <<<"$output"
    assert_output ""
}

@test "a million slots make one cycle of a million" {
    run timeout 30 "$CHASE" -n 1000000 -s 7 --check
    assert_success
    assert_output "seed 7: slots 1000000, one cycle of length 1000000"
}

@test "--time walks a 16 KiB cycle and reports a positive time per hop" {
    run timeout 30 "$CHASE" -n 256 --time
    assert_success
    assert_output --regexp '^seed 1: 256 slots \(16 KiB\): [0-9]+\.[0-9] ns per hop$'
    [[ "$output" != *": 0.0 ns"* ]] || fail "zero time per hop: $output"
}
