#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# book-check.sh [DIR]: check every link and image of the HTML book in DIR
# (default build/book): a link or src inside the book must name a file that
# exists and, with a #fragment, an id in that file; a link that leaves the
# book for the repository (a source file, a test) must name a path that
# exists. Links with a scheme (https:, mailto:) are not followed. Prints
# each broken one as PAGE: TARGET: why, and exits 1 if there is any.
set -uo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
dir="${1:-$top/build/book}"
[ -f "$dir/index.html" ] || { echo "book-check: no $dir/index.html: run make book first" >&2; exit 2; }
dir="$(cd "$dir" && pwd)"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# ids.txt: "page id" for every id; links.txt: "page target" for every href/src.
for f in "$dir"/*.html; do
    p=$(basename "$f")
    grep -oE ' id="[^"]*"' "$f" | sed -E "s/^ id=\"(.*)\"$/$p \1/"
done >"$tmp/ids.txt"
for f in "$dir"/*.html; do
    p=$(basename "$f")
    grep -oE ' (href|src)="[^"]*"' "$f" | sed -E "s/^ (href|src)=\"(.*)\"$/$p \2/"
done >"$tmp/links.txt"
(cd "$dir" && find . -type f | sed 's|^\./||') >"$tmp/files.txt"

# In the book: check files and fragments. Outside: list the paths for below.
awk -v outside="$tmp/outside.txt" '
    FILENAME ~ /ids.txt$/ { ids[$1 SUBSEP $2] = 1; next }
    FILENAME ~ /files.txt$/ { files[$0] = 1; next }
    {
        page = $1; target = $2
        if (target ~ /^[a-zA-Z][a-zA-Z0-9+.-]*:/) next
        path = target; frag = ""
        if ((i = index(target, "#")) > 0) { path = substr(target, 1, i - 1); frag = substr(target, i + 1) }
        if (path == "") path = page
        if (path ~ /^\.\.\// || path ~ /^\//) { print page " " path >outside; next }
        sub(/^\.\//, "", path)
        if (!(path in files)) { print page ": " target ": no such file in the book"; bad++; next }
        if (frag != "" && path ~ /\.html$/ && !((path SUBSEP frag) in ids)) {
            print page ": " target ": no id \"" frag "\" in " path; bad++
        }
    }
    END { exit bad > 0 }' "$tmp/ids.txt" "$tmp/files.txt" "$tmp/links.txt" >"$tmp/report"
: >>"$tmp/outside.txt"
while read -r page path; do
    [ -e "$dir/$path" ] || echo "$page: $path: no such file in the repository"
done < <(sort -u "$tmp/outside.txt") >>"$tmp/report"
if [ -s "$tmp/report" ]; then
    cat "$tmp/report"
    exit 1
fi
echo "book-check: $(wc -l <"$tmp/links.txt") links and images in $(ls "$dir"/*.html | wc -l) pages, all resolve"
