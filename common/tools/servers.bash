# SPDX-License-Identifier: MIT
# common/tools/servers.bash: read common/servers.txt, the one table of the
# course's echo servers. The shared echo suite (tests/suite/echo.cases),
# every bench.sh, chapter 14's runs and `make trace` all read it here.
#
#   source common/tools/servers.bash
#   server_names                 # every NAME, in the table's order
#   server_load echo-aio-uring   # SRV_* below; status 1 for an unknown NAME
#   server_check                 # the table's mistakes, "line N: ...", status 1
#
# After server_load NAME:
#   SRV_NAME SRV_CHAPTER SRV_KIND   the first three columns
#   SRV_ENV     array of VAR=VALUE words the server runs with
#   SRV_PROG    chapter:PROG or exercise:EX/PROG
#   SRV_ARGS    array: its arguments in the suite
#   SRV_SKIPS   "CASE: reason" lines;  SRV_SETUP  setup lines;  SRV_LOADS  load names
#   SRV_BENCH   1 when the benchmarks run it (a "bench:" line), else 0
#   SRV_BENCH_ARGS  array: its arguments in the benchmarks
#   SRV_STYLE   threads (KIND blocking) or events: how chapter 14 groups it

# shellcheck disable=SC2034 # the SRV_* variables are for the caller
SERVERS_TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SERVERS_TABLE="${SERVERS_TABLE:-$SERVERS_TOP/common/servers.txt}"
SERVERS_KINDS=" blocking readiness edge uring win32 "

# servers__rows: the table as "N<TAB>line" without comments and blank lines
servers__rows() {
    awk '!/^[[:space:]]*(#|$)/ { print NR "\t" $0 }' "$SERVERS_TABLE"
}

server_names() {
    servers__rows | awk -F'\t' '$2 !~ /^[[:space:]]/ { split($2, w, " "); print w[1] }'
}

server_load() {
    local n line found=0 words w
    SRV_NAME="" SRV_CHAPTER="" SRV_KIND="" SRV_PROG="" SRV_SKIPS="" SRV_SETUP="" SRV_LOADS=""
    SRV_ENV=() SRV_ARGS=() SRV_BENCH=0 SRV_BENCH_ARGS=()
    while IFS=$'\t' read -r n line; do
        if [[ "$line" != [[:space:]]* ]]; then
            [ "$found" = 1 ] && break
            read -ra words <<<"$line"
            [ "${words[0]}" = "$1" ] || continue
            found=1 SRV_NAME="${words[0]}" SRV_CHAPTER="${words[1]:-}" SRV_KIND="${words[2]:-}"
            words=("${words[@]:3}")
            while [ ${#words[@]} -gt 0 ] && [[ "${words[0]}" =~ ^[A-Z_]+= ]]; do
                SRV_ENV+=("${words[0]}") words=("${words[@]:1}")
            done
            SRV_PROG="${words[0]:-}" SRV_ARGS=("${words[@]:1}")
            continue
        fi
        [ "$found" = 1 ] || continue
        line="${line#"${line%%[![:space:]]*}"}"
        case "$line" in
        'skip '*) SRV_SKIPS+="${line#skip }"$'\n' ;;
        'setup: '*) SRV_SETUP+="${line#setup: }"$'\n' ;;
        'load: '*) SRV_LOADS+="${line#load: } " ;;
        bench:*) SRV_BENCH=1 && read -ra SRV_BENCH_ARGS <<<"${line#bench:}" ;;
        esac
    done < <(servers__rows)
    SRV_STYLE=events
    [ "$SRV_KIND" != blocking ] || SRV_STYLE=threads
    [ "$found" = 1 ]
}

# server_check [CASES]: every row well formed; CASES (space-separated) are
# the suite's case names a skip line may name. Prints each mistake.
server_check() {
    local cases=" ${1:-} " n line words w bad=0 seen=" " name c
    while IFS=$'\t' read -r n line; do
        if [[ "$line" == [[:space:]]* ]]; then
            line="${line#"${line%%[![:space:]]*}"}"
            case "$line" in
            'skip '*:\ ?*)
                c="${line#skip }" c="${c%%:*}"
                [ "$cases" = "  " ] || [[ "$cases" == *" $c "* ]] ||
                    { echo "line $n: skip $c: no such case (cases:$cases)"; bad=1; } ;;
            'setup: '?* | 'load: '?* | bench:*) ;;
            *) echo "line $n: expected 'skip CASE: REASON', 'setup: COMMAND', 'load: FILE' or 'bench: [ARGS]', got: $line"; bad=1 ;;
            esac
            [ "$seen" != " " ] || { echo "line $n: an indented line before any server"; bad=1; }
            continue
        fi
        read -ra words <<<"$line"
        name="${words[0]}"
        [[ "$seen" != *" $name "* ]] || { echo "line $n: a second server named $name"; bad=1; }
        seen+="$name "
        [ -d "$SERVERS_TOP/tests/${words[1]:-?}" ] ||
            { echo "line $n: no folder tests/${words[1]:-}"; bad=1; }
        [[ "$SERVERS_KINDS" == *" ${words[2]:-?} "* ]] ||
            { echo "line $n: unknown kind '${words[2]:-}' ($SERVERS_KINDS)"; bad=1; }
        for w in "${words[@]:3}"; do
            [[ "$w" =~ ^[A-Z_]+= ]] && continue
            [[ "$w" =~ ^(chapter:[^/]|exercise:[^/]+/.) ]] ||
                { echo "line $n: PROGRAM must be chapter:PROG or exercise:EX/PROG, got: $w"; bad=1; }
            break
        done
    done < <(servers__rows)
    return "$bad"
}
