#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# book.sh: build the book from the chapter READMEs and book/*.md, with pandoc:
#
#   build/book/index.html       the title page and the table of contents
#   build/book/NAME.html        one page per chapter, front and back matter
#   build/book/course.epub      the same book as one EPUB
#
# The pages, in order: book/preface.md, every chapters/NN-slug/README.md
# there is (in NN order: a chapter that does not exist yet is simply not in
# the book), book/glossary.md, book/dotnet.md, book/claims.md. The READMEs
# are used exactly as they are; book/links.lua makes their links work in the
# book. Pictures: book/diagrams/*.dot, rendered to SVG first when Graphviz
# is installed (common/mk/diagrams.sh), and each chapter's charts
# (chapters/NN-slug/figures/*.svg, committed with the figures they show).
# The EPUB gets copies of its SVGs without their DOCTYPE (book/epub-svg.lua).
#
# Environment: BOOK_OUT (default build/book), BOOK_SOURCE_URL (where links to
# source files go, e.g. https://example.org/course/blob/main; default: a
# relative path from the pages into this repository).
set -uo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$top" || exit 1

out="${BOOK_OUT:-$top/build/book}"
book_title="Async I/O from the ground up, in C"

if ! command -v pandoc >/dev/null; then
    echo "book: pandoc is not installed: run make deps (Debian: apt-get install pandoc)" >&2
    exit 1
fi

# ---- the pictures ------------------------------------------------------------
common/mk/diagrams.sh
case $? in
0 | 77) ;;
*) echo "book: a diagram did not render (above)" >&2; exit 1 ;;
esac

rm -rf "$out"
mkdir -p "$out/diagrams" || exit 1
cp book/book.css "$out/"
cp book/diagrams/*.svg "$out/diagrams/" 2>/dev/null
for fig in chapters/[0-9][0-9]-*/figures; do
    [ -d "$fig" ] || continue
    mkdir -p "$out/figures/$(basename "$(dirname "$fig")")" &&
        cp "$fig"/*.svg "$out/figures/$(basename "$(dirname "$fig")")/" || exit 1
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# ---- the pages -----------------------------------------------------------------
srcs=() names=()
add_page() { [ -f "$1" ] && { srcs+=("$1"); names+=("$2"); }; }
add_page book/preface.md preface
for readme in chapters/[0-9][0-9]-*/README.md; do
    [ -f "$readme" ] && add_page "$readme" "$(basename "$(dirname "$readme")")"
done
add_page book/glossary.md glossary
add_page book/dotnet.md dotnet
add_page book/claims.md claims

pages_map=""
titles=()
for i in "${!srcs[@]}"; do
    pages_map+="${srcs[$i]}=${names[$i]} "
    t=$(sed -n 's/^# //p' "${srcs[$i]}" | head -n 1)
    [ -n "$t" ] || { echo "book: ${srcs[$i]} has no '# title' line" >&2; exit 1; }
    titles+=("$t")
done

if [ -n "${BOOK_SOURCE_URL:-}" ]; then
    repo="${BOOK_SOURCE_URL%/}"
else
    repo=$(realpath -m --relative-to="$out" "$top")
fi

# html_text TEXT: TEXT escaped for HTML, `code` as <code>.
html_text() {
    sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/`\([^`]*\)`/<code>\1<\/code>/g' <<<"$1"
}
plain_text() {
    sed 's/`//g; s/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g' <<<"$1"
}

# sidebar CURRENT: the list of every page, CURRENT marked.
sidebar() {
    local i cls
    echo '<ol class="chapters">'
    for i in "${!names[@]}"; do
        cls=""
        [ "${names[$i]}" = "$1" ] && cls=' class="current" aria-current="page"'
        echo "<li$cls><a href=\"${names[$i]}.html\">$(html_text "${titles[$i]}")</a></li>"
    done
    echo '</ol>'
}

common_opts=(--from gfm --to html5 --standalone --template book/template.html --wrap=none
    --lua-filter book/links.lua -M book-mode=html -M "book-pages=$pages_map"
    -M "book-repo=$repo" -M "book-top=$top" -V "book-title=$book_title")
warnings="$tmp/warnings"
: >"$warnings"

