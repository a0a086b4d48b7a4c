#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# c10k.sh: 10,000 concurrent connections on every echo server of the course,
# and what each connection costs the server in memory.
#
#   chapters/14-c10k/c10k.sh [-n CONNS] [-s NAMES] [-T STEP|none] [-o FILE]
#   make c10k
#
# For each server bench.sh measures (or those -s names, as in bench.sh):
#   1. start it on port 0 and let one client echo once (lazy set-up done);
#   2. note its resident memory (VmRSS), split by where it lives in
#      /proc/PID/smaps: the malloc heap ([heap]), anonymous mappings (other
#      threads' malloc arenas, thread stacks, big allocations, rings) and
#      the rest (the program, libraries, the main stack);
#   3. open CONNS connections with `echo-load --idle`, which checks each
#      with one 128-byte echo and then holds them all, idle;
#   4. note the memory again: (after - before) / CONNS is the server's
#      memory per idle connection, the figure the chapter's target is about
#      (at most 4 KiB); also VmSize, the threads, and the kernel's memory
#      for thread stacks and for sockets (KernelStack and Slab in
#      /proc/meminfo: the whole machine's, both ends of every connection);
#   5. check that a new client is still served, within 5 s;
#   6. close the CONNS connections and stop the server with SIGTERM.
# Then the thread-per-connection server (echo-threads), if selected, is
# pushed further: batches of STEP connections (-T, default CONNS/5) until a
# batch is not served or the client's ports run out, to show where and how
# it fails: its error messages, the threads it reached, VmSize against
# VmRSS. -T none skips that.
#
# Every connection is a file descriptor in the server and one in echo-load.
# The soft limit (ulimit -n) is raised as far as the hard limit allows; a
# hard limit below CONNS + 64 stops the script with how to raise it.
# Twice the connections are asked for, so that the thread-per-connection
# ramp has room to go past CONNS.
#
# Prints a table and writes a CSV (default build/bench/c10k-DATE.csv; -o
# FILE) with the machine's header and one row per server: charts.sh draws
# the memory per connection from it. Exit status: 0 when every event-driven
# server held every connection and served the new client, 1 otherwise or
# on a limit, 2 on bad arguments.
set -euo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$top"
source common/tools/bench-lib.bash
source chapters/14-c10k/lib.bash

n=10000 filter="" step="" csv=""
while [ $# -gt 0 ]; do
    case "$1" in
    -n | -s | -T | -o)
        [ $# -ge 2 ] || c10k_die 2 "$1 needs a value (-h for help)"
        case "$1" in -n) n="$2" ;; -s) filter="$2" ;; -T) step="$2" ;; -o) csv="$2" ;; esac
        shift ;;
    -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) c10k_die 2 "unknown argument $1 (-h for help)" ;;
    esac
    shift
done
[[ "$n" =~ ^[1-9][0-9]{0,5}$ ]] || c10k_die 2 "-n takes a number of connections (1 to 999999), not '$n'"
[ -n "$step" ] || step=$(((n + 4) / 5))
[ "$step" = none ] || [[ "$step" =~ ^[1-9][0-9]{0,5}$ ]] ||
    c10k_die 2 "-T takes a number of connections per batch, or none, not '$step'"

c10k_load_servers "$filter"
c10k_build
c10k_drop_unavailable
bench_init

# snippet: limits
# Each connection is a descriptor at each end; both processes start from
# this shell's limits. Ask for twice that (room for the thread ramp past
# CONNS), settle for the hard limit.
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] && hard=1048576
if [ "$hard" -lt $((n + 64)) ]; then
    c10k_die 1 "$n connections need $((n + 64)) file descriptors in the server and as many in
echo-load, but the hard limit here is $hard (ulimit -Hn). Raise it, then run this again:
  - this shell, as root:      ulimit -Hn $((2 * n + 64)); ulimit -n $((2 * n + 64))
  - a user, from next login:  /etc/security/limits.conf:  USER  hard  nofile  $((2 * n + 64))
  - a systemd service:        LimitNOFILE=$((2 * n + 64)) in its [Service] section
                              (DefaultLimitNOFILE= in /etc/systemd/system.conf for all)
  - a container:              docker run --ulimit nofile=$((2 * n + 64)) ...
