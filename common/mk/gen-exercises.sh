#!/usr/bin/env bash
# gen-exercises.sh SRC DST [EX...]: generate the learner's exercises.
#
# An exercise is a folder SRC/NN-slug/NAME/ (solutions/) with a Makefile, a
# README.md, a hints.md and an exercise.txt:
#
#     kind: write | fix | predict
#     level: warm-up | core | challenge
#     order: 2                  (its place in the chapter's list, 1 first)
#     title: what the learner practises, in one line
#     from: chapters/NN-slug/FILE ...    (the chapter files it cuts or breaks)
#     patch: tests/meta/mutants/NAME.patch     (fix: the bug it plants)
#     symptom: what the learner sees fail       (fix)
#
# One source: an exercise that cuts or breaks a chapter program names the
# chapter's files on its from: line, and the reference is the chapter file
# itself. DST/NN-slug/NAME/ receives:
#   - every file of the exercise folder but exercise.txt;
#   - each from: file, at its path below the chapter folder: for a write
#     exercise with its blocks cut out, for a fix exercise with the patch
#     applied. The exercise's Makefile builds the chapter's other files from
#     the chapter folder (SRC_FROM); these copies win over the chapter's.
#
# A block is cut in C files like this:
#
#     /* EXERCISE BEGIN NAME: what the learner must write */
#     ...reference code...
#     /* EXERCISE END */
#
# becomes one line, at the same indentation, TODO("what the learner must
# write"); (common/todo.h, whose #include is added when missing). NAME is the
# exercise's folder name; a block of another exercise keeps its code and
# loses its two marker lines. In a file of the exercise folder itself the
# name may be left out (/* EXERCISE BEGIN: task */).
#
# Without EX arguments DST is rebuilt from scratch, so a removed exercise
# disappears, and the run refuses to overwrite a learner's work (a file with
# fewer TODO( lines than its fresh copy) unless FORCE=1. With EX arguments
# (NN-slug/NAME), only those exercises are generated, into DST/NN-slug/NAME,
# each replacing what was there; nothing else in DST is touched.
#
# Errors (an unterminated or nested block, a task with a double quote, a
# write exercise with nothing cut, a patch that does not apply, a bad
# exercise.txt) stop the run with a message naming the file and line, and
# leave DST untouched.
set -euo pipefail

src="${1:?usage: gen-exercises.sh SRC DST [EX...]}"
dst="${2:?usage: gen-exercises.sh SRC DST [EX...]}"
shift 2
[ -d "$src" ] || { echo "gen-exercises: no such folder: $src" >&2; exit 2; }
src="$(cd "$src" && pwd)"
# from: and patch: paths are relative to the folder that holds SRC (the
# repository, for solutions/)
top="$(cd "$src/.." && pwd)"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/gen-exercises.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

die() { echo "gen-exercises: $*" >&2; exit 1; }

