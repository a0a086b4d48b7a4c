#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# commands.sh [-v] [--list] [--serial] [README...]: run the command blocks that the
# READMEs mark runnable, exactly as written, and compare their output with
# the text where the text shows it.
#
# A block is runnable when the line right before its opening ``` fence is
#
#     <!-- run -->                      or    <!-- run: OPTION... -->
#
# OPTIONS, separated by spaces:
#
#     timeout=N          seconds before the block is killed (default 20)
#     vary=numbers       numbers (ports, pids, times, byte counts) may differ:
#                        every run of digits compares equal, and so does
#                        the width of the spaces that align columns
#     excerpt            the text shows only some of the output lines: they
#                        must appear in this order, others may come between
#     requires=io_uring  skip (and say why) where io_uring is not allowed
#     requires=plain     skip in a sanitizer build (SAN=...), for output that
#                        sanitizers change, such as a thread's memory
#
# Two kinds of block:
#
#   - A transcript: its first line starts with "$ ". Lines starting with "$ "
#     are commands (a line ending in "\" continues on the next one); the
#     other lines are the output they print, stdout and stderr together. A
#     line that is only "..." stands for any number of lines. The commands
#     run in one shell, one after the other, as if typed: after a command
#     ending in "&" (a server started in the background) the shell waits
#     half a second, as a person typing the next one would.
#   - A script: every line is shell, run as it is; the output is not
#     compared. It fails if a command is not found or cannot be executed
#     (status 126 or 127), or if its last command fails.
#
# Each block runs in a fresh scratch folder that looks like the repository
# root (a symbolic link to every top-level entry, build/ pointing at $BUILD),
# so what it writes stays there, with HOME and TMPDIR inside it, stdin from
# /dev/null, and in a process group of its own: whatever it leaves running
# (a server started with & and never killed) is sent SIGTERM, then SIGKILL,
# when the block ends or times out.
#
# Blocks that name a fixed port (-p 9000) run one after another; the others
# run beside them, two blocks at a time in all (--serial: one at a time).
#
# Exit status: 0 when every block passed (or was skipped), 1 otherwise.
# --list prints FILE:LINE and the options of every marked block, runs nothing.
# -v shows the output of the blocks that passed too.
set -uo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$top" || exit 1
BUILD="${BUILD:-$top/build}"
export BUILD

verbose=0 list=0 jobs=2
while [ $# -gt 0 ]; do
    case "$1" in
    -v) verbose=1 ;;
    --list) list=1 ;;
    -j1 | --serial) jobs=1 ;;
    -h | --help)
        sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    -*) echo "commands.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
    shift
done
if [ $# -gt 0 ]; then
    readmes=("$@")
else
    readmes=()
    for f in chapters/[0-9][0-9]-*/README.md book/*.md; do
        [ -f "$f" ] && [ "$f" != book/README.md ] && readmes+=("$f")
    done
fi

# bats puts its own libexec folder first in PATH; a block that runs make or
# bats must find the real ones.
clean_path=""
IFS=: read -ra _dirs <<<"$PATH"
for d in "${_dirs[@]}"; do
    case "$d" in */bats-core* | */libexec/bats*) ;; *) clean_path="${clean_path:+$clean_path:}$d" ;; esac
done

# blocks FILE: print "LINE<TAB>OPTIONS" for every marked block, then its body
# lines prefixed with "|", then "END". A marker not followed by a fence is
# reported as "BAD<TAB>LINE".
blocks() {
    awk '
        state == "body" && /^```/ { print "END"; state = ""; next }
        state == "body" { print "|" $0; next }
        state == "fence" {
            if ($0 ~ /^```/) { state = "body"; next }
            print "BAD\t" mark; state = ""
        }
        # a marker shown inside another code block is an example, not a marker
        match($0, /^```+/) {
            if (!infence) infence = RLENGTH
            else if (RLENGTH >= infence && $0 ~ /^`+[ \t]*$/) infence = 0
            next
        }
        infence { next }
        /^<!-- run(: .*)? -->$/ {
            opts = $0; sub(/^<!-- run:? ?/, "", opts); sub(/ ?-->$/, "", opts)
            print NR "\t" opts; mark = NR; state = "fence"
        }
        END { if (state != "") print "BAD\t" mark }' "$1"
}