or measure fewer connections: $0 -n $((hard - 64))"
fi
soft=$((2 * n + 64))
[ "$soft" -gt "$hard" ] && soft=$hard
ulimit -n "$soft"
read -r port_lo port_hi </proc/sys/net/ipv4/ip_local_port_range
[ "$n" -le $((port_hi - port_lo)) ] ||
    c10k_die 1 "$n connections from one address to one port need $n local ports, but
net.ipv4.ip_local_port_range is $port_lo-$port_hi: widen it (sysctl) or measure fewer (-n)"
# end snippet

[ -n "$csv" ] || csv=$(c10k_csv_path c10k)
{
    c10k_machine
    echo "# method: echo-load --idle -c $n (one 128-byte echo each, then idle); soft fd limit $(ulimit -n);" \
        "memory from /proc/PID/status and smaps, before and while holding"
    echo "# heap/anon/other_kb: growth of the resident memory in [heap], in anonymous mappings, elsewhere"
    echo "# kernel_stack_kb, slab_kb: growth of KernelStack and Slab in /proc/meminfo (the whole machine)"
    echo "server,chapter,kind,phase,conns,held,rss_before_kb,rss_after_kb,bytes_per_conn,heap_kb,anon_kb,other_kb,vmsize_kb,threads,kernel_stack_kb,slab_kb,new_client_ms,result"
} >"$csv" || c10k_die 1 "cannot write $csv"

LOAD_PIDS=()
c10k__cleanup() {
    local p
    for p in ${LOAD_PIDS[@]+"${LOAD_PIDS[@]}"}; do kill "$p" 2>/dev/null || true; done
    for p in ${LOAD_PIDS[@]+"${LOAD_PIDS[@]}"}; do wait "$p" 2>/dev/null || true; done
    bench__cleanup
}
trap c10k__cleanup EXIT

# status_kb PID KEY: a "KEY: N kB" (or plain number) line of /proc/PID/status.
status_kb() { awk -v k="$2:" '$1 == k { print $2; exit }' "/proc/$1/status"; }
meminfo_kb() { awk -v k="$1:" '$1 == k { print $2; exit }' /proc/meminfo; }

# snippet: smaps
# rss_split PID: resident KiB in the heap, in anonymous mappings, and
# elsewhere. A mapping's header line is "start-end perms offset dev inode
# [name]"; its Rss: line follows. glibc's thread stacks and the heaps of
# its other malloc arenas are anonymous; big malloc() blocks (128 KiB and
# more) are mappings of their own, anonymous too.
rss_split() {
    awk '/^[0-9a-f]+-[0-9a-f]+ / { kind = $6 == "[heap]" ? "heap" : $6 == "" ? "anon" : "other"; next }
         $1 == "Rss:" { kb[kind] += $2 }
         END { printf "%d %d %d\n", kb["heap"], kb["anon"], kb["other"] }' "/proc/$1/smaps"
}
# end snippet

# snapshot PID: "rss heap anon other vmsize threads kernel_stack slab", in KiB.
snapshot() {
    echo "$(status_kb "$1" VmRSS) $(rss_split "$1") $(status_kb "$1" VmSize) $(status_kb "$1" Threads)" \
        "$(meminfo_kb KernelStack) $(meminfo_kb Slab)"
}

# hold COUNT OUTFILE: echo-load --idle in the background, holding COUNT
# connections until released; waits for its "holding N connections" line
# (or its end) and sets HELD to N (0 if it held none). Not in a $(...):
# the pid must reach LOAD_PIDS in this shell.
hold() {
    local i
    : >"$2" # before the job starts: the loop below may read it before the job opens it
    "${BENCH_PIN_CLIENT[@]}" "$BENCH_LOAD" -p "$BENCH_PORT" -c "$1" --idle -d 3600 -t 30 \
        >"$2" 2>"$2.err" &
    LOAD_PIDS+=($!)
    HELD=""
    for ((i = 0; i < 900; i++)); do # 90 s
        HELD=$(sed -n 's/^holding \([0-9]*\) connections$/\1/p' "$2")
        [ -n "$HELD" ] && break
        kill -0 "${LOAD_PIDS[-1]}" 2>/dev/null || break
        sleep 0.1
    done
    HELD=${HELD:-0}
}

