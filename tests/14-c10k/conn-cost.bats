#!/usr/bin/env bats
# Exercise 14-c10k/conn-cost (predict): a prediction of the memory an idle
# connection costs echo-threads and echo-epoll-lt, then the figure measured
# with c10k.sh, both written in conn-cost.c. Runs against $IMPL (solutions
# by default; `make ex` uses exercises). c10k.sh at 300 connections on two
# servers: about 5 seconds.

load ../helpers/common

setup() {
    CONN_COST="$(impl_bin conn-cost conn-cost)"
}

@test "conn-cost: both predictions and both measurements are filled in, and it says how far off each prediction was" {
    run timeout 10 "$CONN_COST"
    course_note_exit "$status" conn-cost
    [ "$status" -eq 0 ] || fail "conn-cost: exit $status
$output"
    assert_line --regexp '^echo-threads +predicted +[0-9]+ B, measured +[0-9]+ B per idle connection: '
    assert_line --regexp '^echo-epoll-lt +predicted +[0-9]+ B, measured +[0-9]+ B per idle connection: '
}

@test "conn-cost: the measured figures are bytes per connection: echo-threads from 4 KiB to 1 MiB, echo-epoll-lt under 16 KiB" {
    local threads events
    run timeout 10 "$CONN_COST"
    course_note_exit "$status" conn-cost
    [ "$status" -eq 0 ] || fail "conn-cost: exit $status
$output"
    threads=$(sed -n 's/^echo-threads .* measured *\([0-9]*\) B.*/\1/p' <<<"$output")
    events=$(sed -n 's/^echo-epoll-lt .* measured *\([0-9]*\) B.*/\1/p' <<<"$output")
    # A thread touches at least one 4 KiB page of its stack, and idle it
    # touches nowhere near 1 MiB of the 8 MiB it reserves; an idle epoll
    # connection is a struct and an epoll entry (c10k.sh measured 12,574
    # and 122 bytes here). A figure outside is in KiB, a total for the 300
    # connections, a size reserved rather than touched, or the other server's.
    [ "${threads:-0}" -ge 4096 ] && [ "$threads" -le 1048576 ] ||
        fail "expected echo-threads' measured figure between 4096 and 1048576 bytes per connection, got '${threads}': copy the B/conn column of c10k.sh -n 300 for echo-threads"
    [ "${events:-0}" -ge 1 ] && [ "$events" -lt 16384 ] ||
        fail "expected echo-epoll-lt's measured figure between 1 and 16383 bytes per connection, got '${events}': copy the B/conn column of c10k.sh -n 300 for echo-epoll-lt"
}

@test "conn-cost: the measured figures agree with what c10k.sh -n 300 measures now (within half, or 1 KiB)" {
    case "$BUILD" in */san-*) skip "c10k.sh measures the normal build" ;; esac
    require_fds 700 # c10k.sh: 300 connections + 64 in the server, as many in echo-load
    local csv="$BATS_TEST_TMPDIR/c10k.csv" threads events
    run timeout 60 "$TOP/chapters/14-c10k/c10k.sh" -n 300 -s echo-threads,echo-epoll-lt -T none -o "$csv"
    [ "$status" -eq 0 ] || fail "c10k.sh exited with $status: $output"
    threads=$(awk -F, '$1 == "echo-threads" && $4 == "hold" { print $9 }' "$csv")
    events=$(awk -F, '$1 == "echo-epoll-lt" && $4 == "hold" { print $9 }' "$csv")
    [[ "$threads" =~ ^-?[0-9]+$ && "$events" =~ ^-?[0-9]+$ ]] || fail "no B/conn figures in the CSV:
$(cat "$csv")"
    echo "# c10k.sh now: echo-threads $threads B, echo-epoll-lt $events B per idle connection" >&3
    # a figure of 0 or less (an epoll server can round to it) is checked as 1
    [ "$threads" -gt 0 ] || threads=1
    [ "$events" -gt 0 ] || events=1
    run timeout 10 "$CONN_COST" -c "$threads" "$events"
    course_note_exit "$status" conn-cost
    [ "$status" -eq 0 ] || fail "conn-cost -c $threads $events: exit $status
$output"
}

@test "conn-cost: bad arguments print the usage and exit 2; -h exits 0" {
    local args
    for args in "-x" "-c" "-c 12 x" "-c 0 5" "one two"; do
        run timeout 10 "$CONN_COST" $args
        [ "$status" -eq 2 ] || fail "conn-cost $args: expected exit 2, got $status: $output"
        assert_output --partial "usage:"
    done
    run timeout 10 "$CONN_COST" -h
    [ "$status" -eq 0 ] || fail "conn-cost -h: exit $status"
    assert_output --partial "usage:"
}
