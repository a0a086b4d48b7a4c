# SPDX-License-Identifier: MIT
# common/tools/bench-lib.bash: what the chapters' bench.sh scripts share.
#
#   source common/tools/bench-lib.bash
#   bench_args "50 500" 50 "$@"      # -r -d -c -q -h: sets runs, secs, conns, quick
#   bench_init                       # scratch folder, cleanup trap, CPU pinning
#   bench_servers echo-epoll-lt echo-aio-uring   # from common/servers.txt:
#                                    # builds them, sets BENCH_NAMES, BENCH_CMDS
#   bench_header RUNS SECONDS
#   bench_table "50 500" RUNS SECONDS   # requests/s and p99, median and range
#   bench_cpu 50 4000 RUNS              # the server's CPU time per message (/proc)
#   bench_syscalls 50 200               # system calls per echoed message (strace -f -c)
#
# A BENCH_CMDS entry is split on spaces, so a server takes its arguments
# there ("path -w 2"). Every server is started on port 0 and stopped with
# SIGTERM; echo-load drives it with 128-byte messages, one in flight per
# connection, and checks every byte. With 2 or more CPUs the server runs on
# CPU 1 and echo-load on CPU 0 (taskset), so they do not take turns on one.

# shellcheck source=common/tools/servers.bash
. "$(dirname "${BASH_SOURCE[0]}")/servers.bash"

BENCH_LOAD=build/common/tools/echo-load
BENCH_PID=""
BENCH_PORT=""

# bench_args DEFAULT_CONNS QUICK_CONNS ARGS...: the options every bench.sh
# takes. -r RUNS (3) and -d SECONDS (3) per point, -c "CONNS..."
# (DEFAULT_CONNS), -q (quick: one run of 1 s, at QUICK_CONNS unless -c
# says otherwise), -h (the script's opening comment). Sets runs, secs,
# conns and quick; a bad option or count exits 2 with the reason.
bench_args() {
    local quick_conns="$2" conns_set=0
    conns="$1" runs=3 secs=3 quick=0
    shift 2
    while [ $# -gt 0 ]; do
        case "$1" in
        -r | -d | -c)
            [ $# -ge 2 ] || { echo "bench.sh: $1 needs a value (-h for help)" >&2; exit 2; }
            case "$1" in -r) runs="$2" ;; -d) secs="$2" ;; -c) conns="$2" conns_set=1 ;; esac
            shift 2 ;;
        -q) quick=1 runs=1 secs=1; shift ;;
        -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "bench.sh: unknown argument $1 (-h for help)" >&2; exit 2 ;;
        esac
    done
    [ "$quick" = 1 ] && [ "$conns_set" = 0 ] && conns="$quick_conns"
    for v in "$runs" "$secs"; do
        [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: -r and -d take a positive whole number, not '$v'" >&2; exit 2; }
    done
    [[ "$conns" =~ ^[1-9][0-9]*( [1-9][0-9]*)*$ ]] ||
        { echo "bench.sh: -c takes connection counts separated by spaces, not '$conns'" >&2; exit 2; }
}