# transform FILE NAME UNNAMED > OUT: cut the blocks of exercise NAME (and
# the unnamed ones when UNNAMED is 1), drop the markers of other exercises'
# blocks, add #include "todo.h" where something was cut. Prints nothing on
# stderr unless the markers are malformed. Exit status 3: nothing was cut.
transform() {
    awk -v file="$1" -v name="$2" -v unnamed="$3" '
    function fail(msg) { printf "gen-exercises: %s:%d: %s\n", file, FNR, msg > "/dev/stderr"; bad = 1; exit 1 }
    /\/\* EXERCISE BEGIN[^:]*: .*\*\// {
        if (inside) fail("EXERCISE BEGIN inside another block (started at line " start ")")
        head = $0
        sub(/^.*\/\* EXERCISE BEGIN */, "", head)
        who = head
        sub(/:.*$/, "", who)
        task = head
        sub(/^[^:]*: */, "", task)
        sub(/ *\*\/[ \t]*$/, "", task)
        if (who != "" && who !~ /^[a-z0-9][a-z0-9-]*$/) fail("the exercise name in EXERCISE BEGIN must be a folder name (a-z, 0-9, -)")
        if (who == "" && !unnamed) fail("a block in a chapter file must name its exercise: /* EXERCISE BEGIN NAME: task */")
        if (task == "") fail("EXERCISE BEGIN without a task")
        if (task ~ /["\\]/) fail("the task text may not contain a double quote or a backslash")
        inside = 1; start = FNR
        cutting = (who == name || who == "")
        if (cutting) {
            indent = $0
            sub(/[^ \t].*$/, "", indent)
            out[++n] = indent "TODO(\"" task "\");"
            blocks++
        }
        next
    }
    /\/\* EXERCISE END \*\// {
        if (!inside) fail("EXERCISE END without EXERCISE BEGIN")
        inside = 0
        next
    }
    /EXERCISE (BEGIN|END)/ { fail("malformed marker; expected /* EXERCISE BEGIN NAME: task */ or /* EXERCISE END */") }
    # the excerpt markers of the READMEs (common/mk/snippets.sh) mean nothing here
    /^[ \t]*\/\* (snippet: [a-z0-9-]+|end snippet) \*\/[ \t]*$/ { next }
    /^[ \t]*#[ \t]*include[ \t]*"todo\.h"/ { has_todo = 1 }
    /^[ \t]*#[ \t]*include[ \t]*"/ { if (!first_local) first_local = n + 1 }
    /^[ \t]*#[ \t]*include/ { if (!first_any) first_any = n + 1 }
    !(inside && cutting) { out[++n] = $0 }
    END {
        if (bad) exit 1
        if (inside) { printf "gen-exercises: %s:%d: EXERCISE BEGIN never ended\n", file, start > "/dev/stderr"; exit 1 }
        at = 0
        if (blocks && !has_todo) at = first_local ? first_local : (first_any ? first_any : 1)
        for (i = 1; i <= n; i++) {
            if (i == at) print "#include \"todo.h\""
            print out[i]
        }
        if (!blocks) exit 3
    }' "$1"
}

# meta FILE KEY: the value of "KEY: value" in an exercise.txt.
meta() { sed -n "s/^$2:[ \t]*//p" "$1" | head -n 1; }

