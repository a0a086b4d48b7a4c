#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# trace.sh: a timeline of what a server really did, from a real run.
#
#   common/tools/trace/trace.sh NAME[,NAME...]     (make trace S=NAME[,NAME...])
#   common/tools/trace/trace.sh --figures [NAME,...]  (make trace-figures [S=NAME,...])
#   common/tools/trace/trace.sh --stale | --redraw-stale   (make book: the latter)
#
# NAME is a server of the course's server table (common/servers.txt), C or
# C#, or a Windows one (run by Wine); or chapter 15's mini-redis, which
# speaks RESP instead of echo (resp_servers below: mini-redis, on the best
# backend, and mini-redis-epoll). For each, it:
#   1. starts the server under `strace -f -ttt -T`, which records every
#      system call of every thread with its entry time and its duration;
#   2. drives a small fixed load: client A sends "first half ", waits 0.6 s,
#      sends "second half" (a connection that sits idle in the middle), and
#      meanwhile echo-load sends 100 messages of 128 bytes on each of 8
#      connections, one at a time (build/common/tools/echo-load -c 8 -n 100);
#      (mini-redis: client A sends the first half of a SET, waits 0.6 s, sends
#      the rest and QUIT; meanwhile redis-benchmark sends 800 SETs, then
#      800 GETs, on 8 connections, 16 at a time on each: -P 16, pipelined);
#   3. stops the server (SIGTERM; SIGINT under Wine) and draws the log with
#      timeline.py: build/trace/NAME.svg (the whole run, and 2.5 ms of it
#      zoomed), build/trace/NAME.strace (the log), NAME.calls.tsv (every
#      call parsed), and build/trace/index.html, every picture there is.
#
# What strace records: the calls that matter to an I/O loop (-e trace= the
# descriptor and network calls, futex, clone), with --seccomp-bpf so the
# calls left out cost nothing; -s 0 (no data copied out), -qq, no signal
# lines. Every traced call still stops the thread twice: times are longer
# than without strace, the order and the shape are what the picture shows.
#
# --figures regenerates the pictures the chapters show: it traces
# echo-threads, echo-epoll-lt, echo-dotnet-async, echo-uring,
# echo-uring-sqpoll and echo-iocp and copies each picture it could draw to
# chapters/NN-slug/figures/trace-NAME.svg (one it could not, say without the
# .NET SDK or Wine, leaves the chapter's as it is).
#
# Each picture a chapter shows ends with a comment, "trace-source: HASH":
# a hash of its server's own code when it was drawn (source_stamp). --stale
# lists the pictures whose server has changed since, and exits 1;
# --redraw-stale, which make book runs, draws those again (where this
# machine can: one it cannot keeps its picture, saying so).
#
# Under Wine (KIND win32) the prefix's wineserver and Wine's services are
# started first, untraced, and strace then attaches to the wineserver as
# well (-p): the picture shows the server's threads and the wineserver's.
#
# Exit status: 0 done; 2 bad arguments (an unknown name: the names are
# listed; an exercise's server: traced through its chapter's); 77 the server
# cannot run here (io_uring refused, no .NET SDK, no Wine), with the reason;
# 1 anything else. Environment: BUILD (default build), TRACE_OUT (default
# $BUILD/trace), PYTHON (default python3), and another load: TRACE_CONNS
# (connections, default 8), TRACE_MSGS (messages on each, 100), TRACE_DEPTH
# (messages in flight on each, 1).
set -uo pipefail
export LC_ALL=C # a decimal point in $EPOCHREALTIME, whatever the locale
top="$(cd "$(dirname "$0")/../../.." && pwd)"
cd "$top" || exit 1
BUILD="${BUILD:-$top/build}"
out="${TRACE_OUT:-$BUILD/trace}"
python="${PYTHON:-python3}"
here=common/tools/trace
# the load (the picture's notes say it in words: keep them in step)
load_conns=${TRACE_CONNS:-8} load_msgs=${TRACE_MSGS:-100} load_len=128 pause=0.6 load_depth=${TRACE_DEPTH:-1}