# release: SIGTERM every echo-load started by hold, and reap them; status 1
# if one of them reports a connection lost while idle.
release() {
    local p bad=0
    for p in ${LOAD_PIDS[@]+"${LOAD_PIDS[@]}"}; do kill -TERM "$p" 2>/dev/null || true; done
    for p in ${LOAD_PIDS[@]+"${LOAD_PIDS[@]}"}; do wait "$p" 2>/dev/null || bad=1; done
    LOAD_PIDS=()
    return $bad
}

# new_client_ms: a new client's echo while the others are held, in ms; or
# "failed" when it does not come back within 5 s.
new_client_ms() {
    local t0 out
    t0=$(date +%s%N)
    if ! out=$(timeout 10 "$(dirname "$BENCH_LOAD")/echo-client" -p "$BENCH_PORT" -t 5 "still served?" 2>&1) ||
        [ "$out" != "still served?" ]; then
        echo failed
        return 0
    fi
    echo $((($(date +%s%N) - t0) / 1000000))
}

# stop_server: SIGTERM and wait (closing thousands of connections, or
# joining thousands of threads, takes a while); its status, 124 if it had
# to be killed after 60 s.
stop_server() {
    local i
    kill -TERM "$BENCH_PID" 2>/dev/null || true
    for ((i = 0; i < 600; i++)); do
        kill -0 "$BENCH_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$BENCH_PID" 2>/dev/null; then
        kill -KILL "$BENCH_PID" 2>/dev/null
        wait "$BENCH_PID" 2>/dev/null || true
        BENCH_PID=""
        return 124
    fi
    local st=0
    wait "$BENCH_PID" 2>/dev/null || st=$? # its death by a signal is reported by the caller
    BENCH_PID=""
    return $st
}

# row I PHASE CONNS HELD BEFORE AFTER NEWMS RESULT: a CSV row, and its line
# in the table. BEFORE and AFTER are snapshots.
row() {
    local i="$1" phase="$2" c="$3" held="$4" ms="$7" result="$8"
    local r0 h0 a0 o0 k0 s0 r1 h1 a1 o1 v1 t1 k1 s1 per
    read -r r0 h0 a0 o0 _ _ k0 s0 <<<"$5"
    read -r r1 h1 a1 o1 v1 t1 k1 s1 <<<"$6"
    per=$([ "$held" -gt 0 ] && echo $(((r1 - r0) * 1024 / held)) || echo "")
    echo "${C10K_NAME[$i]},${C10K_CH[$i]},${C10K_KIND[$i]},$phase,$c,$held,$r0,$r1,$per,$((h1 - h0)),$((a1 - a0)),$((o1 - o0)),$v1,$t1,$((k1 - k0)),$((s1 - s0)),$ms,${result//,/;}" >>"$csv"
    printf '%-26s %6s %9s %9s %8s %7s %7s %7s %9s %7s %6s  %s\n' "${C10K_NAME[$i]}" "$held" "$r0" "$r1" \
        "${per:--}" "$(((h1 - h0) * 1024 / (held > 0 ? held : 1)))" "$(((a1 - a0) * 1024 / (held > 0 ? held : 1)))" \
        "$(((s1 - s0) * 1024 / (held > 0 ? held : 1)))" "$((v1 / 1024))" "$t1" "$ms" "$result"
}

