#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench.sh: mini-redis on each backend against the real redis-server, with
# the real client: redis-benchmark, SET GET INCR LPUSH LPOP, 50 clients,
# one request per round trip (-P 1) and 16 (-P 16), on this machine.
#
#   chapters/15-mini-redis/bench.sh [-q] [-s NAMES] [-r ROUNDS] [-n REQUESTS] [-o FILE]
#
#   -s NAMES     comma-separated, from mini-redis-uring, mini-redis-epoll,
#                mini-redis-kqueue and redis-server (default: all four;
#                io_uring is left out, saying why, where it is not allowed)
#   -r ROUNDS    rounds (default 5): the figure is the median of the rounds
#   -n REQUESTS  requests per test and run (default 50000)
#   -q           quick: one round of 2,000 requests per test (the options
#                after it may change either)
#   -o FILE      the CSV (default build/bench/mini-redis-DATE.csv; $BENCH_OUT
#                instead of build/bench); the chart goes next to it, FILE
#                with .svg for .csv
#
# In each round every server in turn is started, warmed up, measured with
#   redis-benchmark -h 127.0.0.1 -p PORT -t set,get,incr,lpush,lpop -n REQUESTS -c 50 -P 1 --csv
# then the same with -P 16, and stopped: round r of every server comes
# before round r+1, so a change of the machine's speed during the run hits
# every server alike. redis-server is started here, on a port of its own,
# in a scratch folder, with no persistence (--save '' --appendonly no).
# With 2 or more CPUs the server runs on CPU 1 and redis-benchmark on CPU 0.
# Then, under strace -f -c, one run per server and pipeline depth of
# REQUESTS/5 requests per test, less a run of 50 (one per client: the
# start, the connections and the stop), gives the system calls per command.
#
# It prints a table (median requests/s and the range over the rounds,
# median p99 latency) and mini-redis on io_uring against redis-server, and
# writes the CSV: a "# key: value" header with the machine and the method,
# then one row per server, test and pipeline depth. The chart (gnuplot,
# bench.gp) shows requests/s side by side. redis-benchmark and redis-server
# come with `make deps` (packages redis-tools and redis-server).
set -euo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$top"
source common/tools/bench-lib.bash
source chapters/14-c10k/lib.bash # c10k_die, c10k_machine, c10k_csv_path, C10K_B

ALL="mini-redis-uring mini-redis-epoll mini-redis-kqueue redis-server"
TESTS="set,get,incr,lpush,lpop"
CLIENTS=50
DEPTHS="1 16"

filter="" rounds=5 requests=50000 csv=""
while [ $# -gt 0 ]; do
    case "$1" in
    -s | -r | -n | -o)
        [ $# -ge 2 ] || c10k_die 2 "$1 needs a value (-h for help)"
        case "$1" in -s) filter="$2" ;; -r) rounds="$2" ;; -n) requests="$2" ;; -o) csv="$2" ;; esac
        shift ;;
    -q) rounds=1 requests=2000 ;;
    -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) c10k_die 2 "unknown argument $1 (-h for help)" ;;
    esac
    shift
done
for v in "$rounds" "$requests"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || c10k_die 2 "-r and -n take a positive whole number, not '$v'"
done
[ "$requests" -ge 100 ] || c10k_die 2 "-n $requests: at least 100 requests per test"
names=()
IFS=, read -ra names <<<"${filter:-${ALL// /,}}"
for name in "${names[@]}"; do
    [[ " $ALL " == *" $name "* ]] || c10k_die 2 "-s: no server called '$name'; the servers are: $ALL"
done

# The tools first: a run that cannot finish should not start.
command -v redis-benchmark >/dev/null ||
    c10k_die 1 "redis-benchmark is not installed (make deps: package redis-tools)"
[[ " ${names[*]} " != *" redis-server "* ]] || command -v redis-server >/dev/null ||
    c10k_die 1 "redis-server is not installed (make deps: package redis-server), or leave it out with -s"

bin="$C10K_B/chapters/15-mini-redis/mini-redis"
if [ "$C10K_B" = "$PWD/build" ]; then
    # BUILD and SAN from a `make SAN=...` above us would build into the wrong place
    env -u BUILD -u SAN make -s -C chapters/15-mini-redis QUIET_WHERE=1 >/dev/null ||
        c10k_die 1 "make -C chapters/15-mini-redis failed"
