#!/usr/bin/env bash
# gen-exercises.sh SRC DST: generate the learner's exercises from the solutions.
#
# Every file under SRC (solutions/) is copied to DST (exercises/). In C files,
# each block
#
#     /* EXERCISE BEGIN: what the learner must write */
#     ...reference code...
#     /* EXERCISE END */
#
# becomes one line, at the same indentation:
#
#     TODO("what the learner must write");
#
# DST is rebuilt from scratch, so a file removed from SRC disappears from DST.
# Errors (an unterminated or nested block, a task with a double quote, a
# solution that does not include "todo.h") stop the run with a message
# naming the file and line, and leave DST untouched.
set -euo pipefail

src="${1:?usage: gen-exercises.sh SRC DST}"
dst="${2:?usage: gen-exercises.sh SRC DST}"
[ -d "$src" ] || { echo "gen-exercises: no such folder: $src" >&2; exit 2; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/gen-exercises.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

transform() { # transform FILE > OUT
    awk -v file="$1" '
    function fail(msg) { printf "gen-exercises: %s:%d: %s\n", file, FNR, msg > "/dev/stderr"; bad = 1; exit 1 }
    /\/\* EXERCISE BEGIN: .*\*\// {
        if (inside) fail("EXERCISE BEGIN inside another block (started at line " start ")")
        task = $0
        sub(/^.*\/\* EXERCISE BEGIN: */, "", task)
        sub(/ *\*\/[ \t]*$/, "", task)
        if (task == "") fail("EXERCISE BEGIN without a task")
        if (task ~ /["\\]/) fail("the task text may not contain a double quote or a backslash")
        indent = $0
        sub(/[^ \t].*$/, "", indent)
        print indent "TODO(\"" task "\");"
        inside = 1; start = FNR; blocks++
        next
    }
    /\/\* EXERCISE END \*\// {
        if (!inside) fail("EXERCISE END without EXERCISE BEGIN")
        inside = 0
        next
    }
    /EXERCISE (BEGIN|END)/ { fail("malformed marker; expected /* EXERCISE BEGIN: task */ or /* EXERCISE END */") }
    /^[ \t]*#[ \t]*include[ \t]*"todo\.h"/ { has_todo = 1 }
    !inside { print }
    END {
        if (bad) exit 1
        if (inside) { printf "gen-exercises: %s:%d: EXERCISE BEGIN never ended\n", file, start > "/dev/stderr"; exit 1 }
        if (blocks && !has_todo) { printf "gen-exercises: %s: has EXERCISE blocks but does not #include \"todo.h\"\n", file > "/dev/stderr"; exit 1 }
    }' "$1"
}

count=0
while IFS= read -r -d '' f; do
    rel="${f#"$src"/}"
    mkdir -p "$tmp/out/$(dirname "$rel")"
    case "$f" in
    *.c | *.h) transform "$f" >"$tmp/out/$rel" ;;
    *) cp "$f" "$tmp/out/$rel" ;;
    esac
    count=$((count + 1))
done < <(find "$src" -type f -print0 | sort -z)

# Every exercise must ask the learner for something.
for d in "$tmp"/out/*/*/; do
    [ -d "$d" ] || continue
    if ! grep -rqs 'TODO("' "$d"; then
        echo "gen-exercises: ${d#"$tmp"/out/} has no EXERCISE BEGIN/END block" >&2
        exit 1
    fi
    [ -f "$d/hints.md" ] || { echo "gen-exercises: ${d#"$tmp"/out/} has no hints.md" >&2; exit 1; }
done

mkdir -p "$tmp/out"
cat >"$tmp/out/README.md" <<'TXT'
# Your exercises

This folder is yours: each exercise is a copy of a reference solution with the
interesting part cut out and replaced by `TODO("...")`, which stops the program
with exit status 99 and tells you where it stopped.

    make progress                          # where you are, and the next exercise
    make ex EX=03-nonblocking/poll-echo    # build and test your copy
    make hint EX=03-nonblocking/poll-echo  # one more hint, each time you ask

Each exercise folder has a README.md (the task) and hints.md (the hints, if you
would rather read them all at once). The reference solutions are in solutions/.

This folder is generated from solutions/ by `make exercises`; do not run that
unless you mean to start over (it refuses while you have changes here).
TXT

# A learner's work lives in exercises/: never overwrite it by accident. A
# file where the learner replaced a TODO has fewer TODO(" lines than the
# generated one; regenerating after a change to solutions/ never does that.
if [ -d "$dst" ] && [ "${FORCE:-0}" != 1 ]; then
    while IFS= read -r -d '' g; do
        rel="${g#"$tmp"/out/}"
        [ -f "$dst/$rel" ] || continue
        want=$(grep -c 'TODO("' "$g" || true)
        have=$(grep -c 'TODO("' "$dst/$rel" || true)
        if [ "$have" -lt "$want" ]; then
            echo "gen-exercises: $dst/$rel holds your own work (a TODO was replaced);" >&2
            echo "  refusing to overwrite it. Save it elsewhere, or run with FORCE=1." >&2
            exit 1
        fi
    done < <(find "$tmp/out" -type f \( -name '*.c' -o -name '*.h' \) -print0)
fi
rm -rf "$dst"
mkdir -p "$(dirname "$dst")"
mv "$tmp/out" "$dst"
echo "generated $dst/ from $src/ ($count files)"
