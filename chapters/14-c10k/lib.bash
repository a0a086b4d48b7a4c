# SPDX-License-Identifier: MIT
# chapters/14-c10k/lib.bash: what bench.sh, c10k.sh and bench-check.sh share:
# the servers (every "bench:" server of the course's one table,
# common/servers.txt), building them, leaving out the ones this machine
# cannot run, and the machine's description for the CSVs.
#
#   source chapters/14-c10k/lib.bash     (after cd to the repository root)
#   c10k_load_servers "echo-poll,echo-aio"   # "" = all; sets C10K_* arrays
#   c10k_build                               # make what they need
#   c10k_drop_unavailable                    # io_uring, not built: say why once
#   c10k_bench_arrays                        # BENCH_NAMES, BENCH_CMDS for bench-lib
#
# The build folder is $BUILD when it is set (a sanitizer build, say), else
# build/. Only build/ is made here: a sanitizer build is made by
# `make SAN=...` first, and a server missing from it is left out.

# shellcheck source=common/tools/servers.bash
. common/tools/servers.bash # (the scripts cd to the repository first)
C10K_B="${BUILD:-$PWD/build}"
C10K_B="${C10K_B%/}"

# c10k_die STATUS MESSAGE: the script's name, the message, exit STATUS.
c10k_die() {
    echo "$(basename "$0"): $2" >&2
    exit "$1"
}

# c10k_table: the benchmarked servers as name|ch|kind|needs|command: kind
# threads or events, needs uring or -, and the command from build/ with
# the environment that picks a backend first.
c10k_table() {
    local name
    for name in $(server_names); do
        server_load "$name" && [ "$SRV_BENCH" = 1 ] && [[ "$SRV_PROG" == chapter:* ]] || continue
        printf '%s|%s|%s|%s|%s\n' "$name" "${SRV_CHAPTER%%-*}" "$SRV_STYLE" \
            "$([ "$SRV_KIND" = uring ] && echo uring || echo -)" \
            "${SRV_ENV[*]}${SRV_ENV[*]:+ }chapters/$SRV_CHAPTER/${SRV_PROG#chapter:}${SRV_BENCH_ARGS[*]:+ ${SRV_BENCH_ARGS[*]}}"
    done
}

# c10k_name_matches NAME FILTER: FILTER is a comma-separated list; an entry
# picks the server of that name or, when no server has that name, every
# server whose name starts with it and a dash: "echo-aio" picks echo-aio on
# every backend, while "echo-uring" picks only echo-uring.
c10k_name_matches() {
    local want w
    [ -z "$2" ] && return 0
    IFS=, read -ra want <<<"$2"
    for w in "${want[@]}"; do
        [ "$w" = "$1" ] && return 0
        [[ "$1" == "$w"-* ]] && ! server_load "$w" && return 0
    done
    return 1
}

# c10k_load_servers FILTER: the selected rows into C10K_NAME, C10K_CH,
# C10K_KIND, C10K_NEEDS, C10K_CMD (the command line, env VAR=... first when
# the table names a backend) and C10K_BIN (the program's path). A FILTER
# entry that picks no server is an error (exit 2) that lists the names.
c10k_load_servers() {
    local filter="$1" name ch kind needs cmd envs w found
    C10K_NAME=() C10K_CH=() C10K_KIND=() C10K_NEEDS=() C10K_CMD=() C10K_BIN=()
    while IFS='|' read -r name ch kind needs cmd; do
        c10k_name_matches "$name" "$filter" || continue
        envs=""
        while [[ "$cmd" =~ ^([A-Z_]+=[^ ]*)\ +(.*)$ ]]; do
            envs+="${BASH_REMATCH[1]} " cmd="${BASH_REMATCH[2]}"
        done
        C10K_NAME+=("$name") C10K_CH+=("$ch") C10K_KIND+=("$kind") C10K_NEEDS+=("$needs")
        C10K_BIN+=("$C10K_B/${cmd%% *}")
        C10K_CMD+=("${envs:+env $envs}$C10K_B/$cmd")
    done < <(c10k_table)
    if [ -n "$filter" ]; then
        IFS=, read -ra w <<<"$filter"
        for f in "${w[@]}"; do
            found=0
            for name in "${C10K_NAME[@]}"; do
                c10k_name_matches "$name" "$f" && found=1
            done
            [ "$found" = 1 ] || c10k_die 2 "-s: no server called '$f'; the servers are:
$(c10k_table | cut -d'|' -f1 | sed 's/^/  /')"
        done
    fi
}

