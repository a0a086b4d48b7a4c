# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# exercise-lib.sh: what ex.sh, hint.sh, progress.sh, watch.sh, reset.sh and
# solution.sh share (sourced, never run).
#
#   exercise_list                 every exercise, NN-slug/NAME, in course order
#                                 (chapter, then the order: of its exercise.txt)
#   exercise_meta EX KEY          a value of solutions/EX/exercise.txt (kind, level, ...)
#   exercise_program EX           the folder of exercises/ you edit for EX: EX itself, or for
#                                 a stage of the capstone the program every stage grows
#   exercise_resolve ARG TARGET   the exercise ARG names, on stdout; or a message
#                                 with the closest names on stderr, and exit 2
#   exercise_fresh DIR [EX...]    generate the shipped copy of EX (every one by
#                                 default) into DIR/NN-slug/NAME
#   exercise_fresh_all            a folder with every exercise as shipped (kept
#                                 in .progress/fresh/ while its sources stay the same)
#   exercise_untouched FRESH MINE is MINE the same as the fresh copy FRESH?
#   exercise_needs LOG            what a failed build lacked that no edit provides ("Linux")
#   exercise_test EX IMPL LOG     build and test, quietly; status says how it went
#   exercise_status EX FRESHDIR   done / failing ... / not started, for make progress
#   exercise_next FRESHDIR [AFTER]  the first unfinished exercise, without running tests
#   exercise_remember EX WORD FP [DETAIL]  keep the outcome of a test run (.progress/results/)
#
# The learner's state lives in .progress/ (git-ignored): hints/ (how many
# hints of each exercise were shown), results/ (the last test outcome of each
# exercise, with a fingerprint of the files it depends on, so that make
# progress tests again only what changed), reset/ (copies make reset kept),
# fresh/ (every exercise as shipped, to tell "not started" without a build).

top="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
progress_dir="$top/.progress"

# Files an editor leaves beside the one you edit (swap, backup, lock and
# temporary files): never part of an exercise, never a reason to re-run.
# The same as globs (for diff -x) and as an extended regex matching the end
# of a path (for inotifywait --exclude and grep).
exercise_droppings=('*.sw?' '*~' '.#*' '#*#' 4913 '*.tmp' '*.bak' '*.orig' '*.rej' '*.kate-swp' .DS_Store)
# shellcheck disable=SC2034 # read by watch.sh, which sources this file
exercise_droppings_ere='(^|/)([^/]*\.sw.|[^/]*~|\.#[^/]*|#[^/]*#|4913|[^/]*\.tmp|[^/]*\.bak|[^/]*\.orig|[^/]*\.rej|[^/]*\.kate-swp|\.DS_Store)$'
exercise_dropping() { # exercise_dropping PATH: is it one?
    local p
    for p in "${exercise_droppings[@]}"; do
        # shellcheck disable=SC2053 # a pattern, on purpose
        [[ "${1##*/}" == $p ]] && return 0
    done
    return 1
}

# exercise_diff FRESH MINE: diff -rq of two copies, editor droppings left out.
exercise_diff() {
    local p x=()
    for p in "${exercise_droppings[@]}"; do x+=(-x "$p"); done
    LC_ALL=C diff -rq "${x[@]}" "$1" "$2"
}

# exercise_files DIR: the files of an exercise folder, relative, sorted,
# droppings left out.
exercise_files() {
    local f
    [ -d "$1" ] || return 0
    while IFS= read -r f; do
        exercise_dropping "$f" || printf '%s\n' "$f"
    done < <(cd "$1" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)
}