fi
[ -x "$bin" ] || c10k_die 1 "${bin#"$top"/} is not built"
[ -n "$csv" ] || csv=$(c10k_csv_path mini-redis)
{ mkdir -p "$(dirname "$csv")" && : >"$csv"; } 2>/dev/null || c10k_die 1 "cannot write $csv"
bench_init

# server_start I PREFIX...: server I started behind PREFIX (taskset, or
# strace), BENCH_PID and BENCH_PORT set; exits if it does not start.
# redis-server cannot be told to pick a free port and say which, so it is
# given one at random and tried again on another when that one is taken.
server_start() {
    local name="${names[$1]}" dir="$BENCH_TMP/redis" port try i
    shift
    if [ "$name" != redis-server ]; then
        bench_start "$@" env RT_BACKEND="${name#mini-redis-}" "$bin" -p 0
        return
    fi
    mkdir -p "$dir"
    for ((try = 0; try < 20; try++)); do
        port=$((20000 + RANDOM % 10000))
        : >"$dir/log" # not the last try's: the new one may not have written yet
        "$@" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
            --dir "$dir" >"$dir/log" 2>&1 &
        BENCH_PID=$!
        for ((i = 0; i < 200; i++)); do
            grep -q 'Ready to accept connections' "$dir/log" && BENCH_PORT=$port && return 0
            kill -0 "$BENCH_PID" 2>/dev/null || break
            sleep 0.05
        done
        bench_stop
        grep -q 'Address already in use' "$dir/log" || break
    done
    c10k_die 1 "redis-server did not start: $(tail -n 3 "$dir/log")"
}

# server_stop_traced: SIGTERM the server, not strace, which then writes its
# summary when the server has gone.
server_stop_traced() {
    kill -TERM "$(pgrep -P "$BENCH_PID" | head -n 1)"
    wait "$BENCH_PID" || true
    BENCH_PID=""
}

# load N DEPTH: redis-benchmark against the running server, its CSV lines
# without the quotes and the column names ("SET,42771.60,0.706,..."). Bounded
# in time: redis-benchmark 7.0.15 was seen here to spin at full CPU, making
# no system call, and never end (once, against redis-server under strace);
# the count of results then says what is missing.
load() {
    "${BENCH_PIN_CLIENT[@]}" timeout $((20 + $1 / 200)) redis-benchmark -h 127.0.0.1 -p "$BENCH_PORT" -t "$TESTS" -n "$1" \
        -c "$CLIENTS" -P "$2" --csv 2>>"$BENCH_TMP/load.err" | tr -d '"' | grep -v '^test,' || true
}

# io_uring left out where the runtime cannot have it: mini-redis says why.
keep=()
for i in "${!names[@]}"; do
    if [ "${names[$i]}" = mini-redis-uring ]; then
        if ! why=$( (server_start "$i" && bench_stop) 2>&1 >/dev/null); then
            echo "(mini-redis-uring left out: ${why#*did not start: })"
            continue
        fi
    fi
    keep+=("${names[$i]}")