die() {
    local code=$1
    shift
    echo "trace: $*" >&2
    exit "$code"
}
usage() { echo "usage:" >&2; sed -n '5,6p' "$0" | sed 's/^#/ /' >&2; }

# ---- the server table (common/servers.txt) -------------------------------------
# shellcheck source=common/tools/servers.bash
. common/tools/servers.bash

# The servers that speak RESP, not echo (chapter 15), traced with a Redis
# load: NAME, then its environment.
resp_servers=("mini-redis" "mini-redis-epoll RT_BACKEND=epoll")

# trace_load NAME: server_load for the table's servers and the RESP ones
# (SRV_* as server_load sets them; SRV_PROTO echo or resp).
trace_load() {
    local r words
    SRV_PROTO="echo"
    for r in "${resp_servers[@]}"; do
        read -ra words <<<"$r"
        [ "${words[0]}" = "$1" ] || continue
        SRV_CHAPTER=15-mini-redis SRV_PROG=chapter:mini-redis SRV_ARGS=()
        SRV_ENV=("${words[@]:1}") SRV_PROTO=resp SRV_KIND=uring
        [[ " ${SRV_ENV[*]} " == *" RT_BACKEND=epoll "* ]] && SRV_KIND=readiness
        return 0
    done
    server_load "$1"
}

# traceable_names: every NAME that can be traced (not the exercises'): the
# table's, in its order, then the RESP servers.
traceable_names() {
    local n r
    for n in $(server_names); do
        server_load "$n" && [[ "$SRV_PROG" == chapter:* ]] && echo "$n"
    done
    for r in "${resp_servers[@]}"; do echo "${r%% *}"; done
}

# exercise_check NAME: exit 2 if NAME is an exercise's server.
exercise_check() {
    local others="" n ch
    server_load "$1" && [[ "$SRV_PROG" == exercise:* ]] || return 0
    ch=$SRV_CHAPTER
    for n in $(traceable_names); do trace_load "$n" && [ "$SRV_CHAPTER" = "$ch" ] && others+="$n "; done
    server_load "$1"
    die 2 "$1 is an exercise's server ($SRV_PROG): the learner's copy is not traced; trace a server of its chapter instead: ${others% }"
}

# wineserver_pid PREFIX: the pid of PREFIX's wineserver, which works in a
# folder named for the prefix's device and inode (tests/helpers/wine.bash).
wineserver_pid() {
    local dev ino want p c
    read -r dev ino < <(stat -c '%d %i' "$1" 2>/dev/null) || return 1
    want=$(printf 'server-%x-%x' "$dev" "$ino")
    for p in /proc/[0-9]*; do
        read -r c 2>/dev/null <"$p/comm" || continue
        [[ "$c" == wineserver* ]] && [[ "$(readlink "$p/cwd" 2>/dev/null)" == */"$want" ]] &&
            { echo "${p#/proc/}"; return 0; }
    done
    return 1
}

# ---- the loads ----------------------------------------------------------------------
# Each runs in trace_one (its locals: tmp, port) and sets load_status,
# load_tool, load_note (the picture's words for it), a_want (what client A
# must get back) and client (client A's pid, waited for after the load).