# snippet: measure
# measure I: steps 1 to 6 for server I; returns 1 if it did not hold every
# connection or did not serve the new client.
measure() {
    local i="$1" before after ms result=ok st=0
    problem() { [ "$result" = ok ] && result="$1" || result+="; $1"; }
    # shellcheck disable=SC2086 # a command with its arguments
    bench_start "${BENCH_PIN_SERVER[@]}" ${C10K_CMD[$i]} -p 0
    "$BENCH_LOAD" -p "$BENCH_PORT" -c 1 -n 1 >/dev/null || true
    before=$(snapshot "$BENCH_PID")
    hold "$n" "$BENCH_TMP/hold.out"
    sleep 0.5 # let the server finish with the last echoes
    after=$(snapshot "$BENCH_PID")
    ms=$(new_client_ms)
    [ "$HELD" = "$n" ] || problem "held $HELD of $n: $(head -n 1 "$BENCH_TMP/hold.out.err")"
    [ "$ms" != failed ] || problem "new client not served within 5 s"
    # echo-load fails when a check failed (above) or a connection was lost while held
    release || [ "$HELD" != "$n" ] || problem "connections lost while idle"
    stop_server || st=$?
    [ "$st" = 0 ] || problem "exit status $st after SIGTERM"
    row "$i" hold "$n" "$HELD" "$before" "$after" "$ms" "$result"
    [ "$result" = ok ] || sed 's/fd=[0-9]*/fd=N/g' "$BENCH_TMP/err" | sort | uniq -c | sort -rn | head -n 5 |
        sed 's/^/    server said: /'
    [ "$result" = ok ]
}
# end snippet

# snippet: ramp
# ramp I: echo-threads beyond N, STEP connections at a time, each batch
# its own echo-load, until a batch is not wholly served or the local
# ports run out. Each batch adds a row: what the threads cost so far.
ramp() {
    local i="$1" before after held total=0 cap=$((port_hi - port_lo - 1000)) ms result
    echo
    echo "echo-threads until it fails: batches of $step connections (up to $cap, the client's ports)"
    # shellcheck disable=SC2086
    bench_start "${BENCH_PIN_SERVER[@]}" ${C10K_CMD[$i]} -p 0
    "$BENCH_LOAD" -p "$BENCH_PORT" -c 1 -n 1 >/dev/null || true
    before=$(snapshot "$BENCH_PID")
    while [ $((total + step)) -le "$cap" ]; do
        hold "$step" "$BENCH_TMP/ramp.$total"
        held=$HELD total=$((total + HELD))
        kill -0 "$BENCH_PID" 2>/dev/null || { result="the server died"; break; }
        after=$(snapshot "$BENCH_PID")
        result=ok
        [ "$held" = "$step" ] || result="batch held $held of $step: $(head -n 1 "$BENCH_TMP/ramp.$((total - held)).err")"
        row "$i" ramp "$((total - held + step))" "$total" "$before" "$after" "" "$result"
        [ "$held" = "$step" ] || break
    done
    ms=$(new_client_ms)
    echo "  a new client now: $([ "$ms" = failed ] && echo "not served within 5 s" || echo "served in $ms ms")"
    echo "  the server's messages ($(wc -l <"$BENCH_TMP/err") lines; each distinct one, with its count):"
    sed 's/fd=[0-9]*/fd=N/g' "$BENCH_TMP/err" | sort | uniq -c | sort -rn | head -n 5 | sed 's/^/    /'
    release || true
    stop_server || echo "  (echo-threads exited with status $? after SIGTERM)"
}
# end snippet

echo "c10k: $n idle connections on each of ${#C10K_NAME[@]} servers; fd limit $(ulimit -n) (hard $hard)"
echo "memory in KiB (VmRSS) before and while holding them; per connection in bytes: all of it,"
echo "then the heap, the anonymous mappings, and the kernel's slab (whole machine, both ends)"
echo
printf '%-26s %6s %9s %9s %8s %7s %7s %7s %9s %7s %6s  %s\n' server held "rss KiB" "holding" "B/conn" \
    heap anon slab "VmSz MiB" threads "new ms" result
fails=0
for i in "${!C10K_NAME[@]}"; do
    measure "$i" || fails=$((fails + 1))
done
if [ "$step" != none ]; then
    for i in "${!C10K_NAME[@]}"; do
        [ "${C10K_KIND[$i]}" = threads ] && ramp "$i"
    done
fi

echo
awk -F, '!/^#/ && $3 == "events" && $4 == "hold" && $9 != "" {
        n++; if ($9 + 0 > 4096) { over = over " " $1 " (" $9 ")" }
    }
    END { if (n) printf "target: at most 4096 bytes of server memory per idle connection, %d event-driven servers: %s\n",
                     n, over == "" ? "met by all" : "missed by" over }' "$csv"
echo "CSV: ${csv#"$top"/}"
[ "$fails" = 0 ]