# bench_servers NAME...: these servers of common/servers.txt, built, as
# BENCH_NAMES and BENCH_CMDS (the environment that picks a backend, the
# program, and its "bench:" arguments where it has them, else its suite
# ones). A server this machine cannot run is left out, saying why: io_uring
# refused (chapter 08's echo-uring -K says why), or not built here
# (echo-uv without libuv1-dev, a C# server without the .NET SDK). An
# unknown NAME exits 2.
bench_servers() {
    local name args uring=unknown why
    BENCH_NAMES=() BENCH_CMDS=()
    make -s -C common >/dev/null
    for name in "$@"; do
        server_load "$name" && [[ "$SRV_PROG" == chapter:* ]] ||
            { echo "bench.sh: no chapter server '$name' in common/servers.txt" >&2; exit 2; }
        make -s -C "chapters/$SRV_CHAPTER" QUIET_WHERE=1 >/dev/null
        if [ "$SRV_KIND" = uring ] && [ "$uring" = unknown ]; then
            make -s -C chapters/08-io_uring-echo QUIET_WHERE=1 >/dev/null
            uring=yes
            why=$(build/chapters/08-io_uring-echo/echo-uring -K 2>&1) ||
                { uring=no && echo "(io_uring servers left out: $why)"; }
        fi
        [ "$SRV_KIND" != uring ] || [ "$uring" = yes ] || continue
        local bin="build/chapters/$SRV_CHAPTER/${SRV_PROG#chapter:}"
        [ -x "$bin" ] || { echo "($name left out: $bin is not built here; make doctor says what is missing)"; continue; }
        args=("${SRV_ARGS[@]}")
        [ "$SRV_BENCH" = 0 ] || args=("${SRV_BENCH_ARGS[@]}")
        BENCH_NAMES+=("$name")
        BENCH_CMDS+=("${SRV_ENV[*]:+env ${SRV_ENV[*]} }$bin${args[*]:+ ${args[*]}}")
    done
}

bench_init() {
    BENCH_TMP="$(mktemp -d)"
    trap bench__cleanup EXIT
    BENCH_PIN_SERVER=() BENCH_PIN_CLIENT=()
    if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
        BENCH_PIN_SERVER=(taskset -c 1) BENCH_PIN_CLIENT=(taskset -c 0)
    fi
    # 500 connections are 500 fds in each process, plus a few. -S: the soft
    # limit only; a plain `ulimit -n` would lower the hard limit too, and a
    # script could then not raise the soft one any further.
    case "$(ulimit -Sn)" in
    unlimited) ;;
    *) [ "$(ulimit -Sn)" -ge 4096 ] || ulimit -Sn 4096 2>/dev/null || true ;;
    esac
}

bench__cleanup() {
    if [ -n "$BENCH_PID" ]; then
        kill "$BENCH_PID" 2>/dev/null
        wait "$BENCH_PID" 2>/dev/null
    fi
    rm -rf "$BENCH_TMP"
}

# bench_start CMD...: run a server in the background; sets BENCH_PID and
# BENCH_PORT from its `listening on` line, or exits if it does not start.
bench_start() {
    local i
    : >"$BENCH_TMP/out" # not the last server's line: the new one may not have written yet
    "$@" >"$BENCH_TMP/out" 2>"$BENCH_TMP/err" &
    BENCH_PID=$!
    for ((i = 0; i < 100; i++)); do
        BENCH_PORT=$(sed -n 's/^listening on [0-9.]*:\([0-9]*\)$/\1/p' "$BENCH_TMP/out")
        [ -n "$BENCH_PORT" ] && return 0
        sleep 0.05
    done
    echo "bench: $* did not start: $(cat "$BENCH_TMP/err")" >&2
    exit 1
}

# bench_stop: SIGTERM the server and reap it.
bench_stop() {
    kill -TERM "$BENCH_PID" 2>/dev/null || true
    wait "$BENCH_PID" 2>/dev/null || true
    BENCH_PID=""
}

