#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gen-exercises.sh SRC DST [EX...]: generate the learner's exercises.
#
# An exercise is a folder SRC/NN-slug/NAME/ (solutions/) with a Makefile, a
# README.md, a hints.md and an exercise.txt:
#
#     kind: write | fix | predict | stage
#     level: warm-up | core | challenge
#     order: 2                  (its place in the chapter's list, 1 first)
#     title: what the learner practises, in one line
#     from: chapters/NN-slug/FILE ...    (the chapter files it cuts or breaks)
#     patch: tests/meta/mutants/NAME.patch     (fix: the bug it plants)
#     symptom: what the learner sees fail       (fix)
#     program: NAME             (stage: the folder of its chapter it tests)
#     see: chapters/NN-slug/FILE ...     (stage: where the reference does it)
#
# The capstone (chapter 15) is a program the learner grows in stages: its
# folder (exercise.txt: "kind: program" alone, a README.md, the skeleton, a
# whole program in solutions/) is copied with its blocks cut, as an
# exercise's own files are; each stage is an exercise with no code of its
# own, whose tests run that program.
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

# checksums DIR: write DIR/.checksums, the sha256 of every file below DIR
# (paths relative to DIR, sorted), for telling the learner's changes apart.
checksums() {
    (cd "$1" && find . -type f ! -name .checksums | sed 's|^\./||' | LC_ALL=C sort |
        xargs -d '\n' sha256sum) >"$tmp/sums" && mv "$tmp/sums" "$1/.checksums"
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
    if [ "$kind" = program ]; then
        [ -f "$dir/README.md" ] || die "$ex has no README.md"
        mkdir -p "$out"
        cp -R "$dir/." "$out/" && rm -f "$out/exercise.txt" || die "$ex: could not copy the program's files"
        # the skeleton's blocks (in solutions/ it is a whole program) are cut
        while IFS= read -r -d '' f; do
            rel="${f#"$dir"/}" st=0
            transform "$f" "$name" 1 >"$out/$rel" || st=$?
            case "$st" in 0 | 3) ;; *) exit 1 ;; esac
        done < <(find "$dir" -type f \( -name '*.c' -o -name '*.h' \) -print0)
        return 0
    fi
    case "$kind" in write | fix | predict | stage) ;; *) die "$ex/exercise.txt: kind must be write, fix, predict, stage or program, not '$kind'" ;; esac
    if [ "$kind" = stage ]; then
        local program
        program=$(meta "$info" program)
        [ -n "$program" ] && [ "$(meta "$src/$ch/$program/exercise.txt" kind 2>/dev/null)" = program ] ||
            die "$ex/exercise.txt: a stage needs program: NAME, a folder of $ch whose exercise.txt says kind: program (not '$program')"
        [ -z "$from" ] || die "$ex/exercise.txt: a stage has no from: files (its tests run program: $program)"
    fi
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
    stage) [ "$cut" = 0 ] || die "$ex: a stage has no code of its own to cut (its program is its program: folder)" ;;
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
    # their lines of .checksums, recomputed; the other exercises' kept
    if [ -f "$dst/.checksums" ]; then
        pat=$(printf '%s\n' "${exercises[@]}" | sed 's|[.]|[.]|g; s|^|^[0-9a-f]*  |; s|$|/|')
        { grep -v -f <(echo "$pat") "$dst/.checksums" || true
          (cd "$dst" && find "${exercises[@]}" -type f | LC_ALL=C sort | xargs -d '\n' sha256sum); } |
            LC_ALL=C sort -k2 >"$tmp/sums" && mv "$tmp/sums" "$dst/.checksums"
    fi
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

    make progress                              # every exercise by chapter, and the next one
    make watch                                 # test the next one each time you save a file of it
    make ex EX=03-nonblocking/poll-echo        # build and test your copy once
    make hint EX=03-nonblocking/poll-echo      # one more hint, each time you ask
    make solution EX=03-nonblocking/poll-echo  # the reference, once your copy passes
    make reset EX=03-nonblocking/poll-echo     # start one exercise over (yours is kept in .progress/reset/)

EX= also takes the exercise's name alone when no other exercise has it (EX=poll-echo).
Each exercise folder has a README.md (the task) and hints.md (the hints, if you
would rather read them all at once). The references are the chapters' own
programs, and solutions/ for the few programs that exist only as exercises.

This folder is generated by `make exercises`; do not run that unless you mean
to start every exercise over (it refuses while you have changes here);
`make reset EX=...` starts one over. Keep nothing else in it: `make exercises`
rebuilds it from scratch. (.checksums records what it wrote, so that your
changes are told apart from the course's.)
TXT
checksums "$tmp/out"

# A learner's work lives in exercises/: never overwrite it by accident. The
# generator records what it wrote in DST/.checksums; a file that no longer
# matches its checksum was changed by the learner (a TODO written, a bug
# fixed), and a run that would change it stops. Without a .checksums (a
# folder from before it existed), a file with fewer TODO( lines than its
# fresh copy is the learner's.
if [ -d "$dst" ] && [ "${FORCE:-0}" != 1 ]; then
    mine=()
    if [ -f "$dst/.checksums" ]; then
        while IFS= read -r rel; do
            [ -f "$tmp/out/$rel" ] && cmp -s "$dst/$rel" "$tmp/out/$rel" && continue
            mine+=("$rel")
        done < <(cd "$dst" && sha256sum --quiet -c .checksums 2>/dev/null | sed -n 's/: FAILED$//p')
    else
        while IFS= read -r -d '' g; do
            rel="${g#"$tmp"/out/}"
            [ -f "$dst/$rel" ] || continue
            want=$(grep -c 'TODO("' "$g" || true)
            have=$(grep -c 'TODO("' "$dst/$rel" || true)
            [ "$have" -lt "$want" ] && mine+=("$rel")
        done < <(find "$tmp/out" -type f \( -name '*.c' -o -name '*.h' \) -print0)
    fi
    if [ ${#mine[@]} -gt 0 ]; then
        echo "gen-exercises: $dst/ holds your own work, which this would overwrite:" >&2
        printf '  %s\n' "${mine[@]/#/$dst/}" >&2
        echo "  refusing. Save it elsewhere (make reset EX=... keeps a copy), or run with FORCE=1." >&2
        exit 1
    fi
fi
rm -rf "$dst"
mkdir -p "$(dirname "$dst")"
mv "$tmp/out" "$dst"
echo "generated $dst/ from $src/ ($count exercises)"