# c10k_build: make the folders the selected servers come from (and
# chapter 08's, whose echo-uring -K says whether io_uring works here); in
# another build folder, nothing.
c10k_build() {
    local dirs=() d i
    [ "$C10K_B" = "$PWD/build" ] || return 0 # what is missing is said later
    for i in "${!C10K_BIN[@]}"; do
        d=$(dirname "${C10K_BIN[$i]#"$C10K_B"/}")
        [ "${C10K_NEEDS[$i]}" = uring ] && dirs+=(chapters/08-io_uring-echo)
        dirs+=("$d")
    done
    make -s -C common >/dev/null || c10k_die 1 "make -C common failed"
    for d in $(printf '%s\n' "${dirs[@]}" | sort -u); do
        # BUILD and SAN from a `make SAN=...` above us would build into the wrong place
        env -u BUILD -u SAN make -s -C "$d" QUIET_WHERE=1 >/dev/null || c10k_die 1 "make -C $d failed"
    done
}

# c10k_drop_unavailable: leave out the io_uring servers where io_uring is
# not allowed (said once), and any server that was not built here (echo-uv
# without libuv1-dev, the C# servers without the .NET SDK).
c10k_drop_unavailable() {
    local i keep=() why uring=unknown
    for i in "${!C10K_NAME[@]}"; do
        case "${C10K_NEEDS[$i]}" in
        uring)
            if [ "$uring" = unknown ]; then
                if why=$("$C10K_B/chapters/08-io_uring-echo/echo-uring" -K 2>&1); then
                    uring=yes
                else
                    uring=no
                    echo "(io_uring servers left out: ${why:-echo-uring -K failed})"
                fi
            fi
            [ "$uring" = yes ] || continue
            ;;
        esac
        if [ ! -x "${C10K_BIN[$i]}" ]; then # echo-uv without libuv1-dev, a C# server without the SDK
            echo "(${C10K_NAME[$i]} left out: ${C10K_BIN[$i]#"$C10K_B"/} is not built here; make doctor says what is missing)"
            continue
        fi
        keep+=("$i")
    done
    local names=() chs=() kinds=() needs=() cmds=() bins=()
    for i in ${keep[@]+"${keep[@]}"}; do
        names+=("${C10K_NAME[$i]}") chs+=("${C10K_CH[$i]}") kinds+=("${C10K_KIND[$i]}")
        needs+=("${C10K_NEEDS[$i]}") cmds+=("${C10K_CMD[$i]}") bins+=("${C10K_BIN[$i]}")
    done
    C10K_NAME=(${names[@]+"${names[@]}"}) C10K_CH=(${chs[@]+"${chs[@]}"})
    C10K_KIND=(${kinds[@]+"${kinds[@]}"}) C10K_NEEDS=(${needs[@]+"${needs[@]}"})
    C10K_CMD=(${cmds[@]+"${cmds[@]}"}) C10K_BIN=(${bins[@]+"${bins[@]}"})
    [ ${#C10K_NAME[@]} -gt 0 ] || c10k_die 1 "no server left to measure"
}

# c10k_bench_arrays: the selected servers as common/tools/bench-lib.bash
# wants them.
# shellcheck disable=SC2034 # bench-lib reads them
c10k_bench_arrays() {
    BENCH_NAMES=("${C10K_NAME[@]}")
    BENCH_CMDS=("${C10K_CMD[@]}")
}

# c10k_machine: the header of a CSV, one "# key: value" line each: what
# a figure was measured on, so that a CSV read later says so itself.
c10k_machine() {
    local cpu
    cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
    echo "# kernel: $(uname -sr)"
    echo "# cpu: ${cpu:-unknown}"
    echo "# cores: $(nproc)"
    echo "# memory: $(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
    echo "# os: $(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown}")"
    echo "# liburing: $(pkg-config --modversion liburing 2>/dev/null || echo none)"
    echo "# libuv: $(pkg-config --modversion libuv 2>/dev/null || echo none)"
    echo "# gcc: $(gcc -dumpfullversion 2>/dev/null || echo none)"
    echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
}

