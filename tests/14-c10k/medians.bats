#!/usr/bin/env bats
# Exercise 14-c10k/medians (fix): the median of a server's runs at a point
# (lib.bash: c10k_medians), which bench-check.sh compares with the baseline.
# Runs against $IMPL (solutions by default; `make ex` uses exercises). Made
# up CSVs, no benchmark: a second or so.

load ../helpers/common

setup() {
    BENCH_CHECK="$(impl_bin medians bench-check.sh)"
    # sourced, not run: impl_bin would want it executable
    LIB="$BUILD/$IMPL/$CHAPTER/medians/lib.bash"
    [ -f "$LIB" ] || fail "missing ${LIB#"$TOP"/}: build it first with: make"
}

# csv FILE ROWS...: a CSV as bench.sh writes it; each row is
# "SERVER CHAPTER CONNS RUN REQ_PER_S P99_US".
csv() {
    local f="$1" server ch conns run rps p99
    shift
    {
        echo "# date: 2026-12-01 12:00 UTC"
        echo "server,chapter,kind,conns,msg_bytes,run,seconds,requests,errors,req_per_s,p50_us,p99_us,max_us,user_us_per_msg,sys_us_per_msg,syscalls_per_msg"
        for row in "$@"; do
            read -r server ch conns run rps p99 <<<"$row"
            echo "$server,$ch,events,$conns,128,$run,1.0,$rps,0,$rps,100,$p99,900,1.0,2.0,"
        done
    } >"$f"
}

# Three runs per server at 50 connections; echo-poll runs at 0.8 of the
# reference in the baseline.
baseline() {
    csv "$BATS_TEST_TMPDIR/base.csv" \
        "echo-epoll-lt 04 50 1 100000 500" "echo-poll 03 50 1 80000 600" \
        "echo-epoll-lt 04 50 2 101000 500" "echo-poll 03 50 2 81000 600" \
        "echo-epoll-lt 04 50 3 99000 500" "echo-poll 03 50 3 79000 600"
}

@test "bench-check: one stalled run out of three does not make a server look slower (its median rides the stall out)" {
    baseline
    # run 2 of echo-poll met a stall of the machine: 20,000 instead of 80,000
    csv "$BATS_TEST_TMPDIR/now.csv" \
        "echo-epoll-lt 04 50 1 100000 500" "echo-poll 03 50 1 82000 600" \
        "echo-epoll-lt 04 50 2 100000 500" "echo-poll 03 50 2 20000 9000" \
        "echo-epoll-lt 04 50 3 100000 500" "echo-poll 03 50 3 80000 600"
    run timeout 20 "$BENCH_CHECK" -b "$BATS_TEST_TMPDIR/base.csv" "$BATS_TEST_TMPDIR/now.csv"
    echo "$output" | sed 's/^/# /' >&3
    [ "$status" -eq 0 ] || fail "expected no regression (exit 0), got exit $status:
$output"
    assert_output --partial "1 ratios compared, 0 fell by more than 50%"
    assert_line --regexp '^echo-poll +50 +128 +0\.800 +0\.800 +\+0\.0%'
}

@test "the medians of a stalled run's point: 80000 requests/s and 600 us p99 for echo-poll, not the stall's 20000 and 9000" {
    csv "$BATS_TEST_TMPDIR/now.csv" \
        "echo-poll 03 50 1 82000 600" "echo-poll 03 50 2 20000 9000" "echo-poll 03 50 3 80000 600" \
        "echo-poll 03 500 1 50000 700" "echo-poll 03 500 2 51000 650"
    run timeout 20 bash -c 'cd "$TOP" && source "$1" && c10k_medians "$2"' medians "$LIB" "$BATS_TEST_TMPDIR/now.csv"
    [ "$status" -eq 0 ] || fail "c10k_medians: exit $status: $output"
    # server,chapter,kind,conns,msg_bytes,runs,rps,p50,p99,usr,sys,calls
    local row
    row=$(grep '^echo-poll,03,events,50,128,' <<<"$output") || fail "no row for 50 connections: $output"
    [ "$(cut -d, -f6,7,9 <<<"$row")" = "3,80000,600" ] ||
        fail "expected 3 runs, median 80000 requests/s, median p99 600 us; got: $row"
    # two runs: the first of the two in order of value (the lower middle)
    row=$(grep '^echo-poll,03,events,500,128,' <<<"$output") || fail "no row for 500 connections: $output"
    [ "$(cut -d, -f6,7,9 <<<"$row")" = "2,50000,650" ] ||
        fail "expected 2 runs, 50000 requests/s, p99 650 us; got: $row"
}

@test "the median orders the runs as numbers: of 9500, 120000 and 10200 requests/s it is 10200 (as text, 120000 would come between)" {
    csv "$BATS_TEST_TMPDIR/now.csv" \
        "echo-poll 03 50 1 9500 1500" "echo-poll 03 50 2 120000 800" "echo-poll 03 50 3 10200 12000"
    run timeout 20 bash -c 'cd "$TOP" && source "$1" && c10k_medians "$2"' medians "$LIB" "$BATS_TEST_TMPDIR/now.csv"
    [ "$status" -eq 0 ] || fail "c10k_medians: exit $status: $output"
    local row
    row=$(grep '^echo-poll,03,events,50,128,' <<<"$output") || fail "no row for 50 connections: $output"
    [ "$(cut -d, -f6,7,9 <<<"$row")" = "3,10200,1500" ] ||
        fail "expected 3 runs, median 10200 requests/s, median p99 1500 us; got: $row"
}

@test "bench-check: a server really three times slower still fails, exit 1, named, even with one lucky run" {
    baseline
    csv "$BATS_TEST_TMPDIR/now.csv" \
        "echo-epoll-lt 04 50 1 100000 500" "echo-poll 03 50 1 27000 600" \
        "echo-epoll-lt 04 50 2 100000 500" "echo-poll 03 50 2 26000 600" \
        "echo-epoll-lt 04 50 3 100000 500" "echo-poll 03 50 3 90000 600"
    run timeout 20 "$BENCH_CHECK" -b "$BATS_TEST_TMPDIR/base.csv" "$BATS_TEST_TMPDIR/now.csv"
    [ "$status" -eq 1 ] || fail "expected exit 1, got $status:
$output"
    assert_line --regexp '^echo-poll .* FELL$'
}
