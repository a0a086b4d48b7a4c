#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench-check.sh: has a server become slower, compared with the others?
#
#   chapters/14-c10k/bench-check.sh [-m PERCENT] [-b BASELINE] [CSV]
#   make bench-check
#
# Absolute requests/s say more about the machine and what else it was doing
# than about the code: the same server varies by a factor of two between
# runs on a shared 2-core VM. So this compares ratios. At each point
# (connections, message size), each server's median requests/s is divided
# by echo-epoll-lt's median in the same run (chapter 04's server, the
# reference), in CSV and in BASELINE. CSV is by default the newest
# build/bench/bench-*.csv, which `make bench` writes ($BENCH_OUT instead of
# build/bench); BASELINE is by default chapters/14-c10k/baseline.csv, a run
# committed with the chapter. A ratio that fell by more than PERCENT
# (default 50; or $BENCH_MARGIN) of its baseline value is a regression.
# Why 50: in the three quick runs of the baseline, 188 of 192 single-run
# ratios stayed within 35% of the median of the three; one fell 66% (a
# one-second run that met a stall of the machine). Medians of three runs
# ride that out, and a server that became twice as slow as the others is
# caught. A lone run can trip it: when a server is named, add a run with
# bench.sh -A and check again. With more runs, try -m 35.
#
# Prints one line per server and point found in both; points only in one
# of them (a server left out where io_uring is not allowed, say) are
# listed, not compared. Exit status: 0 no regression, 1 at least one,
# 2 nothing to compare (no CSV yet: run make bench first; a file that is
# not a bench CSV; no echo-epoll-lt to divide by).
set -euo pipefail

# lib.bash from this script's own folder; the repository is the first
# folder above it with the course's build rules (the script also runs from
# a copy: the exercise 14-c10k/medians builds one beside its lib.bash).
here="$(cd "$(dirname "$0")" && pwd)"
top="$here"
while [ ! -f "$top/common/mk/config.mk" ]; do
    [ "$top" != / ] || { echo "bench-check.sh: $here is not inside the course's repository" >&2; exit 2; }
    top="$(dirname "$top")"
done
cd "$top"
source "$here/lib.bash"

margin="${BENCH_MARGIN:-50}" base=chapters/14-c10k/baseline.csv csv=""
while [ $# -gt 0 ]; do
    case "$1" in
    -m | -b)
        [ $# -ge 2 ] || c10k_die 2 "$1 needs a value (-h for help)"
        case "$1" in -m) margin="$2" ;; -b) base="$2" ;; esac
        shift ;;
    -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) c10k_die 2 "unknown option $1 (-h for help)" ;;
    *) [ -z "$csv" ] || c10k_die 2 "one CSV at most, not '$csv' and '$1'"; csv="$1" ;;
    esac
    shift
done
[[ "$margin" =~ ^[1-9][0-9]?$ ]] || c10k_die 2 "-m takes a percentage from 1 to 99, not '$margin'"
if [ -z "$csv" ]; then
    # shellcheck disable=SC2012 # names made by bench.sh: bench-DATE.csv
    csv=$(ls -t "$C10K_OUT"/bench-*.csv 2>/dev/null | head -n 1 || true)
    [ -n "$csv" ] || c10k_die 2 "no benchmark CSV in $C10K_OUT/ yet: run make bench first"
fi
for f in "$csv" "$base"; do
    [ -f "$f" ] || c10k_die 2 "$f: no such file"
    grep -q '^server,chapter,kind,conns,msg_bytes,run,' "$f" ||
        c10k_die 2 "$f: not a CSV written by bench.sh (no server,chapter,kind,... header)"
done

# snippet: ratios
# ratios FILE: server,conns,msg_bytes,ratio for every point where the
# reference was measured; exits 2 when it never was.
ratios() {
    c10k_medians "$1" | awk -F, -v OFS=, -v file="$1" '
        { key[NR] = $1 OFS $4 OFS $5; rps[NR] = $7
          if ($1 == "echo-epoll-lt") ref[$4 OFS $5] = $7 }
        END {
            for (i = 1; i <= NR; i++) {
                split(key[i], k, OFS)
                p = k[2] OFS k[3]
                if ((p in ref) && ref[p] > 0) { print key[i], rps[i] / ref[p]; n++ }
            }
            if (!n) { print file ": echo-epoll-lt, the reference, is not in it" > "/dev/stderr"; exit 2 }
        }'
}
# end snippet

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ratios "$base" >"$tmp/base" || exit 2
ratios "$csv" >"$tmp/now" || exit 2

echo "bench-check: requests/s divided by echo-epoll-lt's at the same point (medians of the runs)"
echo "  now:      ${csv#"$top"/} ($(sed -n 's/^# date: //p' "$csv"))"
echo "  baseline: ${base#"$top"/} ($(sed -n 's/^# date: //p' "$base"))"
echo "  a ratio that fell by more than $margin% of its baseline is a regression"
echo
awk -F, -v margin="$margin" '
    NR == FNR { base[$1 FS $2 FS $3] = $4; border[++nb] = $1 FS $2 FS $3; next }
    { now[$1 FS $2 FS $3] = $4; order[++nn] = $1 FS $2 FS $3 }
    END {
        printf "%-26s %5s %5s %9s %9s %8s\n", "server", "conns", "bytes", "baseline", "now", "change"
        for (i = 1; i <= nn; i++) {
            k = order[i]
            split(k, f, FS)
            if (!(k in base)) { only = only "\n  " f[1] " at " f[2] " x " f[3] " B: not in the baseline"; continue }
            change = (now[k] / base[k] - 1) * 100
            verdict = ""
            if (f[1] == "echo-epoll-lt") verdict = "  (the reference)"
            else {
                compared++
                if (change < -margin) { verdict = "  FELL"; fell++ }
            }
            printf "%-26s %5s %5s %9.3f %9.3f %+7.1f%%%s\n", f[1], f[2], f[3], base[k], now[k], change, verdict
        }
        for (i = 1; i <= nb; i++)
            if (!(border[i] in now)) { split(border[i], f, FS); only = only "\n  " f[1] " at " f[2] " x " f[3] " B: not in this run" }
        if (only != "") printf "\nnot compared:%s\n", only
        printf "\n%d ratios compared, %d fell by more than %d%%\n", compared, fell, margin
        exit fell > 0
    }' "$tmp/base" "$tmp/now"
