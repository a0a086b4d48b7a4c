#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# charts.sh: the chapter's SVG charts, from a bench.sh CSV and a c10k.sh CSV.
#
#   chapters/14-c10k/charts.sh [-b BENCH_CSV] [-m C10K_CSV] [-o DIR]
#   chapters/14-c10k/charts.sh --check
#   make charts          (the same as no option)
#
# Defaults: the CSVs committed with the chapter (figures/bench.csv and
# figures/c10k.csv) and their folder for the SVGs. After a run of your own:
#   chapters/14-c10k/charts.sh -b build/bench/bench-DATE.csv -m build/bench/c10k-DATE.csv -o build/bench
#
# Five charts: requests.svg (requests/s of every server at every point),
# p99.svg (99th percentile latency), cpu.svg (the server's user and system
# CPU time per message at 50 connections), syscalls.svg (system calls per
# message at 50 connections) and memory.svg (memory per idle connection).
# The medians of the runs are drawn (lib.bash, c10k_medians); gnuplot
# (charts.gp) draws them with a fixed size and font and no date, so the same
# CSVs always give the same files.
#
# --check renders the committed CSVs into a scratch folder and compares the
# result with the committed SVGs: exit 0 when they are the same, 1 when one
# differs. Exit 77 when gnuplot is not installed (make deps installs
# gnuplot-nox) or is another version than the one that drew the committed
# SVGs (their layout differs between versions), 2 on bad arguments.
set -euo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$top"
source chapters/14-c10k/lib.bash

fig=chapters/14-c10k/figures
bench="$fig/bench.csv" mem="$fig/c10k.csv" out="$fig" check=0
while [ $# -gt 0 ]; do
    case "$1" in
    -b | -m | -o)
        [ $# -ge 2 ] || c10k_die 2 "$1 needs a value (-h for help)"
        case "$1" in -b) bench="$2" ;; -m) mem="$2" ;; -o) out="$2" ;; esac
        shift ;;
    --check) check=1 ;;
    -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) c10k_die 2 "unknown argument $1 (-h for help)" ;;
    esac
    shift
done
command -v gnuplot >/dev/null ||
    c10k_die 77 "gnuplot is not installed (make deps installs gnuplot-nox): no charts drawn"
for f in "$bench" "$mem"; do [ -f "$f" ] || c10k_die 2 "$f: no such file"; done
grep -q '^server,chapter,kind,conns,msg_bytes,run,' "$bench" || c10k_die 2 "$bench: not a bench.sh CSV"
grep -q '^server,chapter,kind,phase,conns,held,' "$mem" || c10k_die 2 "$mem: not a c10k.sh CSV"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
have=$(gnuplot --version | sed -n 's/^gnuplot \([0-9.]*\) patchlevel \([0-9a-z]*\).*/\1 patchlevel \2/p')
if [ "$check" = 1 ]; then
    made=$(sed -n 's/.*<desc>Produced by GNUPLOT \([^<]*[^ <]\) *<\/desc>.*/\1/p' "$fig/requests.svg" | head -n 1)
    [ "$made" = "$have" ] ||
        c10k_die 77 "the committed charts were drawn by gnuplot $made, this is $have: the layout differs between versions, so no comparison here"
    dir="$tmp/svg"
else
    dir="$out"
fi
mkdir -p "$dir"