# Where the CSVs go: build/bench/, or $BENCH_OUT.
C10K_OUT="${BENCH_OUT:-build/bench}"

# c10k_csv_path KIND: a new file name there (KIND-DATE.csv).
c10k_csv_path() {
    mkdir -p "$C10K_OUT" || c10k_die 1 "cannot create $C10K_OUT"
    echo "$C10K_OUT/$1-$(date +%Y%m%d-%H%M%S).csv"
}

# c10k_medians CSV: one line per server and point of a bench CSV, in the
# order they first appear: server,chapter,kind,conns,msg_bytes,runs and the
# medians of req_per_s, p50_us, p99_us, user_us_per_msg, sys_us_per_msg
# and syscalls_per_msg (measured once per invocation of bench.sh). With an
# even number of values the lower of the two middle ones, as bench_median.
c10k_medians() {
    awk -F, -v OFS=, '
        function median(list,   n, v, i, j, t) {
            n = split(list, v, " ")
            for (i = 2; i <= n; i++)
                for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            return n ? v[int((n + 1) / 2)] : ""
        }
        /^#/ || $1 == "server" { next }
        {
            k = $1 SUBSEP $4 SUBSEP $5
            if (!(k in runs)) { order[++nk] = k; head[k] = $1 OFS $2 OFS $3 OFS $4 OFS $5 }
            runs[k]++
            rps[k] = rps[k] " " $10; p50[k] = p50[k] " " $11; p99[k] = p99[k] " " $12
            if ($14 != "") { usr[k] = usr[k] " " $14; sys[k] = sys[k] " " $15 }
            if ($16 != "") calls[k] = calls[k] " " $16
        }
        END {
            for (i = 1; i <= nk; i++) {
                k = order[i]
                print head[k], runs[k], median(rps[k]), median(p50[k]), median(p99[k]),
                      median(usr[k]), median(sys[k]), median(calls[k])
            }
        }' "$1"
}

# c10k_targets CSV: the chapter's three targets, as far as a bench CSV can
# tell them (memory per connection is c10k.sh's): the fewest system calls
# per message of an io_uring server at 50 connections (at most 0.1), and
# the best course server against the libuv reference, echo-uv, at 50 and
# 500 connections with 128-byte messages (it should do more requests/s).
c10k_targets() {
    c10k_medians "$1" | awk -F, '
        $1 ~ /uring/ && $4 == 50 && $5 == 128 && $12 != "" && (best == "" || $12 + 0 < best + 0) {
            best = $12; bestname = $1
        }
        $5 == 128 && ($4 == 50 || $4 == 500) {
            if ($1 == "echo-uv") uv[$4] = $7
            else if (!($4 in top) || $7 + 0 > top[$4] + 0) { top[$4] = $7; topname[$4] = $1 }
        }
        END {
            print "targets (medians of the runs in this CSV; the README says how far to trust them):"
            if (best == "")
                print "  io_uring system calls per message at 50 connections: not measured"
            else
                printf "  fewest system calls per message of an io_uring server, 50 connections: %s %s (target <= 0.1: %s)\n",
                    bestname, best, (best + 0 <= 0.1) ? "met" : "missed"
            for (c = 50; c <= 500; c += 450) {
                if (!(c in top) || !(c in uv) || uv[c] + 0 == 0) {
                    printf "  best course server against echo-uv at %d connections: not measured\n", c
                    continue
                }
                verdict = (top[c] + 0 > uv[c] + 0) ? "met" : "missed"
                printf "  best course server at %d connections: %s %d req/s, echo-uv %d (%+.1f%%: %s)\n", c,
                    topname[c], top[c], uv[c], (top[c] / uv[c] - 1) * 100, verdict
            }
        }'
}