# Every exercise, in course order, as NN-slug/NAME: chapters in order, and in
# each chapter by the order: line of its exercise.txt (then by name; one
# without exercise.txt comes last). A program folder (kind: program, the
# capstone's skeleton) is not an exercise: its stages are.
exercise_list() {
    local d
    for d in "$top"/solutions/[0-9][0-9]-*/*/; do
        [ -f "$d/Makefile" ] && d="${d%/}" && echo "${d#"$top"/solutions/}"
    done | awk -v dir="$top/solutions" '
        {
            ex = $0; order = 999999; program = 0; f = dir "/" ex "/exercise.txt"
            while ((getline line < f) > 0) {
                if (line ~ /^order:[ \t]*[0-9]/) { sub(/^order:[ \t]*/, "", line); order = line + 0 }
                if (line ~ /^kind:[ \t]*program[ \t]*$/) program = 1
            }
            close(f)
            if (program) next
            split(ex, p, "/")
            printf "%s\t%06d\t%s\n", p[1], order, ex
        }' | LC_ALL=C sort -t"$(printf '\t')" -k1,1 -k2,2n -k3,3 | cut -f3
}

# exercise_meta EX KEY: the value of "KEY: value" in solutions/EX/exercise.txt.
exercise_meta() {
    awk -v k="$2:" 'index($0, k) == 1 { v = substr($0, length(k) + 1); sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v); print v; exit }' \
        "$top/solutions/$1/exercise.txt" 2>/dev/null
}

# exercise_program EX: the folder (NN-slug/NAME, under exercises/) that you
# edit for EX. A stage of the capstone (kind: stage) has no code of its own:
# its tests run the one program every stage grows, named on its program: line.
exercise_program() {
    local p
    p="$(exercise_meta "$1" program)"
    if [ -n "$p" ]; then echo "${1%%/*}/$p"; else echo "$1"; fi
}