# normalise MODE: trailing blanks off; with "numbers", every number becomes
# N and every run of blanks one space.
normalise() {
    awk -v mode="$1" '{
        sub(/\r$/, ""); sub(/[ \t]+$/, "")
        if (mode == "numbers") {
            gsub(/[0-9]+([.,][0-9]+)*/, "N"); gsub(/[ \t]+/, " "); sub(/^ /, "")
        }
        print
    }'
}

# matches EXPECTED ACTUAL: the lines of ACTUAL match those of EXPECTED, where
# a line "..." in EXPECTED matches any number of lines (a glob over lines).
matches() {
    awk '
        FNR == NR { pat[np++] = $0; next }
        { act[na++] = $0 }
        END {
            i = 0; j = 0; star = -1
            while (i < na) {
                if (j < np && pat[j] != "..." && pat[j] == act[i]) { i++; j++ }
                else if (j < np && pat[j] == "...") { star = j++; mark = i }
                else if (star >= 0) { j = star + 1; i = ++mark }
                else exit 1
            }
            while (j < np && pat[j] == "...") j++
            exit j == np ? 0 : 1
        }' "$1" "$2"
}

uring_ok() {
    local probe="$BUILD/chapters/07-io_uring-basics/uring-probe" why
    [ -x "$probe" ] || { skip_reason="needs io_uring, and ${probe#"$top"/} is not built"; return 1; }
    why=$("$probe" --check 2>&1) && return 0
    skip_reason="needs io_uring: $why"
    return 1
}

# group_alive PGID: a process of that group is still running (zombies, which
# wait for their new parent to reap them, do not count).
group_alive() {
    ps -eo pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { found = 1 } END { exit !found }'
}

# scratch: a fresh folder that looks like the repository root.
scratch() {
    local d e
    d=$(mktemp -d "${TMPDIR:-/tmp}/commands.XXXXXX") || exit 1
    for e in "$top"/* "$top"/.[!.]*; do
        [ -e "$e" ] || continue
        case "${e##*/}" in build | .git | .progress) continue ;; esac
        ln -s "$e" "$d/${e##*/}"
    done
    ln -s "$BUILD" "$d/build"
    mkdir -p "$d/.home" "$d/.tmp"
    echo "$d"
}

# run_block WHERE OPTIONS BODYFILE: run one block; print what went wrong.
run_block() {
    local where="$1" opts="$2" body="$3"
    local timeout=20 vary="" excerpt="" o mode work script out status expected
    skip_reason=""
    for o in $opts; do
        case "$o" in
        timeout=[0-9]*) timeout="${o#timeout=}" ;;
        vary=numbers) vary=numbers ;;
        excerpt) excerpt=1 ;;
        requires=io_uring) uring_ok || return 77 ;;
        requires=plain)
            if [ -n "${SAN:-}" ]; then
                skip_reason="the text shows a build without sanitizers (SAN=$SAN here)"
                return 77
            fi
            ;;
        *) echo "$where: unknown option '$o' in the run marker"; return 1 ;;
        esac
    done

    work=$(scratch)
    script="$work/.block.sh" out="$work/.block.out" expected="$work/.block.expected"
    if grep -q '^\$ ' <(grep -v '^[[:space:]]*$' "$body" | head -n 1); then
        mode=transcript
        awk -v excerpt="$excerpt" -v script="$script" '
            BEGIN { if (excerpt) print "..." }
            cont { print >script; cont = /\\$/; if (!cont && bg) print "sleep 0.5" >script; next }
            /^\$ / {
                line = substr($0, 3); print line >script
                cont = line ~ /\\$/; bg = line ~ /&[ \t]*(#.*)?$/ && line !~ /&&[ \t]*$/
                if (!cont && bg) print "sleep 0.5" >script
                next
            }
            { print; if (excerpt) print "..." }' "$body" >"$expected"
    else
        mode=script
        {
            echo "trap 's=\$?; if [ \$s -eq 126 ] || [ \$s -eq 127 ]; then echo \"block: status \$s: \$BASH_COMMAND\" >&2; exit \$s; fi' ERR"
            cat "$body"
        } >"$script"
    fi

    # The block gets a process group of its own (job control on while it
    # starts), so that everything it started can be found and stopped.
    set -m
    (cd "$work" && exec env PATH="$clean_path" HOME="$work/.home" TMPDIR="$work/.tmp" \
        timeout -k 2 "$timeout" bash "$script") >"$out" 2>&1 </dev/null 3>&- 4>&- 5>&- &
    local pid=$!
    set +m
    wait "$pid"
    status=$?
    # Stop what the block left running: TERM first, a clean server exits.
    if kill -TERM -- -"$pid" 2>/dev/null; then
        for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
            group_alive "$pid" || break
            sleep 0.1
        done
        kill -KILL -- -"$pid" 2>/dev/null
    fi

    local failed=""
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        failed="timed out after $timeout s (raise it with <!-- run: timeout=N -->)"
    elif [ "$mode" = script ] && [ "$status" -ne 0 ]; then
        failed="exit status $status"
    elif [ "$mode" = transcript ]; then
        normalise "$vary" <"$expected" >"$expected.n"
        normalise "$vary" <"$out" >"$out.n"
        matches "$expected.n" "$out.n" || failed="the output differs from the text${vary:+ (numbers may vary)}${excerpt:+ (an excerpt)}"
    fi
    if [ -n "$failed" ]; then
        echo "$where: $failed"
        echo "--- the block, as run ($mode)"
        sed 's/^/    /' "$script" | grep -v "^    trap 's=" | head -n 40
        if [ "$mode" = transcript ]; then
            echo "--- expected output (normalised; ... is any number of lines)"
            sed 's/^/    /' "$expected.n" | head -n 40
            echo "--- actual output (normalised)"
            sed 's/^/    /' "$out.n" | head -n 40
        else
            echo "--- output"
            sed 's/^/    /' "$out" | tail -n 40
        fi
        rm -rf "$work"
        return 1
    fi
    [ "$verbose" = 1 ] && sed 's/^/    | /' "$out"
    rm -rf "$work"
    return 0
}

