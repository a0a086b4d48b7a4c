#!/usr/bin/env python3
"""check-answers.py [--mutants] [TOP]: no README or book page prints an
exercise's answer; with --mutants, every write exercise has a wrong answer
its tests must catch.

An exercise's answer is the code it asks the learner to write or fix:
  - write: the lines inside its EXERCISE BEGIN/END blocks (in the files of
    solutions/NN-slug/NAME/ and in the chapter files on its from: line);
  - fix: the lines its patch takes out (what the learner must put back).

A page prints it when 3 or more consecutive non-blank lines of an answer
appear, one after another, in the page (blank lines and leading or trailing
blanks aside). Runs of lines with fewer than 30 characters between them
(closing braces, a bare `return 0;`) are too common to tell anything and
are not counted. A fix is often one or two lines: the whole of what one
hunk of its patch takes out counts as well, however short, when it has 20
characters or more. The pages: chapters/*/README.md, book/*.md, the exercises'
own README.md (hints.md may come close: it is where hints belong).

Prints one line per page and exercise found, and exits 1 if any; 0 if none.

--hide-dir DIR: for each file a fix exercise is made from (PATH, from the
top), write into DIR/PATH, with every / of PATH made %, the runs of lines
its patch takes out, each run followed by a line holding only "\f".
snippets.sh leaves them out of the excerpts it copies into the READMEs, so
that an excerpt of a chapter program never shows a fix.

--mutants: a write exercise's tests must reject a wrong answer. At least one
patch in tests/meta/mutants/ must change lines inside the exercise's blocks
(every line it takes out is one of them) and name tests/NN-slug/NAME.bats on
its killed-by: line (tests/meta/mutants.bats then proves those tests kill
it). Prints each write exercise without one; exits 1 if any.
"""
import glob
import os
import re
import sys

RUN = 3
MIN_CHARS = 30
FIX_CHARS = 20

argv = sys.argv[1:]
hide_dir = None
if len(argv) >= 2 and argv[0] == "--hide-dir":
    hide_dir = argv[1]
    argv = argv[2:]
args = [a for a in argv if a not in ("--mutants", "--mutants-table")]
top = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), "..", ".."))


def meta(path):
    info = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^([a-z]+):\s*(.*?)\s*$", line)
            if m and m.group(1) not in info:
                info[m.group(1)] = m.group(2)
    return info


def norm(line):
    return re.sub(r"\s+", " ", line.strip())


def blocks(path, name, unnamed):
    """The lines inside the blocks of exercise `name` in a C file."""
    out, cur = [], None
    with open(path, errors="replace") as f:
        for line in f:
            m = re.search(r"/\* EXERCISE BEGIN ?([a-z0-9-]*): ", line)
            if m:
                cur = [] if (m.group(1) == name or (unnamed and m.group(1) == "")) else None
                continue
            if "/* EXERCISE END */" in line:
                if cur is not None:
                    out.append(cur)
                cur = None
                continue
            if cur is not None:
                cur.append(line.rstrip("\n"))
    return out


def removed(patch, only=None):
    """The runs of lines a patch takes out, one list per hunk (with only=
    a path: of that file alone)."""
    out, cur = [], []
    here = None
    with open(patch, errors="replace") as f:
        for line in f:
            if line.startswith("---"):
                continue
            if line.startswith("+++"):
                m = re.match(r"^\+\+\+ b/(\S+)", line)
                here = m.group(1) if m else None
                continue
            if only is not None and here != only:
                if cur:
                    out.append(cur)
                    cur = []
                continue
            if line.startswith("-"):
                cur.append(line[1:].rstrip("\n"))
            elif cur:
                out.append(cur)
                cur = []
    if cur:
        out.append(cur)
    return out


def answers():
    """(exercise, [list of non-blank normalized lines]) for every answer."""
    for info_path in sorted(glob.glob(os.path.join(top, "solutions", "[0-9][0-9]-*", "*", "exercise.txt"))):
        d = os.path.dirname(info_path)
        ex = os.path.relpath(d, os.path.join(top, "solutions"))
        name = os.path.basename(d)
        info = meta(info_path)
        chunks = []
        if info.get("kind") == "fix" and info.get("patch"):
            chunks += removed(os.path.join(top, info["patch"]))
        else:
            for root, _, files in os.walk(d):
                for fn in files:
                    if fn.endswith((".c", ".h")):
                        chunks += blocks(os.path.join(root, fn), name, True)
            for f in info.get("from", "").split():
                if f.endswith((".c", ".h")) and os.path.exists(os.path.join(top, f)):
                    chunks += blocks(os.path.join(top, f), name, False)
        for c in chunks:
            lines = [norm(x) for x in c if norm(x)]
            if lines:
                yield ex, lines, info.get("kind") == "fix"


