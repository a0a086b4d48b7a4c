#!/usr/bin/env bats
# test-long: runs redis-benchmark against two servers (about 11 s)
# Chapter 15: bench.sh, mini-redis against redis-server with redis-benchmark.
# Its quick mode against two servers gives the CSV and the chart it
# promises; without its tools it names the one missing. The figures
# themselves are the README's, measured by a full run, not a test.

load ../helpers/common
load redis

BENCH="$TOP/chapters/15-mini-redis/bench.sh"

# path_without NAME: a PATH holding every program of this one but NAME.
path_without() {
    local d dirs bin="$BATS_TEST_TMPDIR/bin-$1"
    mkdir -p "$bin"
    IFS=: read -ra dirs <<<"$PATH"
    for d in "${dirs[@]}"; do
        [ -d "$d" ] && ln -s "$d"/* "$bin"/ 2>/dev/null
    done
    rm -f "$bin/$1"
    echo "$bin"
}

@test "bench.sh -q: mini-redis on epoll and redis-server, a CSV with the machine and a row per server, test and depth, and a chart" {
    require_redis
    command -v redis-benchmark >/dev/null || skip "redis-benchmark is not installed (make deps: package redis-tools)"
    command -v gnuplot >/dev/null || skip "gnuplot is not installed (make deps: package gnuplot-nox)"
    command -v strace >/dev/null || skip "strace is not installed (make deps)"
    local csv="$BATS_TEST_TMPDIR/b.csv" key s t p rows
    run timeout 60 "$BENCH" -q -s mini-redis-epoll,redis-server -o "$csv"
    [ "$status" -eq 0 ] || fail "bench.sh exited with $status: $output"
    for key in kernel cpu cores redis-server redis-benchmark method "load average at start" "load average at end"; do
        grep -q "^# $key: ." "$csv" || fail "no '# $key:' line in the CSV:
$(cat "$csv")"
    done
    grep -qx 'server,test,pipeline,clients,requests,rounds,req_per_s,req_per_s_min,req_per_s_max,p50_us,p99_us,user_us_per_cmd,sys_us_per_cmd,syscalls_per_cmd,vs_redis_server' "$csv" ||
        fail "not the columns expected: $(grep -v '^#' "$csv" | head -n 1)"
    rows=$(grep -v '^#' "$csv" | tail -n +2)
    [ "$(wc -l <<<"$rows")" -eq 20 ] || fail "expected 20 rows (2 servers x 5 tests x 2 depths), got:
$rows"
    for s in mini-redis-epoll redis-server; do
        for t in SET GET INCR LPUSH LPOP; do
            for p in 1 16; do
                # requests/s above 0, latencies, CPU time and system calls per command, the ratio to redis-server
                grep -Eq "^$s,$t,$p,50,2000,1,[1-9][0-9]*,[0-9]+,[0-9]+,[0-9]+,[0-9]+,[0-9]+\.[0-9]{2},[0-9]+\.[0-9]{2},[0-9]+\.[0-9]{3},[0-9]+\.[0-9]{2}$" <<<"$rows" ||
                    fail "no complete row for $s $t -P $p in:
$rows"
            done
        done
    done
    grep -q '^redis-server,SET,1,.*,1\.00$' <<<"$rows" || fail "redis-server against itself is not 1.00: $rows"
    # one command per round trip costs at least a read and a write; 16 share them
    awk -F, '$3 == 1 && $14 < 1.5 || $3 == 16 && $14 >= 1 { bad = 1 } END { exit bad }' <<<"$rows" ||
        fail "system calls per command out of bounds:
$rows"
    [ -s "${csv%.csv}.svg" ] || fail "no chart next to the CSV: $output"
    grep -q '<svg' "${csv%.csv}.svg" && grep -q 'mini-redis-epoll' "${csv%.csv}.svg" &&
        grep -q 'redis-server' "${csv%.csv}.svg" || fail "the chart is not an SVG naming both servers"
}

@test "bench.sh: without redis-benchmark or redis-server it names the one missing and says make deps; a bad server or count exits 2" {
    PATH="$(path_without redis-benchmark)" run "$BENCH" -q -s mini-redis-epoll
    assert_failure 1
    assert_output --partial "redis-benchmark is not installed (make deps: package redis-tools)"
    PATH="$(path_without redis-server)" run "$BENCH" -q -s mini-redis-epoll,redis-server
    assert_failure 1
    assert_output --partial "redis-server is not installed (make deps: package redis-server)"
    run "$BENCH" -s mini-redis-select
    assert_failure 2
    assert_output --partial "no server called 'mini-redis-select'"
    run "$BENCH" -r 0
    assert_failure 2
    assert_output --partial "positive whole number"
}