# gen_one EX OUT: generate exercise EX (NN-slug/NAME) into OUT.
gen_one() {
    local ex="$1" out="$2" dir="$src/$1" ch="${1%%/*}" name="${1#*/}"
    local info="$dir/exercise.txt" kind level order title from patch f rel cut=0 st
    [ -f "$info" ] || die "$ex has no exercise.txt"
    kind=$(meta "$info" kind) level=$(meta "$info" level) order=$(meta "$info" order)
    title=$(meta "$info" title) from=$(meta "$info" from) patch=$(meta "$info" patch)
    case "$kind" in write | fix | predict) ;; *) die "$ex/exercise.txt: kind must be write, fix or predict, not '$kind'" ;; esac
    case "$level" in warm-up | core | challenge) ;; *) die "$ex/exercise.txt: level must be warm-up, core or challenge, not '$level'" ;; esac
    [[ "$order" =~ ^[1-9][0-9]*$ ]] || die "$ex/exercise.txt: order must be a number from 1, not '$order'"
    [ -n "$title" ] || die "$ex/exercise.txt: no title"
    [ -f "$dir/hints.md" ] || die "$ex has no hints.md"
    [ -f "$dir/README.md" ] || die "$ex has no README.md"
    [ "$(grep -c '^## Hint ' "$dir/hints.md")" -ge 3 ] || die "$ex/hints.md: at least three '## Hint N' sections"
    if [ "$kind" = fix ]; then
        [ -n "$patch" ] && [ -f "$top/$patch" ] || die "$ex/exercise.txt: a fix exercise needs patch: FILE (not found: '$patch')"
        [ -n "$from" ] || die "$ex/exercise.txt: a fix exercise needs from: FILE..."
        [ -n "$(meta "$info" symptom)" ] || die "$ex/exercise.txt: a fix exercise needs symptom: ..."
    fi
    mkdir -p "$out"

    # the exercise folder's own files
    while IFS= read -r -d '' f; do
        rel="${f#"$dir"/}"
        [ "$rel" = exercise.txt ] && continue
        mkdir -p "$out/$(dirname "$rel")"
        case "$f" in
        *.c | *.h)
            st=0
            transform "$f" "$name" 1 >"$out/$rel" || st=$?
            case "$st" in 0) cut=1 ;; 3) ;; *) exit 1 ;; esac
            ;;
        *) cp "$f" "$out/$rel" ;;
        esac
    done < <(find "$dir" -type f -print0 | sort -z)

    # the chapter files it cuts or breaks
    local work="$tmp/from/$ex"
    if [ -n "$from" ]; then
        rm -rf "$work"
        mkdir -p "$work"
        for f in $from; do
            case "$f" in
            chapters/"$ch"/*) ;;
            *) die "$ex/exercise.txt: from: $f is not a file of chapters/$ch/" ;;
            esac
            [ -f "$top/$f" ] || die "$ex/exercise.txt: from: $f does not exist"
            mkdir -p "$work/$(dirname "$f")"
            cp "$top/$f" "$work/$f"
        done
        if [ "$kind" = fix ]; then
            sed -n '/^--- /,$p' "$top/$patch" | patch -s -p1 -d "$work" --no-backup-if-mismatch >"$tmp/patch.log" 2>&1 ||
                die "$ex: $patch does not apply to its from: files: $(cat "$tmp/patch.log")"
            cmp -s <(cd "$top" && cat $from) <(cd "$work" && cat $from) &&
                die "$ex: $patch changes none of its from: files ($from)"
        fi
        for f in $from; do
            rel="${f#chapters/"$ch"/}"
            [ ! -e "$out/$rel" ] || die "$ex: $rel is both in the exercise folder and on its from: line"
            mkdir -p "$out/$(dirname "$rel")"
            case "$f" in
            *.c | *.h)
                st=0
                if [ "$kind" = write ]; then
                    transform "$work/$f" "$name" 0 >"$out/$rel" || st=$?
                else
                    transform "$work/$f" "" 0 >"$out/$rel" || st=$?
                fi
                case "$st" in 0) cut=1 ;; 3) ;; *) exit 1 ;; esac
                ;;
            *) cp "$work/$f" "$out/$rel" ;;
            esac
        done
    fi
    case "$kind" in
    write) [ "$cut" = 1 ] || die "$ex: a write exercise with no EXERCISE BEGIN $name block (in its folder or its from: files)" ;;
    fix) [ "$cut" = 0 ] || die "$ex: a fix exercise must not cut anything (a block of $name was found)" ;;
    esac
    return 0
}

exercises=()
if [ $# -gt 0 ]; then
    for ex in "$@"; do
        [ -f "$src/$ex/Makefile" ] || die "no exercise $ex in $src"
        exercises+=("$ex")
    done
else
    for d in "$src"/[0-9][0-9]-*/*/; do
        [ -f "$d/Makefile" ] || continue
        d="${d%/}"
        exercises+=("${d#"$src"/}")
    done
fi

count=0
for ex in "${exercises[@]}"; do
    gen_one "$ex" "$tmp/out/$ex"
    count=$((count + 1))
done

if [ $# -gt 0 ]; then
    for ex in "${exercises[@]}"; do
        rm -rf "${dst:?}/$ex"
        mkdir -p "$dst/$(dirname "$ex")"
        mv "$tmp/out/$ex" "$dst/$ex"
    done
    echo "generated ${exercises[*]} in $dst/"
    exit 0
fi

mkdir -p "$tmp/out"
cat >"$tmp/out/README.md" <<'TXT'
# Your exercises

This folder is yours. Each exercise is a program of its chapter with a part
to write or a bug to find:

- *write*: the interesting part is cut out and replaced by `TODO("...")`,
  which stops the program with exit status 99 and tells you where it stopped;
- *fix*: the program runs, but a classic bug is planted in it; its tests and
  its README say what goes wrong, not where.

    make progress                          # where you are, and the next exercise
    make ex EX=03-nonblocking/poll-echo    # build and test your copy
    make hint EX=03-nonblocking/poll-echo  # one more hint, each time you ask

Each exercise folder has a README.md (the task) and hints.md (the hints, if you
would rather read them all at once). The references are the chapters' own
programs, and solutions/ for the few programs that exist only as exercises.

This folder is generated by `make exercises`; do not run that unless you mean
to start over (it refuses while you have changes here).
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
echo "generated $dst/ from $src/ ($count exercises)"