# An echo server: client A sends half a message, pauses, sends the rest;
# echo-load's connections meanwhile.
trace_echo_load() {
    (
        {
            echo "$(date +%s.%N) A sends its first half" >>"$tmp/marks"
            printf 'first half '
            sleep "$pause"
            echo "$(date +%s.%N) A sends its second half" >>"$tmp/marks"
            printf 'second half'
        } | timeout 20 "$BUILD/common/tools/echo-client" -p "$port" -t 15 >"$tmp/a.out" 2>"$tmp/a.err"
        echo $? >"$tmp/a.status"
    ) &
    client=$!
    sleep 0.1
    echo "$(date +%s.%N) load starts" >>"$tmp/marks"
    timeout 30 "$BUILD/common/tools/echo-load" -p "$port" -c "$load_conns" -n "$load_msgs" \
        -l "$load_len" -D "$load_depth" -t 20 >"$tmp/load.out" 2>&1
    load_status=$?
    echo "$(date +%s.%N) load ends" >>"$tmp/marks"
    load_tool=echo-load a_want="first half second half"
    load_note="client A sends 'first half ', waits ${pause} s, sends 'second half'; meanwhile echo-load sends $load_msgs messages of $load_len bytes on each of $load_conns connections, $([ "$load_depth" = 1 ] && echo "one at a time" || echo "$load_depth at a time")."
}