def hide(path, out):
    """The hunks that fix exercises made from `path` take out, as in the file."""
    for info_path in sorted(glob.glob(os.path.join(top, "solutions", "[0-9][0-9]-*", "*", "exercise.txt"))):
        info = meta(info_path)
        if info.get("kind") != "fix" or not info.get("patch") or path not in info.get("from", "").split():
            continue
        for run in removed(os.path.join(top, info["patch"]), path):
            out.write("".join(x + "\n" for x in run) + "\f\n")
    return 0


def hide_all(d):
    """hide() for every file a fix exercise is made from, each into
    D/PATH with every / of PATH made %."""
    paths = set()
    for info_path in glob.glob(os.path.join(top, "solutions", "[0-9][0-9]-*", "*", "exercise.txt")):
        info = meta(info_path)
        if info.get("kind") == "fix" and info.get("patch"):
            paths.update(info.get("from", "").split())
    for path in sorted(paths):
        with open(os.path.join(d, path.replace("/", "%")), "w") as out:
            hide(path, out)
    return 0


def pages():
    found = glob.glob(os.path.join(top, "chapters", "*", "README.md"))
    found += glob.glob(os.path.join(top, "book", "*.md"))
    found += glob.glob(os.path.join(top, "solutions", "*", "*", "README.md"))
    return sorted(found)


def patch_files(patch):
    out = []
    with open(patch, errors="replace") as f:
        for line in f:
            m = re.match(r"^\+\+\+ b/(\S+)", line)
            if m:
                out.append(m.group(1))
    return out


def killed_by(patch):
    with open(patch, errors="replace") as f:
        for line in f:
            if line.startswith("killed-by:"):
                return line.split(":", 1)[1].split()
    return []


WRITE_KINDS = {"syscalls", "idle", "error-path", "race", "leak", "early-end", "bound", "timing", "logic"}
FIX_KINDS = {"hides-symptom", "wrong-thing"}
# what each kind of exercise needs: (wrong answers, different mistakes)
NEED = {"write": (3, 3), "fix": (2, 2), "predict": (2, 1), "stage": (3, 3)}
# Exercises whose tests have not yet been brought to the bar above: they
# still need one wrong answer (a write exercise: one that changes its
# blocks), and are listed by --mutants-table as owing the rest. The list
# only shrinks.
OLD_BAR = os.path.join(top, "tests", "meta", "mutants", "OWED")


def header(patch):
    """The patch's header lines (before the diff) as a dict."""
    out = {}
    with open(patch, errors="replace") as f:
        for line in f:
            if line.startswith(("--- ", "diff ", "Index: ")):
                break
            m = re.match(r"^([a-z-]+):\s*(.*?)\s*$", line)
            if m and m.group(1) not in out:
                out[m.group(1)] = m.group(2)
    return out


def exercises():
    """(EX, NAME, info, the C files its blocks may be in) of every exercise."""
    for info_path in sorted(glob.glob(os.path.join(top, "solutions", "[0-9][0-9]-*", "*", "exercise.txt"))):
        d = os.path.dirname(info_path)
        info = meta(info_path)
        if info.get("kind") == "program":  # the capstone's skeleton: its stages are the exercises
            continue
        files = set(info.get("from", "").split())
        for root, _, fns in os.walk(d):
            for fn in fns:
                if fn.endswith((".c", ".h")):
                    files.add(os.path.relpath(os.path.join(root, fn), top))
        yield os.path.relpath(d, os.path.join(top, "solutions")), os.path.basename(d), info, files


def mutant_stock():
    """For each exercise, its wrong answers [(patch name, mistake)], and the
    problems found in the stock's headers."""
    stock, problems = {}, []
    known = {ex: (name, info, files) for ex, name, info, files in exercises()}
    for p in sorted(glob.glob(os.path.join(top, "tests", "meta", "mutants", "*.patch"))):
        h, base = header(p), os.path.basename(p)
        ex = h.get("exercise")
        if not ex:
            continue
        if ex not in known:
            problems.append("%s: exercise: %s is no exercise" % (base, ex))
            continue
        name, info, files = known[ex]
        kind, ch = info.get("kind", "write"), ex.split("/")[0]
        if info.get("patch") and os.path.basename(info["patch"]) == base:
            problems.append("%s: it is the bug %s plants; its wrong fixes are other patches" % (base, ex))
            continue
        own = {"tests/%s/%s.bats" % (ch, name), "tests/%s/suite-%s.bats" % (ch, name)}
        kb = h.get("killed-by", "").split()
        if not kb or not set(kb) <= own:
            problems.append("%s: a wrong answer of %s is killed by its own tests (%s), not by %s" %
                            (base, ex, " or ".join(sorted(own)), " ".join(kb) or "nothing"))
        mistake = h.get("mistake", "")
        kinds = FIX_KINDS if kind == "fix" else WRITE_KINDS
        if mistake not in kinds:
            problems.append("%s: mistake: '%s' is not one of %s" % (base, mistake, ", ".join(sorted(kinds))))
        if kind == "write":
            cut = set()
            for f in files:
                if os.path.exists(os.path.join(top, f)):
                    for b in blocks(os.path.join(top, f), name, f.startswith("solutions/")):
                        cut.update(norm(x) for x in b if norm(x))
            taken = [norm(x) for hunk in removed(p) for x in hunk if norm(x)]
            if not set(patch_files(p)) & files or not all(x in cut for x in taken):
                problems.append("%s: a wrong answer of write exercise %s changes only lines of its blocks" % (base, ex))
        stock.setdefault(ex, []).append((base, mistake))
    return known, stock, problems