done
names=(${keep[@]+"${keep[@]}"})
[ ${#names[@]} -gt 0 ] || c10k_die 1 "no server left to measure"

ns=$(((requests / 5 + 15) / 16 * 16)) # a whole number of 16-request batches
[ "$ns" -ge 2000 ] || ns=2000          # well above the 50 of the base run
{
    c10k_machine
    echo "# redis-server: $(command -v redis-server >/dev/null && redis-server --version | sed 's/^Redis server //' || echo none)"
    echo "# redis-benchmark: $(redis-benchmark --version 2>/dev/null | head -n 1)"
    echo "# method: $rounds round(s); in each, every server in turn: started, warmed up, then" \
        "redis-benchmark -h 127.0.0.1 -p PORT -t $TESTS -n $requests -c $CLIENTS -P 1 --csv, the same with -P 16, and stopped;" \
        "${BENCH_PIN_SERVER[*]:+server on CPU 1, redis-benchmark on CPU 0; }redis-server --save '' --appendonly no"
    echo "# req_per_s: the median of the rounds, with the lowest and the highest; p50_us, p99_us: the medians of the rounds' percentiles"
    echo "# user_us_per_cmd, sys_us_per_cmd: the server's CPU time (/proc/PID/stat) over the five tests at that depth, per command; the median of the rounds"
    echo "# syscalls_per_cmd: strace -f -c, one run of $ns requests per test less one of 50, per command (the five tests together)"
    echo "# vs_redis_server: req_per_s over redis-server's at the same test and depth"
} >"$csv"
echo "bench: ${names[*]}; $rounds round(s) of $requests requests per test, $CLIENTS clients, -P ${DEPTHS// / and -P }"
echo "$(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs;" \
    "load average $(cut -d' ' -f1-3 /proc/loadavg)"
raw="$BENCH_TMP/raw" # server,depth,test,rps,p50_ms,p99_ms: a line per round
cpu="$BENCH_TMP/cpu" # server,depth,user ticks,system ticks: the server's, a line per round
: >"$raw"
: >"$cpu"
for ((r = 1; r <= rounds; r++)); do
    for i in "${!names[@]}"; do
        server_start "$i" "${BENCH_PIN_SERVER[@]}"
        load 1000 16 >/dev/null # warm up
        for p in $DEPTHS; do
            read -r u0 s0 < <(bench_ticks "$BENCH_PID")
            load "$requests" "$p" | awk -F, -v pre="${names[$i]},$p" '{ print pre "," $1 "," $2 "," $5 "," $7 }' >>"$raw"
            read -r u1 s1 < <(bench_ticks "$BENCH_PID")
            echo "${names[$i]},$p,$((u1 - u0)),$((s1 - s0))" >>"$cpu"
        done
        bench_stop
    done
    echo "  round $r of $rounds done; load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
for name in "${names[@]}"; do
    for p in $DEPTHS; do
        n=$(grep -c "^$name,$p," "$raw" || true)
        [ "$n" = $((rounds * 5)) ] ||
            c10k_die 1 "$name at -P $p: $n results of redis-benchmark, expected $((rounds * 5)): $(tail -n 2 "$BENCH_TMP/load.err")"
    done
done

# System calls per command: for each server, a run of 50 requests per test
# (the start, 50 connections per test and the stop, and one command on
# each), then at each depth a run of ns per test. With the per-command cost
# at depth 1, c1 = (run1 - base) / (5 ns - 250), the cost at depth P is
# (runP - base + 250 c1) / (5 ns): the fixed part cancels.
syscalls="$BENCH_TMP/syscalls" # server,depth,calls per command
: >"$syscalls"
if command -v strace >/dev/null; then
    for i in "${!names[@]}"; do
        for run in base $DEPTHS; do
            server_start "$i" strace -f -c -o "$BENCH_TMP/strace.$run"
            if [ "$run" = base ]; then got=$(load 50 1 | wc -l); else got=$(load "$ns" "$run" | wc -l); fi
            server_stop_traced
            [ "$got" = 5 ] || c10k_die 1 "${names[$i]} under strace: $got results of redis-benchmark, expected 5: $(tail -n 2 "$BENCH_TMP/load.err")"
        done
        base=$(bench_calls "$BENCH_TMP/strace.base" total)
        c1=$(awk -v a="$(bench_calls "$BENCH_TMP/strace.1" total)" -v b="$base" -v n="$ns" \
            'BEGIN { printf "%.6f", (a - b) / (5 * n - 250) }')
        for p in $DEPTHS; do
            awk -v a="$(bench_calls "$BENCH_TMP/strace.$p" total)" -v b="$base" -v n="$ns" -v c1="$c1" \
                -v pre="${names[$i]},$p" 'BEGIN { printf "%s,%.3f\n", pre, (a - b + 250 * c1) / (5 * n) }' >>"$syscalls"
        done
    done
else
    echo "(strace is not installed: no system call counts)"
fi

# The CSV: medians over the rounds, and against redis-server where it ran.
{
    echo "server,test,pipeline,clients,requests,rounds,req_per_s,req_per_s_min,req_per_s_max,p50_us,p99_us,user_us_per_cmd,sys_us_per_cmd,syscalls_per_cmd,vs_redis_server"
    awk -F, -v OFS=, -v rounds="$rounds" -v clients="$CLIENTS" -v requests="$requests" -v hz="$(getconf CLK_TCK)" '
        function median(list,   n, v, i, j, t) {
            n = split(list, v, " ")
            for (i = 2; i <= n; i++)
                for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            return v[int((n + 1) / 2)]
        }
        FILENAME == ARGV[1] { calls[$1 SUBSEP $2] = $3; next }
        FILENAME == ARGV[2] { usr[$1 SUBSEP $2] = usr[$1 SUBSEP $2] " " $3; sys[$1 SUBSEP $2] = sys[$1 SUBSEP $2] " " $4; next }
        {
            k = $1 SUBSEP $3 SUBSEP $2
            if (!(k in rps)) { order[++nk] = k; min[k] = max[k] = $4 }
            rps[k] = rps[k] " " $4; p50[k] = p50[k] " " $5 * 1000; p99[k] = p99[k] " " $6 * 1000
            if ($4 + 0 < min[k] + 0) min[k] = $4
            if ($4 + 0 > max[k] + 0) max[k] = $4
        }
        END {
            for (i = 1; i <= nk; i++) {
                k = order[i]; split(k, f, SUBSEP); m[k] = median(rps[k])
                if (f[1] == "redis-server") ref[f[2] SUBSEP f[3]] = m[k]
            }
            for (i = 1; i <= nk; i++) {
                k = order[i]; split(k, f, SUBSEP); rk = f[2] SUBSEP f[3]
                sk = f[1] SUBSEP f[3]
                print f[1], f[2], f[3], clients, requests, rounds, int(m[k]), int(min[k]), int(max[k]),
                      int(median(p50[k])), int(median(p99[k])),
                      sprintf("%.2f", median(usr[sk]) * 1e6 / hz / (5 * requests)),
                      sprintf("%.2f", median(sys[sk]) * 1e6 / hz / (5 * requests)), calls[sk],
                      ((rk in ref) && ref[rk] > 0 ? sprintf("%.2f", m[k] / ref[rk]) : "")
            }
        }' "$syscalls" "$cpu" "$raw"
    echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} >>"$csv"

echo
printf '%-18s %-6s %4s %10s %19s %8s %12s %9s %8s\n' server test "-P" "req/s" "[range]" "p99 us" "CPU us/cmd" "calls/cmd" "x redis"
grep -v '^#' "$csv" | tail -n +2 | sort -t, -k3,3n -k2,2 -s |
    awk -F, '{ printf "%-18s %-6s %4s %10s %19s %8s %12.2f %9s %8s\n", $1, $2, $3, $7, "[" $8 "-" $9 "]", $11, $12 + $13, $14, $15 }'

# The issue's goal: on io_uring, at least redis-server's requests/s at -P 1
# and 0.8 of them at -P 16, test by test.
if [[ " ${names[*]} " == *" mini-redis-uring "* && " ${names[*]} " == *" redis-server "* ]]; then
    echo
    awk -F, '$1 == "mini-redis-uring" && $15 != "" {
            goal = ($3 == 1) ? 1 : 0.8
            printf "  %-5s -P %-2s  %.2fx redis-server (goal %.1fx): %s\n", $2, $3, $15, goal, ($15 + 0 >= goal ? "met" : "missed")
        }
        BEGIN { print "goal: mini-redis on io_uring against redis-server (median requests/s)" }' \
        <(grep -v '^#' "$csv")
fi

# The chart, next to the CSV: requests/s, a table per depth (a row per
# test, a column per server) for bench.gp.
echo
svg="${csv%.csv}.svg"
if command -v gnuplot >/dev/null; then
    for p in $DEPTHS; do
        grep -v '^#' "$csv" | awk -F, -v p="$p" -v servers="${names[*]}" '
            NR > 1 && $3 == p { if (!($2 in seen)) { seen[$2] = 1; tests[++nt] = $2 }; rps[$2, $1] = $7 }
            END {
                ns = split(servers, s, " ")
                head = "test"; for (j = 1; j <= ns; j++) head = head " " s[j]
                print head
                for (i = 1; i <= nt; i++) {
                    line = tests[i]; for (j = 1; j <= ns; j++) line = line " " rps[tests[i], s[j]]
                    print line
                }
            }' >"$BENCH_TMP/p$p.dat"
    done
    machine="$(nproc)-core $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr);"
    machine+=" median of $rounds round(s) of $requests requests per test, $CLIENTS clients, $(date -u +%Y-%m-%d)"
    gnuplot -e "p1='$BENCH_TMP/p1.dat'; p16='$BENCH_TMP/p16.dat'; out='$svg'; nservers=${#names[@]}" \
        -e "machine='${machine//\'/}'" chapters/15-mini-redis/bench.gp
    echo "chart: ${svg#"$top"/}"
else
    echo "(gnuplot is not installed (make deps: package gnuplot-nox): no chart)"
fi
echo "CSV: ${csv#"$top"/} ($(($(grep -vc '^#' "$csv") - 1)) rows)"