# header KEY FILE: the value of a "# KEY: value" line.
header() { sed -n "s/^# $1: //p" "$2" | head -n 1; }
machine="$(header cores "$bench")-core $(header cpu "$bench"), $(header kernel "$bench"),"
runs=$(awk -F, '!/^#/ && $6 ~ /^[0-9]+$/ && $6 > m { m = $6 } END { print m + 0 }' "$bench")
secs=$(header method "$bench" | sed -n 's/.* of \([0-9]*\) s per point.*/\1/p')
machine+=" $(header os "$bench" | sed 's/ GNU\/Linux//; s/ (.*)//'); $runs run(s) of ${secs:-?} s per point, $(header date "$bench" | cut -dT -f1)"
machine=${machine//\'/}
memline="$(header cores "$mem")-core $(header cpu "$mem"), $(header kernel "$mem"), $(header date "$mem" | cut -dT -f1)"
memline=${memline//\'/}

# snippet: tables
# The medians, one table per chart: a row per server, a column per point
# ("50 conns, 128 B"), in the order of the CSV; ? where nothing was measured.
c10k_medians "$bench" >"$tmp/medians"
awk -F, -v dir="$dir" '
    function label(c, b) { return "\"" c (c == 1 ? " conn, " : " conns, ") (b >= 1024 ? b / 1024 " KiB" : b " B") "\"" }
    {
        if (!($1 in seen)) { seen[$1] = 1; servers[++ns] = $1 }
        p = $4 SUBSEP $5
        if (!(p in pseen)) { pseen[p] = 1; points[++np] = p; plabel[np] = label($4, $5) }
        rps[$1, p] = $7; p99[$1, p] = $9
        if ($4 == 50 && $5 == 128) { sys[$1] = $11; usr[$1] = $10; calls[$1] = $12 }
    }
    END {
        head = "server"
        for (j = 1; j <= np; j++) head = head " " plabel[j]
        print head > (dir "/requests.dat"); print head > (dir "/p99.dat")
        print "server system user" > (dir "/cpu.dat")
        print "server calls" > (dir "/syscalls.dat")
        for (i = 1; i <= ns; i++) {
            s = servers[i]; r = "\"" s "\""; q = r
            for (j = 1; j <= np; j++) {
                k = s SUBSEP points[j]
                r = r " " ((k in rps) ? rps[k] : "?"); q = q " " ((k in p99) ? p99[k] : "?")
            }
            print r > (dir "/requests.dat"); print q > (dir "/p99.dat")
            print "\"" s "\" " (sys[s] != "" ? sys[s] : "?") " " (usr[s] != "" ? usr[s] : "?") > (dir "/cpu.dat")
            print "\"" s "\" " (calls[s] != "" ? calls[s] : "?") > (dir "/syscalls.dat")
        }
        print np > (dir "/npoints")
    }' "$tmp/medians"
awk -F, '!/^#/ && $1 != "server" && $4 == "hold" {
        ks = $3 == "threads" && $6 > 0 ? int($15 * 1024 / $6) : "?"
        printf "\"%s\" %s %s\n", $1, $9 != "" ? $9 : "?", ks
    }
    BEGIN { print "server rss kernel_stacks" }' "$mem" >"$dir/memory.dat"
conns=$(awk -F, '!/^#/ && $4 == "hold" { print $5; exit }' "$mem")
# end snippet

at50=$(awk -F, '$4 == 50 && $5 == 128 { n++ } END { print (n > 0) }' "$tmp/medians")
gnuplot -e "dir='$dir'; npoints=$(cat "$dir/npoints"); machine='$machine'; memline='$memline'" \
    -e "nservers=$(($(wc -l <"$dir/requests.dat") - 1)); nmem=$(($(wc -l <"$dir/memory.dat") - 1))" \
    -e "conns='$conns'; at50=$at50" \
    chapters/14-c10k/charts.gp
rm -f "$dir"/*.dat "$dir/npoints"
charts="requests p99 cpu syscalls memory"
[ "$at50" = 1 ] || {
    charts="requests p99 memory"
    echo "(no point at 50 connections and 128 bytes in $bench: no cpu.svg, no syscalls.svg)"
}

if [ "$check" = 0 ]; then
    for c in $charts; do echo "wrote ${dir#"$top"/}/$c.svg"; done
    exit 0
fi
bad=0
for c in $charts; do
    if ! cmp -s "$dir/$c.svg" "$fig/$c.svg"; then
        echo "$fig/$c.svg differs from what charts.sh draws from $fig/bench.csv and c10k.csv: run chapters/14-c10k/charts.sh and commit it" >&2
        bad=1
    fi
done
[ "$bad" = 0 ] && echo "charts: the $(wc -w <<<"$charts") committed SVGs are what the committed CSVs give"
exit $bad