def owed():
    try:
        with open(OLD_BAR) as f:
            return {l.split("#")[0].strip() for l in f if l.split("#")[0].strip()}
    except FileNotFoundError:
        return set()


def mutants(table=False):
    known, stock, problems = mutant_stock()
    late = owed()
    for ex in late - set(known):
        problems.append("tests/meta/mutants/OWED: %s is no exercise" % ex)
    rows = []
    for ex, (name, info, files) in known.items():
        kind = info.get("kind", "write")
        have = stock.get(ex, [])
        n, distinct = len(have), {m for _, m in have}
        need_n, need_kinds = NEED.get(kind, (3, 3))
        if kind == "fix":
            short = n < need_n or not FIX_KINDS <= distinct
        else:
            short = n < need_n or len(distinct) < need_kinds
        rows.append((ex, kind, info.get("level", ""), n, sorted(distinct), short))
        if short and ex not in late:
            problems.append("%s (%s): %d wrong answers (%s) in tests/meta/mutants/; it needs %s" %
                            (ex, kind, n, ", ".join(sorted(distinct)) or "none",
                             "one that hides the symptom and one that fixes the wrong thing" if kind == "fix"
                             else "%d, of %d different mistakes" % (need_n, need_kinds)))
        if not short and ex in late:
            problems.append("tests/meta/mutants/OWED: %s meets the bar now: take it off the list" % ex)
        if short and ex in late and kind == "write" and n == 0 and not old_bar_met(ex, name, info, files):
            problems.append("%s: no mutant in tests/meta/mutants/ changes its blocks and names its tests" % ex)
    if table:
        chapters = {}
        for ex, kind, level, n, distinct, short in rows:
            print("%-36s %-7s %-9s %2d  %s%s" % (ex, kind, level, n, ", ".join(distinct),
                                                  "  (owed)" if short else ""))
            c = chapters.setdefault(ex.split("/")[0], [0, 0, 0])
            c[0] += 1
            c[1] += n
            c[2] += 0 if short else 1
        print()
        for ch, (exs, n, done) in sorted(chapters.items()):
            print("%-20s %2d exercises, %3d wrong answers, %2d at the bar" % (ch, exs, n, done))
        print("%-20s %2d exercises, %3d wrong answers, %2d at the bar" %
              ("all", sum(c[0] for c in chapters.values()), sum(c[1] for c in chapters.values()),
               sum(c[2] for c in chapters.values())))
    for line in problems:
        print(line)
    return 1 if problems else 0


def old_bar_met(ex, name, info, files):
    """The bar before exercise:/mistake: headers: one patch that names the
    exercise's test file and changes only lines of its blocks."""
    test = "tests/%s/%s.bats" % (ex.split("/")[0], name)
    cut = set()
    for f in files:
        if os.path.exists(os.path.join(top, f)):
            for b in blocks(os.path.join(top, f), name, f.startswith("solutions/")):
                cut.update(norm(x) for x in b if norm(x))
    for p in glob.glob(os.path.join(top, "tests", "meta", "mutants", "*.patch")):
        if test not in killed_by(p) or not set(patch_files(p)) & files:
            continue
        taken = [norm(x) for hunk in removed(p) for x in hunk if norm(x)]
        if taken and all(x in cut for x in taken):
            return True
    return False


def main():
    if "--mutants-table" in argv:
        return mutants(table=True)
    if "--mutants" in argv:
        return mutants()
    if hide_dir is not None:
        return hide_all(hide_dir)
    runs = {}  # a run of normalized lines -> the exercise it comes from
    for ex, lines, fix in answers():
        for i in range(len(lines) - RUN + 1):
            run = tuple(lines[i:i + RUN])
            if sum(len(x) for x in run) >= MIN_CHARS:
                runs.setdefault(run, ex)
        if fix and len(lines) < RUN and sum(len(x) for x in lines) >= FIX_CHARS:
            runs.setdefault(tuple(lines), ex)
    sizes = sorted({len(r) for r in runs})
    bad = 0
    for page in pages():
        with open(page, errors="replace") as f:
            numbered = [(n + 1, norm(x)) for n, x in enumerate(f)]
        lines = [(n, x) for n, x in numbered if x]
        seen = set()
        for size in sizes:
            for i in range(len(lines) - size + 1):
                run = tuple(x for _, x in lines[i:i + size])
                ex = runs.get(run)
                if ex and (ex, page) not in seen:
                    seen.add((ex, page))
                    print("%s:%d: prints the answer of exercise %s: %s" %
                          (os.path.relpath(page, top), lines[i][0], ex, " / ".join(run)))
                    bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