# exercise_resolve ARG TARGET: print the exercise ARG means, NN-slug/NAME.
#
# Accepted besides the exact name: a path to it (exercises/04-epoll/epollout/,
# solutions/...), the chapter's number instead of its name (04/epollout), and
# the bare name (epollout) when exactly one exercise has it. Anything else
# exits 2, after a message on stderr with the closest names (by edit distance
# and by shared words), or the whole list when nothing is close. TARGET is
# the make target, for the messages.
exercise_resolve() {
    local arg="$1" target="$2" want list
    list="$(exercise_list)"
    if [ -z "$arg" ]; then
        echo "usage: make $target EX=NN-chapter/name   (one of:)" >&2
        sed 's/^/  /' <<<"$list" >&2
        exit 2
    fi
    want="$(tr 'A-Z' 'a-z' <<<"$arg")"
    want="${want#./}"
    want="${want#exercises/}"
    want="${want#solutions/}"
    want="${want%/}"
    local found
    found="$(awk -v w="$want" '
        { ex = $0; ch = ex; sub(/\/.*/, "", ch); name = ex; sub(/^[^\/]*\//, "", name); num = substr(ch, 1, 2) }
        ex == w { exact = ex }
        w == num "/" name || w == name { hit[++n] = ex }
        END { if (exact != "") print exact; else if (n == 1) print hit[1] }' <<<"$list")"
    if [ -n "$found" ]; then
        printf '%s\n' "$found"
        return 0
    fi

    echo "make $target: no exercise named '$arg'." >&2
    local close
    close="$(awk -v w="$want" '
        function min3(a, b, c) { return a < b ? (a < c ? a : c) : (b < c ? b : c) }
        function lev(s, t,    i, j, m, n, d, cost) {
            m = length(s); n = length(t)
            for (i = 0; i <= m; i++) d[i, 0] = i
            for (j = 0; j <= n; j++) d[0, j] = j
            for (i = 1; i <= m; i++)
                for (j = 1; j <= n; j++) {
                    cost = substr(s, i, 1) == substr(t, j, 1) ? 0 : 1
                    d[i, j] = min3(d[i-1, j] + 1, d[i, j-1] + 1, d[i-1, j-1] + cost)
                }
            return d[m, n]
        }
        BEGIN { nw = split(w, words, /[^a-z0-9]+/) }
        {
            ex = $0; ch = ex; sub(/\/.*/, "", ch); name = ex; sub(/^[^\/]*\//, "", name)
            # the chapter alone (04, 04-epoll): every exercise of it
            if (w == ch || w == substr(ch, 1, 2)) { whole[++nc] = ex; next }
            d = lev(w, ex); dn = lev(w, name); if (dn < d) d = dn
            wn = w; sub(/^[^\/]*\//, "", wn); dn = lev(wn, name); if (dn < d) d = dn
            shared = 0
            for (i = 1; i <= nw; i++)
                if (length(words[i]) >= 3 && index(ex, words[i])) shared++
            if (index(ex, w) || index(w, name)) shared++
            limit = int(length(wn) / 3); if (limit < 2) limit = 2
            # a typo (close by edit distance) first, then the most shared
            # words, then the distance; only the best class is shown
            if (shared > 0 || d <= limit) near[++nn] = (d <= limit ? 0 : 1) "\t" (0 - shared) "\t" d "\t" ex
        }
        END {
            if (nc) for (i = 1; i <= nc; i++) print "0\t0\t" i "\t" whole[i]
            else for (i = 1; i <= nn; i++) print near[i]
        }' <<<"$list" | LC_ALL=C sort -t"$(printf '\t')" -k1,1n -k2,2n -k3,3n |
        awk -F'\t' 'NR == 1 { best = $1 FS $2 } $1 FS $2 == best' | head -n 8 | cut -f4)"
    if [ -n "$close" ]; then
        if [ "$(wc -l <<<"$close")" -eq 1 ]; then
            echo "Did you mean $close?   make $target EX=$close" >&2
        else
            echo "Did you mean one of these?" >&2
            sed 's/^/  /' <<<"$close" >&2
        fi
        echo "(make progress lists every exercise.)" >&2
    else
        echo "The exercises are:" >&2
        sed 's/^/  /' <<<"$list" >&2
    fi
    exit 2
}

# exercise_fresh DIR [EX...]: generate the shipped copy of each EX (of every
# exercise without EX) into DIR/NN-slug/NAME, as make exercises would.
exercise_fresh() {
    local dir="$1"
    shift
    "$top/common/mk/gen-exercises.sh" "$top/solutions" "$dir" "$@" >/dev/null
}

# exercise_fresh_all: print a folder that holds every exercise as shipped.
# Generating all of them takes seconds (more on a busy machine), so the
# result is kept in .progress/fresh/ with a checksum of everything the
# generator reads (solutions/, the from: and patch: files, the generator);
# it is generated again when that changes.
exercise_fresh_all() {
    local dir="$progress_dir/fresh" key tmp
    key="$(exercise_sources_key)"
    if [ -d "$dir" ] && [ "$(cat "$progress_dir/fresh.key" 2>/dev/null)" = "$key" ]; then
        echo "$dir"
        return 0
    fi
    mkdir -p "$progress_dir" && tmp="$(mktemp -d "$progress_dir/fresh.XXXXXX")" || return 1
    if ! exercise_fresh "$tmp/out"; then
        rm -rf "$tmp"
        return 1
    fi
    rm -rf "$dir" "$progress_dir/fresh.key"
    mv "$tmp/out" "$dir" && echo "$key" >"$progress_dir/fresh.key"
    rm -rf "$tmp"
    echo "$dir"
}

# exercise_sources_key: a checksum of what the generator reads.
exercise_sources_key() {
    local files=()
    mapfile -t files < <(
        cd "$top" || exit 1
        find solutions -type f | LC_ALL=C sort
        awk '/^(from|patch):/ { sub(/^[a-z]+:/, ""); for (i = 1; i <= NF; i++) print $i }' \
            solutions/[0-9][0-9]-*/*/exercise.txt 2>/dev/null | LC_ALL=C sort -u
        echo common/mk/gen-exercises.sh
    )
    (cd "$top" && printf '%s\n' "${files[@]}" && cat "${files[@]}" 2>/dev/null) | cksum | awk '{ print $1 "-" $2 }'
}

# exercise_untouched FRESH MINE: 0 when MINE holds exactly FRESH's files, with
# the same contents (editor droppings aside).
exercise_untouched() {
    [ -d "$1" ] && [ -d "$2" ] && exercise_diff "$1" "$2" >/dev/null 2>&1
}

# exercise_scan FRESH: one diff of every exercise at once (make progress has
# many to compare): fills exercise_changed[EX] for each exercise of yours that
# differs from its shipped copy in FRESH/EX; exercise_status then uses it.
declare -A exercise_changed=()
exercise_scanned=0
exercise_scan() {
    local line p
    exercise_changed=()
    while IFS= read -r line; do
        case "$line" in
        "Files $1/"*) p="${line#"Files $1/"}" p="${p%% and *}" ;;
        "Only in $1/"*) p="${line#"Only in $1/"}" p="${p/: //}" ;;
        "Only in $top/exercises/"*) p="${line#"Only in $top/exercises/"}" p="${p/: //}" ;;
        *) continue ;;
        esac
        [[ "$p" == */* ]] && exercise_changed["${p%%/*}/$(cut -d/ -f2 <<<"$p")"]=1
    done < <(exercise_diff "$1" "$top/exercises" 2>/dev/null)
    exercise_scanned=1
}

# exercise_needs LOG: what the build in LOG lacked that no edit of the
# learner's provides, or nothing: "Linux" when a Linux-only header (epoll,
# eventfd, timerfd, signalfd, io_uring, linux/) was missing on another
# system, "liburing (make deps)" when liburing's header was missing on Linux.
# (Read from the compiler's words, not guessed from the sources: some of
# them include those headers only under #ifdef __linux__.)
exercise_needs() {
    local h
    h="$(grep -oE "(sys/(epoll|eventfd|timerfd|signalfd)|liburing|linux/[A-Za-z0-9_/]+)\.h'?:? *(file not found|No such file)" "$1" 2>/dev/null | head -n 1)"
    [ -n "$h" ] || return 0
    if [ "$(uname -s)" != Linux ]; then
        echo "Linux"
    elif [[ "$h" == liburing* ]]; then
        echo "liburing (make deps)"
    fi
}

# exercise_fingerprint EX: a checksum of everything a test run of your copy
# depends on that you or the course may change: your files, the exercise's
# tests, its chapter's sources and common/'s.
exercise_fingerprint() {
    local ex="$1" ch="${1%%/*}" name="${1#*/}" f prog
    prog="$(exercise_program "$ex")"
    {
        exercise_files "$top/exercises/$ex" | sed "s|^|exercises/$ex/|"
        [ "$prog" = "$ex" ] || exercise_files "$top/exercises/$prog" | sed "s|^|exercises/$prog/|"
        for f in "tests/$ch/$name.bats" "tests/$ch/suite-$name.bats" \
            chapters/"$ch"/*.[ch] chapters/"$ch"/*/*.[ch] common/*.[ch] common/mk/*.mk; do
            [ -f "$top/$f" ] && echo "$f"
        done
    } | while IFS= read -r f; do
        printf '%s\n' "$f"
        cat "$top/$f"
    done | cksum | awk '{ print $1 "-" $2 }'
}

# exercise_remember EX WORD FINGERPRINT [DETAIL]: keep the outcome WORD
# (done, todo, compile, failing) of a run of your copy whose files had
# FINGERPRINT, and a DETAIL to show with it. An empty WORD forgets it.
exercise_remember() {
    local file="$progress_dir/results/${1//\//__}"
    if [ -z "$2" ]; then
        rm -f "$file"
        return 0
    fi
    mkdir -p "$progress_dir/results" 2>/dev/null && printf '%s %s%s\n' "$3" "$2" "${4:+ $4}" >"$file" 2>/dev/null
    return 0
}

# exercise_recalled EX FINGERPRINT: the outcome kept for these very files
# ("WORD DETAIL"), or nothing.
exercise_recalled() {
    local file="$progress_dir/results/${1//\//__}" fp rest
    [ -f "$file" ] || return 0
    read -r fp rest <"$file" 2>/dev/null || return 0
    [ "$fp" = "$2" ] && echo "$rest"
    return 0
}

# exercise_outcome_text WORD [DETAIL]: what make progress prints for an outcome.
exercise_outcome_text() {
    local word="${1%% *}" detail=""
    [[ "$1" == *" "* ]] && detail="${1#* }"
    case "$word" in
    done) echo "done" ;;
    todo) echo "failing (a TODO is left)" ;;
    compile) echo "failing (does not compile)" ;;
    needs) echo "needs $detail" ;;
    *) echo "failing${detail:+ ($detail)}" ;;
    esac
}

# exercise_tap_detail TAP: "N of M tests, first: the first failing one's name", from
# bats' TAP output (other lines are skipped).
exercise_tap_detail() {
    awk '
        /^ok / { n++ }
        /^not ok / { n++; f++; if (!first) { first = $0; sub(/^not ok [0-9]+ /, "", first) } }
        END {
            if (!f) exit
            if (length(first) > 60) first = substr(first, 1, 57) "..."
            printf "%d of %d tests, first: %s\n", f, n, first
        }' "$1" 2>/dev/null
}

# exercise_bats TAP FILE [show]: run one test file the way make ex does,
# its TAP output into TAP (and to stdout with "show"), and stop at the first
# failing test: a wrong answer's verdict should not wait for the tests after
# the one that caught it. The tests run 4 at a time where GNU parallel is
# installed (bats --jobs): most of their time is spent waiting on a server,
# not on a CPU. Returns bats' status, or 1 when it was stopped at a failure.
#
# bats --jobs prints a test's result only once every test before it has
# finished (and then only between starting others), so a failure is looked
# for where each test leaves its output as it ends: bats' parallel_output/N/
# folders, in a temporary folder of this run's own. The failing test's
# output is shown as soon as it is there, whatever its place in the file.
# A stopped run does not reach its tests' teardown: bats runs in a session of
# its own, and everything of that session (the servers and clients its tests
# started) is stopped with it, SIGTERM and then SIGKILL for what a wrong
# answer may ignore. Some of it has left the process group by then (GNU
# timeout makes a group of its own, a wineserver detaches): every process
# of the run carries EXERCISE_BATS_RUN in its environment, and what still
# carries it once bats has ended is killed too.
exercise_bats() {
    local tap="$1" file="$2" show="${3:-}" jobs=() n pid wrapper st=0 shown=0 total stopped=0 td out failed=""
    if command -v parallel >/dev/null; then
        n=$(($(nproc 2>/dev/null || echo 1) * 2))
        [ "$n" -gt 4 ] && n=4
        [ "$n" -gt 1 ] && jobs=(--jobs "$n")
    fi
    td="$(mktemp -d "${TMPDIR:-/tmp}/exercise-bats.XXXXXX")" || return 1
    : >"$tap"
    # bats in a session of its own (its pid is its group's), inside a
    # subshell that keeps its status and swallows the shell's "Terminated"
    (
        TMPDIR="$td" EXERCISE_BATS_RUN="$td" setsid bash -c 'echo $$ >"$1/pid" && exec bats "${@:2}"' _ "$td" \
            "${jobs[@]}" --tap "$file" >"$tap" 2>&1 </dev/null
        echo $? >"$td/status"
    ) 2>/dev/null &
    wrapper=$!
    while [ ! -s "$td/pid" ] && kill -0 "$wrapper" 2>/dev/null; do sleep 0.05; done
    pid=$(cat "$td/pid" 2>/dev/null)
    while kill -0 "$wrapper" 2>/dev/null; do
        if [ "$show" = show ]; then
            total=$(wc -l <"$tap")
            [ "$total" -gt "$shown" ] && sed -n "$((shown + 1)),${total}p" "$tap" && shown=$total
        fi
        failed=""
        if grep -q '^not ok' "$tap"; then
            failed=inline
        else
            for out in "$td"/bats-run-*/parallel_output/*/stdout; do
                [ -f "$out" ] && grep -q '^not ok' "$out" && { failed="$out"; break; }
            done
        fi
        if [ -n "$failed" ]; then
            # the failure's own lines (why, what the server said) come with
            # its "not ok" or right after it: give them a moment to arrive
            sleep 0.3
            # a failure bats has not printed yet: its lines, kept before
            # the stop (bats removes its folder on the way out)
            if [ "$failed" != inline ]; then
                cat "$failed" "${failed%/stdout}/stderr" >"$td/failed" 2>/dev/null
            fi
            [ -n "$pid" ] && kill -TERM -- -"$pid" 2>/dev/null
            sleep 0.2
            [ -n "$pid" ] && kill -KILL -- -"$pid" 2>/dev/null
            wait "$wrapper" 2>/dev/null
            if [ -s "$td/failed" ] && ! grep -qxF "$(grep -m1 '^not ok' "$td/failed")" "$tap"; then
                cat "$td/failed" >>"$tap"
            fi
            stopped=1
            break
        fi
        sleep 0.1
    done
    wait "$wrapper" 2>/dev/null
    exercise_kill_marked "EXERCISE_BATS_RUN=$td"
    st=$(cat "$td/status" 2>/dev/null) || st=1
    if [ "$stopped" = 1 ]; then
        st=1
        # what the stop itself made bats' shells say
        sed -i '/^Terminated$/d; /^Killed$/d; /^rm: cannot remove /d' "$tap"
    fi
    if [ "$show" = show ]; then
        total=$(wc -l <"$tap")
        [ "$total" -gt "$shown" ] && sed -n "$((shown + 1)),${total}p" "$tap"
        if [ "$stopped" = 1 ]; then
            n=$(sed -n 's/^1\.\.//p' "$tap" | head -n 1)
            echo "# stopped at the first failure; $((${n:-0} - $(grep -cE '^(not )?ok ' "$tap"))) other tests of this file not run, or not finished"
        fi
    fi
    rm -rf "$td"
    return "$st"
}

# exercise_kill_marked VAR=VALUE: kill (SIGKILL) every process whose
# environment holds that line, twice over: one the first pass missed may have
# been forked by one it killed.
exercise_kill_marked() {
    local p pids
    for _ in 1 2; do
        pids=()
        for p in $(env -u "${1%%=*}" grep -lzsxF "$1" /proc/[0-9]*/environ 2>/dev/null); do
            p=${p#/proc/} && pids+=("${p%/environ}")
        done
        [ ${#pids[@]} -gt 0 ] || return 0
        kill -KILL "${pids[@]}" 2>/dev/null
        sleep 0.1
    done
    return 0
}

# exercise_test EX IMPL LOG: build IMPL's copy and run its tests quietly
# (output to LOG). Returns 0 when they pass, 3 when it does not compile, 1
# when tests fail, 4 when they "pass" because every one of them skipped here
# (LOG's last line then says why).
exercise_test() {
    local ex="$1" impl="$2" log="$3"
    local ch="${ex%%/*}" name="${ex#*/}" f
    if ! make --no-print-directory -C "$top/$impl/$ex" QUIET_WHERE=1 >"$log" 2>&1; then
        return 3
    fi
    [ -f "$top/tests/$ch/$name.bats" ] || { echo "no tests/$ch/$name.bats" >>"$log"; return 1; }
    : >"$log.tap"
    for f in "$top/tests/$ch/$name.bats" "$top/tests/$ch/suite-$name.bats"; do
        # an echo server's exercise also runs the shared echo suite (listed
        # in common/servers.txt), once its own tests pass
        [ -f "$f" ] || continue
        local st=0
        IMPL="$impl" exercise_bats "$log.part" "$f" || st=$?
        cat "$log.part" >>"$log"
        cat "$log.part" >>"$log.tap"
        [ "$st" -eq 0 ] || { rm -f "$log.part" "$log.tap"; return 1; }
    done
    rm -f "$log.part"
    if exercise_all_skipped "$log.tap"; then
        grep -m1 -o '# skip.*' "$log.tap" | sed 's/^# skip *//' >>"$log"
        rm -f "$log.tap"
        return 4
    fi
    rm -f "$log.tap"
    return 0
}

# exercise_all_skipped TAP: did every test of this TAP output skip?
exercise_all_skipped() {
    grep -q '^ok ' "$1" || return 1
    ! grep -E '^(not )?ok ' "$1" | grep -vq '# skip'
}

# exercise_status EX FRESHDIR: the status make progress shows for your copy
# of EX (FRESHDIR holds the shipped copies). "not started" needs no build;
# the rest comes from .progress/results/ when your files have not changed
# since the last run, or from a run of the tests.
exercise_status() {
    local ex="$1" fresh="$2" needs fp word log prog
    prog="$(exercise_program "$ex")"
    if [ ! -d "$top/exercises/$ex" ] || [ ! -d "$top/exercises/$prog" ]; then
        echo "missing (make reset EX=$ex brings it back)"
        return 0
    fi
    if { [ "$exercise_scanned" = 1 ] && [ -z "${exercise_changed[$prog]+set}" ]; } ||
        { [ "$exercise_scanned" = 0 ] && exercise_untouched "$fresh/$prog" "$top/exercises/$prog"; }; then
        echo "not started"
        return 0
    fi
    fp="$(exercise_fingerprint "$ex")"
    word="$(exercise_recalled "$ex" "$fp")"
    local detail=""
    if [ -z "$word" ]; then
        log="$(mktemp)"
        exercise_common_built || { rm -f "$log"; echo "failing (common/ does not build: run make common)"; return 0; }
        exercise_test "$ex" exercises "$log"
        case $? in
        0) word="done" ;;
        3)
            word=compile
            needs="$(exercise_needs "$log")"
            [ -n "$needs" ] && word=needs detail="$needs"
            ;;
        4)
            echo "cannot be tested here ($(tail -n 1 "$log"))"
            rm -f "$log"
            return 0
            ;;
        *)
            if grep -q 'TODO at ' "$log"; then
                word=todo
            else
                word=failing detail="$(exercise_tap_detail "$log")"
            fi
            ;;
        esac
        rm -f "$log" "$log.tap"
        [ "$fp" = "$(exercise_fingerprint "$ex")" ] && exercise_remember "$ex" "$word" "$fp" "$detail"
        word="$word${detail:+ $detail}"
    fi
    exercise_outcome_text "$word"
}

# exercise_common_built: build common/ once per run, before the first test.
exercise_common_built() {
    if [ -z "${exercise__common_status:-}" ]; then
        make --no-print-directory -C "$top" common >/dev/null 2>&1
        exercise__common_status=$?
    fi
    return "$exercise__common_status"
}

# exercise_next FRESHDIR [AFTER]: the first exercise (after AFTER, when
# given) that is not done, without running any test: not started, or
# changed since its last run, or failing then. Nothing when every one is done.
exercise_next() {
    local fresh="$1" after="${2:-}" ex skipping=0
    [ -n "$after" ] && skipping=1
    while IFS= read -r ex; do
        if [ "$skipping" = 1 ]; then
            [ "$ex" = "$after" ] && skipping=0
            continue
        fi
        local prog
        prog="$(exercise_program "$ex")"
        if [ -d "$top/exercises/$prog" ] && ! exercise_untouched "$fresh/$prog" "$top/exercises/$prog"; then
            case "$(exercise_recalled "$ex" "$(exercise_fingerprint "$ex")")" in
            done | "needs "*) continue ;;
            esac
        fi
        echo "$ex"
        return 0
    done < <(exercise_list)
}