n=${#srcs[@]}
for i in "${!srcs[@]}"; do
    name="${names[$i]}"
    sidebar "$name" >"$tmp/nav-$name.html"
    nav=()
    if [ "$i" -eq 0 ]; then
        nav+=(-V prev-href=index.html -V "prev-title=Contents")
    else
        nav+=(-V "prev-href=${names[$((i - 1))]}.html" -V "prev-title=$(plain_text "${titles[$((i - 1))]}")")
    fi
    if [ "$i" -lt $((n - 1)) ]; then
        nav+=(-V "next-href=${names[$((i + 1))]}.html" -V "next-title=$(plain_text "${titles[$((i + 1))]}")")
    fi
    if ! pandoc "${common_opts[@]}" --toc --toc-depth=2 -M "book-page=$name" \
        -M "book-src=$(dirname "${srcs[$i]}")" "${nav[@]}" -B "$tmp/nav-$name.html" \
        -o "$out/$name.html" "${srcs[$i]}" 2>>"$warnings"; then
        cat "$warnings" >&2
        echo "book: pandoc failed on ${srcs[$i]}" >&2
        exit 1
    fi
done

# ---- the title page: book/index.md, then every page with its sections ----------
{
    cat book/index.md
    echo
    echo '<nav id="book-toc" class="book-toc" aria-label="Table of contents">'
    echo '<h2 id="contents">Contents</h2>'
    echo '<ol class="contents">'
    for i in "${!names[@]}"; do
        name="${names[$i]}"
        echo "<li><a href=\"$name.html\">$(html_text "${titles[$i]}")</a>"
        # the page's own table of contents, its links made absolute (not
        # the glossary's: its sections are the letters A to Z)
        [ "$name" = glossary ] || sed -n '/<!-- toc-begin -->/,/<!-- toc-end -->/p' "$out/$name.html" |
            sed '1d;$d' | sed "s|href=\"#|href=\"$name.html#|g"
        echo "</li>"
    done
    echo '</ol>'
    echo '<p class="downloads">The same book as an EPUB: <a href="course.epub">course.epub</a>.</p>'
    echo '</nav>'
} >"$tmp/index.md"
sidebar index >"$tmp/nav-index.html"
if ! pandoc "${common_opts[@]}" -M book-page=index -M book-src=book \
    -V "next-href=${names[0]}.html" -V "next-title=$(plain_text "${titles[0]}")" \
    -B "$tmp/nav-index.html" -o "$out/index.html" "$tmp/index.md" 2>>"$warnings"; then
    cat "$warnings" >&2
    echo "book: pandoc failed on the title page" >&2
    exit 1
fi

# ---- the EPUB: every page through the same filter, then one document ------------
jsons=()
for i in "${!srcs[@]}"; do
    if ! pandoc --from gfm --to json --lua-filter book/links.lua -M book-mode=epub \
        -M "book-pages=$pages_map" -M "book-top=$top" -M "book-page=${names[$i]}" \
        -M "book-src=$(dirname "${srcs[$i]}")" -o "$tmp/$i.json" "${srcs[$i]}" 2>>"$tmp/epub-warnings"; then
        cat "$tmp/epub-warnings" >&2
        echo "book: pandoc failed on ${srcs[$i]} (EPUB)" >&2
        exit 1
    fi
    jsons+=("$tmp/$i.json")
done
# The SVG pictures go in as copies without their DOCTYPE, which EPUB 3
# forbids (book/epub-svg.lua): any .svg the pages show, from any folder.
mkdir -p "$tmp/epub-svg" || exit 1
if ! pandoc --from json --to epub3 --toc --toc-depth=2 --epub-chapter-level=1 \
    --css book/epub.css -M "title=$book_title" -M lang=en -M "date=$(date +%Y-%m-%d)" \
    --lua-filter book/epub-svg.lua -M "book-epub-media=$tmp/epub-svg" \
    -o "$out/course.epub" "${jsons[@]}" 2>>"$warnings"; then
    cat "$warnings" >&2
    echo "book: pandoc failed on the EPUB" >&2
    exit 1
fi

# Each warning once (the HTML and the EPUB pass see the same links).
sort -u "$warnings" >&2
echo "book: $((n + 1)) pages in ${out#"$top"/}/ (open ${out#"$top"/}/index.html), and ${out#"$top"/}/course.epub"