# median and range of the numbers on stdin
bench_median() { sort -n | awk '{ v[NR] = $1 } END { printf "%d", v[int((NR + 1) / 2)] }'; }
bench_range() { sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%d-%d", lo, hi }'; }

# bench_calls FILE NAME...: total calls of NAME... in an `strace -c`
# summary ("total" for all of them).
bench_calls() {
    local f="$1"
    shift
    awk -v names=" $* " 'index(names, " " $NF " ") && $4 ~ /^[0-9]+$/ { n += $4 } END { print n + 0 }' "$f"
}

# bench_header RUNS SECONDS: the machine and the method, for the record.
bench_header() {
    echo "$(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs;" \
        "load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "${BENCH_PIN_SERVER[*]:+server on CPU 1, echo-load on CPU 0; }128-byte messages, one in flight per connection;" \
        "median of $1 run(s) of $2 s, range in brackets; the servers take turns, run by run"
}

# bench_table CONNS RUNS SECONDS: for each connection count in CONNS, every
# server in BENCH_CMDS, RUNS times: requests/s and p99 latency, the median
# and the range. Run r of every server comes before run r+1, so a burst of
# noise from elsewhere on the machine hits them all alike.
bench_table() {
    local conns="$1" runs="$2" secs="$3" c r i line errors rps p99
    echo
    printf '%-26s %6s %22s %22s\n' server conns "requests/s" "p99 latency (us)"
    for c in $conns; do
        for ((r = 0; r < runs; r++)); do
            for i in "${!BENCH_NAMES[@]}"; do
                # shellcheck disable=SC2086 # a command with its arguments
                bench_start "${BENCH_PIN_SERVER[@]}" ${BENCH_CMDS[$i]} -p 0
                "${BENCH_PIN_CLIENT[@]}" "$BENCH_LOAD" -p "$BENCH_PORT" -c 10 -n 200 >/dev/null # warm up
                line=$("${BENCH_PIN_CLIENT[@]}" "$BENCH_LOAD" -p "$BENCH_PORT" -c "$c" -d "$secs" -l 128 --csv | tail -n 1)
                bench_stop
                IFS=, read -r _ _ _ _ errors _ rps _ _ p99 _ <<<"$line"
                [ "$errors" = 0 ] || echo "  (${BENCH_NAMES[$i]}, $c connections: $errors errors)"
                echo "$rps" >>"$BENCH_TMP/rps.$i"
                echo "$p99" >>"$BENCH_TMP/p99.$i"
            done
        done
        for i in "${!BENCH_NAMES[@]}"; do
            printf '%-26s %6s %10s %11s %10s %11s\n' "${BENCH_NAMES[$i]}" "$c" \
                "$(bench_median <"$BENCH_TMP/rps.$i")" "[$(bench_range <"$BENCH_TMP/rps.$i")]" \
                "$(bench_median <"$BENCH_TMP/p99.$i")" "[$(bench_range <"$BENCH_TMP/p99.$i")]"
            rm -f "$BENCH_TMP/rps.$i" "$BENCH_TMP/p99.$i"
        done
    done
}

# bench_ticks PID: the user and the system CPU time PID has used so far, in
# clock ticks (getconf CLK_TCK of them per second): fields 14 and 15 of
# /proc/PID/stat, counted after the command name, which may hold spaces.
bench_ticks() {
    local stat
    stat=$(cat "/proc/$1/stat") || return 1
    # shellcheck disable=SC2086 # split into fields on purpose
    set -- ${stat##*) }
    echo "${12} ${13}"
}

# bench_cpu CONNS PER_CONN RUNS: for each server, the CPU time it spends
# (/proc/PID/stat) while CONNS connections echo PER_CONN messages each, in
# microseconds per message: user + system (median and range), and the user
# part alone (median): the part a runtime adds, since the system part is
# the kernel's TCP work, the same for every server. Run r of every server
# comes before run r+1: a virtual CPU's speed drifts over minutes, and
# servers measured one after the other would carry that drift.
bench_cpu() {
    local conns="$1" per="$2" runs="$3" hz i r u0 s0 u1 s1
    hz=$(getconf CLK_TCK)
    echo
    echo "server CPU time per echoed message: $conns connections x $per messages, median of $runs runs"
    printf '%-26s %14s %14s %14s\n' server "us/message" "range" "user us/msg"
    for i in "${!BENCH_NAMES[@]}"; do
        : >"$BENCH_TMP/cpu.$i"
        : >"$BENCH_TMP/user.$i"
    done
    for ((r = 0; r < runs; r++)); do
        for i in "${!BENCH_NAMES[@]}"; do
            # shellcheck disable=SC2086
            bench_start "${BENCH_PIN_SERVER[@]}" ${BENCH_CMDS[$i]} -p 0
            "${BENCH_PIN_CLIENT[@]}" "$BENCH_LOAD" -p "$BENCH_PORT" -c 10 -n 200 >/dev/null # warm up
            read -r u0 s0 < <(bench_ticks "$BENCH_PID")
            "${BENCH_PIN_CLIENT[@]}" "$BENCH_LOAD" -p "$BENCH_PORT" -c "$conns" -n "$per" -l 128 >/dev/null
            read -r u1 s1 < <(bench_ticks "$BENCH_PID")
            bench_stop
            # ticks -> microseconds per message, in hundredths
            echo $(((u1 + s1 - u0 - s0) * 100000000 / hz / (conns * per))) >>"$BENCH_TMP/cpu.$i"
            echo $(((u1 - u0) * 100000000 / hz / (conns * per))) >>"$BENCH_TMP/user.$i"
        done
    done
    for i in "${!BENCH_NAMES[@]}"; do
        printf '%-26s %14s %14s %14s\n' "${BENCH_NAMES[$i]}" \
            "$(bench_median <"$BENCH_TMP/cpu.$i" | awk '{ printf "%.2f", $1 / 100 }')" \
            "[$(bench_range <"$BENCH_TMP/cpu.$i" | awk -F- '{ printf "%.2f-%.2f", $1 / 100, $2 / 100 }')]" \
            "$(bench_median <"$BENCH_TMP/user.$i" | awk '{ printf "%.2f", $1 / 100 }')"
    done
}

# bench_syscalls CONNS PER_CONN: every server under `strace -f -c` while
# CONNS connections echo PER_CONN messages each; the system calls of its
# start and stop, measured alone, are subtracted. Prints calls per message
# and the count of each kind of wait and of reads and writes, and keeps the
# calls per message of server i in BENCH_SYSCALLS[i] for the caller.
bench_syscalls() {
    local conns="$1" per="$2" msgs=$(($1 * $2)) i phase total
    BENCH_SYSCALLS=()
    if ! command -v strace >/dev/null; then
        echo "(strace is not installed: no system call counts)"
        return 0
    fi
    echo
    echo "system calls per echoed message: $conns connections x $per messages = $msgs, under strace -f -c"
    echo "(the server's start and stop, measured alone, are subtracted)"
    printf '%-26s %9s %15s %16s %10s %10s\n' server "per msg" io_uring_enter "epoll_wait/poll" "epoll_ctl" "rd/wr"
    for i in "${!BENCH_NAMES[@]}"; do
        for phase in idle load; do
            # shellcheck disable=SC2086
            bench_start strace -f -c -o "$BENCH_TMP/strace.$phase" ${BENCH_CMDS[$i]} -p 0
            [ "$phase" = load ] && "$BENCH_LOAD" -p "$BENCH_PORT" -c "$conns" -n "$per" -l 128 >/dev/null
            # SIGTERM the server, not strace: strace then writes its summary
            kill -TERM "$(pgrep -P "$BENCH_PID" | head -n 1)"
            wait "$BENCH_PID" || true
            BENCH_PID=""
        done
        total=$(($(bench_calls "$BENCH_TMP/strace.load" total) - $(bench_calls "$BENCH_TMP/strace.idle" total)))
        BENCH_SYSCALLS[i]=$(awk -v t="$total" -v m="$msgs" 'BEGIN { printf "%.3f", t / m }')
        printf '%-26s %9s %15s %16s %10s %10s\n' "${BENCH_NAMES[$i]}" "${BENCH_SYSCALLS[$i]}" \
            "$(bench_calls "$BENCH_TMP/strace.load" io_uring_enter)" \
            "$(bench_calls "$BENCH_TMP/strace.load" epoll_wait epoll_pwait epoll_pwait2 poll ppoll)" \
            "$(bench_calls "$BENCH_TMP/strace.load" epoll_ctl)" \
            "$(bench_calls "$BENCH_TMP/strace.load" read write recvfrom sendto readv writev recvmsg sendmsg)"
    done
}