# Collect every block first: FILE:LINE, options, and the body in a file.
res=$(mktemp -d) || exit 1
trap 'rm -rf "$res"' EXIT
wheres=() optss=() problems=0
for readme in "${readmes[@]}"; do
    [ -f "$readme" ] || { echo "$readme: no such file" >&2; problems=$((problems + 1)); continue; }
    grep -q '^<!-- run' "$readme" || continue
    line="" opts="" body=""
    while IFS= read -r l; do
        case "$l" in
        BAD$'\t'*)
            echo "$readme:${l#BAD$'\t'}: run marker not followed by a \`\`\` block"
            problems=$((problems + 1))
            ;;
        END)
            wheres+=("$readme:$line")
            optss+=("$opts")
            body=""
            ;;
        \|*) printf '%s\n' "${l#|}" >>"$res/${#wheres[@]}.body" ;;
        *) line="${l%%$'\t'*}" opts="${l#*$'\t'}" ; : >"$res/${#wheres[@]}.body" ;;
        esac
    done < <(blocks "$readme")
done

if [ "$list" = 1 ]; then
    for i in "${!wheres[@]}"; do echo "${wheres[$i]}${optss[$i]:+ (${optss[$i]})}"; done
    exit $((problems > 0))
fi

# Two lanes run at the same time: blocks that name a fixed port (-p 9000,
# /dev/tcp/127.0.0.1/9000) one after another in the first, every other
# block in the second. Each block's report goes to a file, printed in order.
lane_ports=() lane_other=()
for i in "${!wheres[@]}"; do
    if [ "$jobs" -gt 1 ] && ! grep -Eq -- '-p [1-9][0-9]*|/dev/tcp/[^/]+/[1-9]' "$res/$i.body"; then
        lane_other+=("$i")
    else
        lane_ports+=("$i")
    fi
done
run_lane() {
    local i t0 rc
    for i in "$@"; do
        t0=$(date +%s%N)
        run_block "${wheres[$i]}" "${optss[$i]}" "$res/$i.body" >"$res/$i.report" 2>&1
        rc=$?
        echo "$rc $((($(date +%s%N) - t0) / 1000000)) $skip_reason" >"$res/$i.rc"
    done
}
run_lane "${lane_ports[@]}" &
lane1=$!
run_lane "${lane_other[@]}"
wait "$lane1"

passed=0 failed=0 skipped=0
for i in "${!wheres[@]}"; do
    read -r rc ms reason <"$res/$i.rc"
    cat "$res/$i.report"
    case $rc in
    0) passed=$((passed + 1)); echo "ok    ${wheres[$i]} (${ms} ms)" ;;
    77) skipped=$((skipped + 1)); echo "skip  ${wheres[$i]}: $reason" ;;
    *) failed=$((failed + 1)); echo "FAIL  ${wheres[$i]} (${ms} ms)" ;;
    esac
done
echo "command blocks: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$problems" -eq 0 ]
