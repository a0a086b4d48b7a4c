#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# snippets.sh [--fix] [README...]: keep code excerpts in the READMEs identical
# to the source files they come from.
#
# In a source file, an excerpt is marked
#
#     /* snippet: NAME */        (or "# snippet: NAME" in shell and Makefiles)
#     ...lines...
#     /* end snippet */          (or "# end snippet")
#
# and in a README the fenced block right after
#
#     <!-- snippet: path/from/repo/root.c NAME -->
#
# must hold exactly those lines, less the marker's own indentation. Without
# --fix, print every block that differs or names a missing file or snippet,
# and exit 1. With --fix, rewrite the blocks from the sources.
set -uo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$top" || exit 1

fix=0
[ "${1:-}" = --fix ] && { fix=1; shift; }
if [ $# -gt 0 ]; then
    readmes=("$@")
else
    mapfile -t readmes < <(find chapters common book solutions -name '*.md' 2>/dev/null | sort)
fi

# extract FILE NAME: print the snippet's lines, dedented; exit 1 if not found.
# What an exercise asks for is left out, and one line "/* ... */" at its
# indentation stands where it was: a write exercise's EXERCISE BEGIN/END
# block, and what a fix exercise made from FILE takes out (the lines its
# learner has to put back: check-answers.py --hide-dir). A README shows the
# program around an exercise, never its answer.
hides="$(mktemp -d)"
trap 'rm -rf "$hides"' EXIT
python3 "$top/common/mk/check-answers.py" --hide-dir "$hides" "$top" || exit 1
extract() {
    local hide="$hides/${1//\//%}"
    [ -f "$hide" ] || hide=/dev/null
    awk -v name="$2" -v hidefile="$hide" '
        function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
        !inside && (trim($0) == "/* snippet: " name " */" || trim($0) == "# snippet: " name) {
            inside = 1; found = 1
            indent = $0; sub(/[^ \t].*$/, "", indent)
            next
        }
        inside && (trim($0) == "/* end snippet */" || trim($0) == "# end snippet") { inside = 0; exit }
        # an exercise block is what a learner writes: one "/* ... */" stands
        # for it, at its indentation
        inside && trim($0) ~ /^\/\* EXERCISE BEGIN [a-z0-9-]*:.*\*\/$/ {
            lead = $0; sub(/[^ \t].*$/, "", lead)
            raw[++n] = lead "/* ... */"
            cut = 1
            next
        }
        inside && trim($0) == "/* EXERCISE END */" { cut = 0; next }
        inside && !cut { raw[++n] = $0 }
        function indent_of(line) { match(line, /^[ \t]*/); return RLENGTH }
        function header(line) {
            return line ~ /^[ \t]*(\} *)?(if|while|for) *\(.*\) *(\/\*.*\*\/)? *$/ || line ~ /^[ \t]*(\} *)?else *$/
        }
        function out(line) {
            if (substr(line, 1, length(indent)) == indent) line = substr(line, length(indent) + 1)
            print line
        }
        END {
            if (!found || inside) exit 1
            runs = 0
            while ((getline h < hidefile) > 0) {
                if (h == "\f") { runs++; continue }
                run[runs + 1, ++len[runs + 1]] = h
            }
            # a brace-less if/while/for/else goes with a body left out, and a
            # body goes with its header, so that the excerpt still reads as C
            m = 0
            for (i = 1; i <= n; i++) {
                for (r = 1; r <= runs; r++) {
                    if (i + len[r] - 1 > n) continue
                    for (k = 1; k <= len[r] && raw[i + k - 1] == run[r, k]; k++) ;
                    if (k > len[r]) break
                }
                if (r > runs) { kept[++m] = raw[i]; continue }
                lead = raw[i]; sub(/[^ \t].*$/, "", lead)
                if (m > 0 && header(kept[m]) && indent_of(kept[m]) < length(lead)) {
                    lead = kept[m]; sub(/[^ \t].*$/, "", lead); m--
                }
                last = raw[i + len[r] - 1]
                i += len[r] - 1
                if (header(last))
                    while (i < n && indent_of(raw[i + 1]) > indent_of(last)) i++
                kept[++m] = lead "/* ... */"
            }
            for (i = 1; i <= m; i++) out(kept[i])
        }' "$1"
}

problems=0
for readme in "${readmes[@]}"; do
    grep -q '<!-- snippet: ' "$readme" || continue
    out="$(mktemp)"
    # Walk the README: copy it, replacing each marked block's body.
    state=copy
    lineno=0
    while IFS= read -r line || [ -n "$line" ]; do
        lineno=$((lineno + 1))
        case "$state" in
        copy)
            printf '%s\n' "$line" >>"$out"
            if [[ "$line" =~ ^\<!--\ snippet:\ ([^ ]+)\ ([^ ]+)\ --\>$ ]]; then
                src="${BASH_REMATCH[1]}" name="${BASH_REMATCH[2]}" mark=$lineno
                state=want_fence
            fi
            ;;
        want_fence)
            printf '%s\n' "$line" >>"$out"
            if [[ "$line" =~ ^\`\`\` ]]; then
                state=body
                body="$(mktemp)"
            else
                echo "$readme:$mark: snippet marker not followed by a \`\`\` block" >&2
                problems=$((problems + 1))
                state=copy
            fi
            ;;
        body)
            if [[ "$line" =~ ^\`\`\`[[:space:]]*$ ]]; then
                want="$(mktemp)"
                if [ ! -f "$src" ]; then
                    echo "$readme:$mark: $src: no such file" >&2
                    problems=$((problems + 1))
                    cat "$body" >>"$out"
                elif ! extract "$src" "$name" >"$want"; then
                    echo "$readme:$mark: $src has no snippet '$name' (or it never ends)" >&2
                    problems=$((problems + 1))
                    cat "$body" >>"$out"
                elif ! cmp -s "$want" "$body"; then
                    if [ "$fix" = 1 ]; then
                        echo "updated $readme:$mark from $src ($name)"
                        cat "$want" >>"$out"
                    else
                        echo "$readme:$mark: the excerpt differs from $src ($name):" >&2
                        diff "$want" "$body" | sed 's/^/    /' | head -n 20 >&2
                        problems=$((problems + 1))
                        cat "$body" >>"$out"
                    fi
                else
                    cat "$body" >>"$out"
                fi
                rm -f "$want" "$body"
                printf '%s\n' "$line" >>"$out"
                state=copy
            else
                printf '%s\n' "$line" >>"$body"
            fi
            ;;
        esac
    done <"$readme"
    if [ "$state" != copy ]; then
        echo "$readme:$mark: snippet block never closed" >&2
        problems=$((problems + 1))
    fi
    if [ "$fix" = 1 ] && ! cmp -s "$out" "$readme"; then
        cat "$out" >"$readme"
    fi
    rm -f "$out"
done

if [ "$problems" -gt 0 ]; then
    [ "$fix" = 1 ] || echo "$problems excerpt(s) out of date: run 'make snippets' to rewrite them from the sources" >&2
    exit 1
fi
exit 0