# A RESP server: client A sends half a SET request (a parser must keep it
# and wait), pauses, sends the rest and QUIT (resp-cat -r -c: in pieces);
# redis-benchmark's pipelined SETs and GETs meanwhile.
trace_resp_load() {
    local set=$'*3\r\n$3\r\nSET\r\n$8\r\ngreeting\r\n$5\r\nhello\r\n' quit=$'*1\r\n$4\r\nQUIT\r\n'
    local half=$((${#set} / 2)) n=$((load_msgs * load_conns))
    (
        echo "$(date +%s.%N) A sends the first $half bytes of a SET" >>"$tmp/marks"
        {
            printf '%s' "${set:0:half}"
            sleep "$pause"
            echo "$(date +%s.%N) A sends the rest, then QUIT" >>"$tmp/marks"
            printf '%s%s' "${set:half}" "$quit"
        } | timeout 20 "$BUILD/chapters/15-mini-redis/resp-cat" -r -p "$port" -t 15000 >"$tmp/a.out" 2>"$tmp/a.err"
        echo $? >"$tmp/a.status"
    ) &
    client=$!
    sleep 0.1
    echo "$(date +%s.%N) load starts" >>"$tmp/marks"
    timeout 60 redis-benchmark -p "$port" -c "$load_conns" -n "$n" -P 16 -t set,get -q >"$tmp/load.out" 2>&1
    load_status=$?
    grep -q 'SET: [0-9.]* requests per second' "$tmp/load.out" && grep -q 'GET: [0-9.]* requests per second' "$tmp/load.out" || load_status=${load_status/#0/1}
    echo "$(date +%s.%N) load ends" >>"$tmp/marks"
    load_tool=redis-benchmark a_want=$'+OK\\r\\n\n+OK\\r\\n\n(closed)'
    load_note="client A sends the first $half bytes of a SET, waits ${pause} s, sends the rest and QUIT; meanwhile redis-benchmark sends $n SETs, then $n GETs, on $load_conns connections, 16 at a time on each (-P 16: pipelined)."
}

# ---- one server ---------------------------------------------------------------------

# trace_one NAME: trace it and draw it; prints where the SVG is.
trace_one() {
    local name=$1 chapter kind env=() prog args=() bin proto
    trace_load "$name" || die 2 "no server named '$name' in common/servers.txt"
    chapter=$SRV_CHAPTER kind=$SRV_KIND prog=$SRV_PROG proto=$SRV_PROTO
    env=("${SRV_ENV[@]}") args=("${SRV_ARGS[@]}")
    bin="$BUILD/chapters/$chapter/${prog#chapter:}"
    if [ ! -x "$bin" ]; then
        if [ -f "chapters/$chapter/dotnet/${prog#chapter:}/${prog#chapter:}.csproj" ] &&
            ! command -v dotnet >/dev/null; then
            die 77 "$name is a C# program and the .NET SDK is not installed (make deps): nothing to trace"
        fi
        die 1 "$bin is not built: run make first"
    fi

    local cmd=("$bin") stop=TERM also=() only=()
    if [ "$kind" = win32 ]; then
        local wine wineserver wspid
        wine=$(command -v wine64 || ls /usr/lib/wine/wine64 2>/dev/null || command -v wine) ||
            die 77 "$name is a Windows program and Wine is not installed (make deps)"
        wineserver=$(ls "$(dirname "$(readlink -f "$wine")")"/wineserver{64,} 2>/dev/null | head -n 1)
        [ -n "$wineserver" ] || die 77 "$name: no wineserver beside $wine"
        [ -f "$BUILD/wine/prefix.ok" ] ||
            die 77 "$name: no Wine prefix in $BUILD/wine/prefix yet: make test CH=09 creates it"
        env+=("WINEPREFIX=$BUILD/wine/prefix" WINEDEBUG=-all "WINEDLLOVERRIDES=mscoree=;mshtml=")
        # The prefix's wineserver and Wine's services, started untraced
        # (they would fill the picture with dozens of threads); the
        # wineserver, which every Win32 call on a socket goes through, is
        # then traced too (-p), and the picture keeps its threads and the
        # server's.
        # One already running (a test's) is used as it is; one started here
        # is stopped at the end, with the services, which would outlive it.
        if ! wspid=$(wineserver_pid "$BUILD/wine/prefix"); then
            (
                ulimit -Sn "$(ulimit -Hn)" 2>/dev/null
                exec env "${env[@]}" "$wineserver" -p 5
            ) </dev/null >/dev/null 2>&1 || true
            # shellcheck disable=SC2064 # expanded now, on purpose
            trap "env ${env[*]@Q} ${wineserver@Q} -k >/dev/null 2>&1" EXIT
        fi
        env "${env[@]}" timeout 60 "$wine" cmd.exe /c exit </dev/null >/dev/null 2>&1
        wspid=$(wineserver_pid "$BUILD/wine/prefix") ||
            die 1 "$name: the wineserver of $BUILD/wine/prefix did not start"
        also=(-I 2 -p "$wspid") only=(--only-sampled)
        cmd=("$wine" "$bin")
        stop=INT # Ctrl-C for a Windows program; SIGTERM would kill it unhandled
    fi
    if [ "$kind" = uring ] && [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" = 2 ]; then
        die 77 "$name uses io_uring, and this kernel refuses it to every process (kernel.io_uring_disabled = 2)"
    fi

    # LeakSanitizer checks a sanitized build's leaks at exit by ptrace,
    # which a process strace already traces cannot take: it would hang there
    env+=("ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}")
    local tmp="$out/.$name.run" log="$out/$name.strace"
    rm -rf "$tmp"
    mkdir -p "$tmp" && : >"$tmp/server.out" || die 1 "cannot create $tmp"
    # the server, under strace; strace's child is the server
    env "${env[@]}" strace -f -ttt -T -Y -qq -s 0 -e signal=none --seccomp-bpf \
        -e trace=%desc,%network,futex,clone,clone3,nanosleep,clock_nanosleep "${also[@]}" \
        -o "$log" "${cmd[@]}" "${args[@]}" -p 0 >"$tmp/server.out" 2>"$tmp/server.err" </dev/null &
    local strace_pid=$! pid="" port="" i
    for ((i = 0; i < 600; i++)); do # 60 s: Wine and .NET start slowly under strace
        port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/server.out" | head -n 1)
        [ -n "$port" ] && break
        if ! kill -0 "$strace_pid" 2>/dev/null; then
            wait "$strace_pid"
            local st=$?
            [ "$st" = 77 ] && die 77 "$name cannot run here: $(tr '\n' ' ' <"$tmp/server.err")"
            die 1 "$name exited with status $st before it listened: $(tr '\n' ' ' <"$tmp/server.err")"
        fi
        sleep 0.1
    done
    local t_listen load_status load_tool load_note a_want client
    t_listen=$(date +%s.%N)
    # the server: strace's child (/proc's children list, where the kernel has it)
    pid=$(cat "/proc/$strace_pid/task/$strace_pid/children" 2>/dev/null | awk '{ print $1 }')
    [ -n "$pid" ] || pid=$(pgrep -P "$strace_pid" | head -n 1)
    if [ -z "$port" ] || [ -z "$pid" ]; then
        [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
        kill -KILL "$strace_pid" 2>/dev/null
        wait "$strace_pid" 2>/dev/null
        die 1 "$name did not say 'listening on' within 60 s: $(tr '\n' ' ' <"$tmp/server.err")"
    fi
    echo "$t_listen listening" >"$tmp/marks"

    # Every 20 ms, the server's threads as /proc shows them: their names,
    # and the ones strace cannot see (io_uring's kernel threads).
    (
        while kill -0 "$pid" 2>/dev/null; do
            now=$EPOCHREALTIME
            for task in /proc/"$pid"/task/* ${wspid:+/proc/"$wspid"/task/*}; do
                read -r comm <"$task/comm" 2>/dev/null || continue
                stat=$(cat "$task/stat" 2>/dev/null) || continue
                stat=${stat##*) }
                read -r -a f <<<"$stat"
                echo "$now ${task##*/} $((f[11] + f[12])) $comm"
            done
            sleep 0.02
        done
    ) >"$tmp/threads" 2>/dev/null &
    local sampler=$!

    sleep 0.05
    local load_note
    if [ "$proto" = resp ]; then
        trace_resp_load
    else
        trace_echo_load
    fi
    wait "$client"
    sleep 0.05
    echo "$(date +%s.%N) SIG$stop" >>"$tmp/marks"
    kill -"$stop" "$pid" 2>/dev/null
    for ((i = 0; i < 100; i++)); do
        kill -0 "$strace_pid" 2>/dev/null || break
        # the wineserver outlives the server: strace lets it go on SIGINT
        [ -n "${wspid:-}" ] && ! kill -0 "$pid" 2>/dev/null && kill -INT "$strace_pid" 2>/dev/null
        sleep 0.1
    done
    if kill -0 "$strace_pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null
        wait "$strace_pid" 2>/dev/null
        wait "$sampler" 2>/dev/null
        die 1 "$name did not exit within 10 s of SIG$stop"
    fi
    wait "$strace_pid"
    local server_status=$?
    wait "$sampler" 2>/dev/null

    [ "$load_status" = 0 ] || die 1 "$name: $load_tool failed (status $load_status): $(cat "$tmp/load.out")"
    [ "$(cat "$tmp/a.status")" = 0 ] && [ "$(cat "$tmp/a.out")" = "$a_want" ] ||
        die 1 "$name: client A got '$(cat "$tmp/a.out")' back, status $(cat "$tmp/a.status"): $(cat "$tmp/a.err")"
    # (under Wine the status is strace's own, which SIGINT let go)
    [ "$server_status" = 0 ] || [ -n "${wspid:-}" ] ||
        echo "trace: note: $name exited with status $server_status after SIG$stop" >&2

    local machine shown="${cmd[*]}${args[*]:+ ${args[*]}}"
    shown=${shown//"$top"\//}
    [ -n "${wspid:-}" ] || shown="${env[*]:+${env[*]} }$shown" # Wine's variables are long
    machine="$(nproc)-core $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1 | sed 's/ [0-9]*-Core Processor//'), Linux $(uname -r | cut -d- -f1), $(strace -V | head -n 1 | sed 's/ -- version//'), $(date -u +%Y-%m-%d)"
    if ! "$python" "$here/timeline.py" "$log" -o "$out/$name.svg" --calls "$out/$name.calls.tsv" \
        --threads "$tmp/threads" --marks "$tmp/marks" --main "$pid" "${only[@]}" \
        --title "$name (chapter ${chapter%%-*}): every system call of every thread, one run under strace" \
        --note "Load: $load_note" \
        --note "Server: $shown -p 0. Drawn by make trace S=$name from strace -f -ttt -T on a $machine."; then
        die 1 "$name: timeline.py could not draw $log"
    fi
    rm -rf "$tmp"
    local ncalls nthreads
    ncalls=$(wc -l <"$out/$name.calls.tsv")
    nthreads=$(cut -f1 "$out/$name.calls.tsv" | sort -u | wc -l)
    echo "trace: $name: ${out#"$top"/}/$name.svg ($ncalls system calls, $nthreads thread$([ "$nthreads" = 1 ] || echo s) traced)"
}

# index.html: every picture in $out, one under another.
write_index() {
    local svg n
    {
        echo '<!DOCTYPE html>'
        echo '<html lang="en"><head><meta charset="utf-8"><title>make trace: what each server did</title>'
        echo '<style>body { font-family: sans-serif; margin: 1em; } object { max-width: 100%; border: 1px solid #ccc; }</style>'
        echo '</head><body><h1>What each server did, system call by system call</h1>'
        echo '<p>One run of each server under <code>strace -f</code>, drawn by <code>make trace</code>. Hover over a bar for its call.</p>'
        for svg in "$out"/*.svg; do
            [ -f "$svg" ] || continue
            n=$(basename "$svg" .svg)
            echo "<h2 id=\"$n\">$n</h2>"
            echo "<p><object data=\"$n.svg\" type=\"image/svg+xml\">timeline of $n: <a href=\"$n.svg\">$n.svg</a></object></p>"
        done
        echo '</body></html>'
    } >"$out/index.html"
}

# ---- the chapters' pictures and their sources ----------------------------------------

# source_stamp NAME: a hash of the server's own code: its program's files in
# the chapter (PROG.c and PROG_SRCS in the chapter's Makefile; or its C#
# project) and the chapter's headers they include; C without its comments (gcc
# -fpreprocessed), so that a reworded comment does not count as a change.
source_stamp() {
    server_load "$1" || return 1
    local dir="chapters/$SRV_CHAPTER" prog="${SRV_PROG#chapter:}" f files=() seen=" "
    prog="${prog%.exe}" prog="${prog#*/}"
    if [ -d "$dir/dotnet/$prog" ]; then
        files=("$dir/dotnet/$prog"/*.cs)
    else
        local todo=("$dir/$prog.c") src
        for src in $(sed -n "s/^$prog"'_SRCS *:= *//p' "$dir/Makefile"); do todo+=("$dir/$src"); done
        while [ ${#todo[@]} -gt 0 ]; do
            f=${todo[0]} todo=("${todo[@]:1}")
            [ -f "$f" ] && [[ "$seen" != *" $f "* ]] || continue
            seen+="$f " files+=("$f")
            for src in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do todo+=("$dir/$src"); done
        done
    fi
    for f in "${files[@]}"; do
        echo "== $f"
        case "$f" in
        *.c | *.h) gcc -fpreprocessed -dD -E -P -x c "$f" 2>/dev/null ;;
        *) cat "$f" ;;
        esac
    done | sha256sum | cut -c1-16
}

# figure_stamp FILE: the stamp a chapter's picture was drawn from.
figure_stamp() { sed -n 's/^<!-- trace-source: \([0-9a-f]*\) -->$/\1/p' "$1"; }

# ---- main ---------------------------------------------------------------------------
figure_names=echo-threads,echo-epoll-lt,echo-dotnet-async,echo-uring,echo-uring-sqpoll,echo-iocp
figures=0
if [ "${1:-}" = --stale ] || [ "${1:-}" = --redraw-stale ]; then
    # the chapters' pictures whose server changed since they were drawn;
    # --redraw-stale (make book) draws those again where this machine can
    stale=()
    for fig in chapters/[0-9][0-9]-*/figures/trace-*.svg; do
        [ -f "$fig" ] || continue
        n=${fig##*/trace-} n=${n%.svg}
        [ "$(figure_stamp "$fig")" = "$(source_stamp "$n")" ] || stale+=("$n")
    done
    [ ${#stale[@]} -gt 0 ] || exit 0
    if [ "$1" = --stale ]; then
        printf '%s\n' "${stale[@]}"
        exit 1
    fi
    echo "trace: the code of ${stale[*]} changed since its picture was drawn: drawing it again (its chapter's sentences about it may want the new figures)"
    "$0" --figures "$(IFS=,; echo "${stale[*]}")" ||
        echo "trace: some pictures were not drawn again here; their chapters keep the ones they have"
    exit 0
fi
if [ "${1:-}" = --figures ] && [ $# -le 2 ]; then
    figures=1
    want=${2:-$figure_names}
    for n in ${want//,/ }; do
        [[ ",$figure_names," == *",$n,"* ]] ||
            die 2 "no chapter shows a trace of '$n'; the pictures: $figure_names"
    done
    set -- "$want"
fi
[ $# -eq 1 ] || { usage; exit 2; }
if [ -z "$1" ]; then
    echo "trace: which server? make trace S=NAME[,NAME...], one of:" >&2
    traceable_names | paste -sd' ' | fold -s -w 78 | sed 's/^/  /' >&2
    exit 2
fi
case "$1" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
IFS=, read -r -a names <<<"$1"
[ ${#names[@]} -gt 0 ] || { usage; exit 2; }
for n in "${names[@]}"; do
    if ! trace_load "$n"; then
        echo "trace: no server named '$n' in common/servers.txt; the servers are:" >&2
        traceable_names | paste -sd' ' | fold -s -w 78 | sed 's/^/  /' >&2
        exit 2
    fi
    exercise_check "$n"
done
command -v strace >/dev/null || die 1 "strace is not installed (make deps)"
command -v "$python" >/dev/null || die 1 "python3 is not installed (make deps)"
[ -x "$BUILD/common/tools/echo-load" ] && [ -x "$BUILD/common/tools/echo-client" ] ||
    die 1 "build/common/tools/echo-load is not built: run make first"
for n in "${names[@]}"; do
    trace_load "$n"
    [ "$SRV_PROTO" = resp ] || continue
    command -v redis-benchmark >/dev/null ||
        die 1 "$n is traced under redis-benchmark's load, and it is not installed (make deps: package redis-tools)"
    [ -x "$BUILD/chapters/15-mini-redis/resp-cat" ] || die 1 "build/chapters/15-mini-redis/resp-cat is not built: run make first"
done
mkdir -p "$out" || die 1 "cannot create $out"
[ "$figures" = 0 ] || touch "$out/.figures-start"

status=0
for n in "${names[@]}"; do
    ( trace_one "$n" )
    st=$?
    [ "$st" = 0 ] || { [ "$status" != 0 ] && [ "$status" != 77 ] || status=$st; }
done
write_index
[ "$status" != 0 ] && [ ${#names[@]} = 1 ] || echo "trace: all pictures: ${out#"$top"/}/index.html"
if [ "$figures" = 1 ]; then # each picture drawn now replaces the chapter's
    for n in "${names[@]}"; do
        [ -f "$out/$n.svg" ] && [ "$out/$n.svg" -nt "$out/.figures-start" ] || {
            echo "trace: $n was not drawn: its chapter keeps the picture it has" >&2
            continue
        }
        server_load "$n" && ch=$SRV_CHAPTER
        mkdir -p "chapters/$ch/figures" &&
            { cat "$out/$n.svg" && echo "<!-- trace-source: $(source_stamp "$n") -->"; } >"chapters/$ch/figures/trace-$n.svg" ||
            die 1 "cannot copy $n.svg into chapters/$ch/figures"
        echo "trace: chapters/$ch/figures/trace-$n.svg"
    done
    rm -f "$out/.figures-start"
fi
exit $status
