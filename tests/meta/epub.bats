# test-long: builds the whole book (pandoc) and runs epubcheck on its EPUB (about 40 s)
# The EPUB that `make book` writes must pass epubcheck, the W3C's EPUB
# validator, with no error: a reader (Apple Books, Kobo, an e-reader's
# store) may refuse a book that does not. The pictures are the catch:
# Graphviz writes SVGs with a DOCTYPE, which EPUB 3 forbids, so book.sh
# puts copies without it into the EPUB (book/epub-svg.lua). Warnings are
# printed, not failed on.
load ../helpers/common
bats_require_minimum_version 1.5.0

setup_file() {
    export BOOK="$BATS_FILE_TMPDIR/book"
    command -v pandoc >/dev/null || return 0
    # A book of its own: make book and tests/meta/book.bats use build/book.
    BOOK_OUT="$BOOK" timeout 600 "$TOP/common/mk/book.sh" >"$BATS_FILE_TMPDIR/book.log" 2>&1
    echo $? >"$BATS_FILE_TMPDIR/book.status"
}

require_pandoc() {
    command -v pandoc >/dev/null || skip "pandoc is not installed (make deps installs it)"
}

# require_epubcheck: set EPUBCHECK to the command that runs it, or skip.
# Debian's /usr/bin/epubcheck is the jar itself, which the kernel runs
# through binfmt_misc (jarwrapper); a container often has no binfmt_misc,
# so a jar is run with java -jar, as jarwrapper would.
require_epubcheck() {
    local bin real
    bin=$(command -v epubcheck) || skip "epubcheck is not installed (make deps installs it: Debian package epubcheck)"
    real=$(readlink -f "$bin")
    EPUBCHECK=("$bin")
    if [ "$(head -c 2 "$real")" = PK ]; then
        command -v java >/dev/null || fail "$bin is a Java archive and there is no java to run it (Debian: default-jre)"
        EPUBCHECK=(java -jar "$real")
    fi
}

# run_epubcheck FILE: run epubcheck; $output holds its report, $status its exit status.
run_epubcheck() {
    run timeout 300 "${EPUBCHECK[@]}" "$1"
}

# the line "Messages: N fatals / N errors / N warnings / N infos"
epubcheck_counts() {
    grep -E '^Messages: [0-9]+ fatals / [0-9]+ errors / [0-9]+ warnings' <<<"$output" || true
}

# small_epub DIR SVG [FILTER]: DIR/pic.epub, one page showing SVG, made by
# pandoc as book.sh does, through book/epub-svg.lua when FILTER is "clean".
small_epub() {
    local d="$1" svg="$2"
    mkdir -p "$d/media"
    printf '%s\n' '# A picture' '' "![A test picture]($svg)" >"$d/pic.md"
    local opts=(--from gfm --to epub3 -M "title=Picture" -M lang=en -M date=2026-01-01 -o "$d/pic.epub")
    [ "${3:-}" != clean ] || opts+=(--lua-filter "$TOP/book/epub-svg.lua" -M "book-epub-media=$d/media")
    timeout 60 pandoc "${opts[@]}" "$d/pic.md"
}

@test "epubcheck finds no error in the book's EPUB (its warnings, if any, are listed)" {
    require_pandoc
    require_epubcheck
    [ "$(cat "$BATS_FILE_TMPDIR/book.status")" = 0 ] || fail "book.sh failed:
$(cat "$BATS_FILE_TMPDIR/book.log")"
    run_epubcheck "$BOOK/course.epub"
    local counts
    counts=$(epubcheck_counts)
    [ -n "$counts" ] || fail "epubcheck gave no summary (status $status):
$output"
    echo "# epubcheck: $counts" >&3
    grep '^WARNING' <<<"$output" | sed 's/^/#   /' >&3 || true
    [[ "$counts" == *" 0 fatals / 0 errors /"* ]] && [ "$status" -eq 0 ] ||
        fail "epubcheck rejects build/book/course.epub (status $status):
$(grep -E '^(FATAL|ERROR)' <<<"$output" | head -n 30)
$counts"
}

@test "the EPUB holds every picture of the book, each without a DOCTYPE or an entity declaration" {
    require_pandoc
    command -v python3 >/dev/null || skip "python3 is not installed (make deps installs it)"
    [ "$(cat "$BATS_FILE_TMPDIR/book.status")" = 0 ] || fail "book.sh failed:
$(cat "$BATS_FILE_TMPDIR/book.log")"
    local x="$BATS_TEST_TMPDIR/x" want have f bad=""
    timeout 60 python3 -m zipfile -e "$BOOK/course.epub" "$x" || fail "cannot unpack the EPUB"
    # the distinct SVGs the HTML pages show: the EPUB must hold as many
    want=$(cat "$BOOK"/*.html | grep -oE '<img [^>]*src="[^"]*\.svg"' | sed 's/.*src="//' | sort -u | wc -l)
    have=$(find "$x" -name '*.svg' | wc -l)
    [ "$want" -ge 5 ] || fail "the HTML book shows only $want SVG pictures: expected the diagrams and charts"
    [ "$have" -eq "$want" ] || fail "the HTML book shows $want SVG pictures, the EPUB holds $have"
    while IFS= read -r f; do
        grep -q '<!DOCTYPE\|<!ENTITY' "$f" && bad+=" ${f#"$x"/}"
        grep -q '<svg' "$f" || bad+=" ${f#"$x"/}(no-svg-element)"
    done < <(find "$x" -name '*.svg')
    [ -z "$bad" ] || fail "SVGs in the EPUB with a DOCTYPE, an entity declaration or no <svg>:$bad"
}

@test "epubcheck rejects a picture with its DOCTYPE, and book/epub-svg.lua's copy passes" {
    require_pandoc
    require_epubcheck
    local d="$BATS_TEST_TMPDIR" svg
    # a Graphviz SVG as committed, DOCTYPE and all
    svg=$(grep -l '<!DOCTYPE svg PUBLIC' "$TOP"/book/diagrams/*.svg | head -n 1)
    [ -n "$svg" ] || skip "no SVG in book/diagrams/ has a DOCTYPE to test with"
    small_epub "$d/raw" "$svg" || fail "pandoc could not make the EPUB"
    run_epubcheck "$d/raw/pic.epub"
    [ "$status" -ne 0 ] || fail "epubcheck accepted an SVG with a DOCTYPE: this check would miss one:
$output"
    assert_output --partial "OPF-073"

    small_epub "$d/clean" "$svg" clean || fail "pandoc with book/epub-svg.lua could not make the EPUB"
    run_epubcheck "$d/clean/pic.epub"
    [ "$status" -eq 0 ] || fail "the cleaned copy still fails epubcheck:
$output"
    assert_output --partial "0 fatals / 0 errors"
    # the copy is the picture less its DOCTYPE, nothing else
    run diff <(sed '/<!DOCTYPE/,/>$/d' "$svg") "$d"/clean/media/*.svg
    assert_success
}

@test "book/epub-svg.lua removes a DOCTYPE with an internal subset, and stops on an entity it declared" {
    require_pandoc
    local d="$BATS_TEST_TMPDIR"
    # quotes, comments and '>' inside the subset must not end the DOCTYPE early
    cat >"$d/subset.svg" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<!-- drawn by hand -->
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd" [
  <!ENTITY % svg-clip.mod "IGNORE">
  <!-- a ]> in a comment -->
  <!ENTITY arrow "->">
  <!ATTLIST svg data-x CDATA '>'>
]>
<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>a &lt; b</text></svg>
EOF
    small_epub "$d/ok" "$d/subset.svg" clean || fail "pandoc with book/epub-svg.lua failed"
    run cat "$d"/ok/media/*.svg
    assert_output '<?xml version="1.0" encoding="UTF-8"?>
<!-- drawn by hand -->
<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>a &lt; b</text></svg>'

    sed 's/a &lt; b/a \&arrow; b/' "$d/subset.svg" >"$d/entity.svg"
    run --separate-stderr small_epub "$d/bad" "$d/entity.svg" clean
    assert_failure
    [[ "$stderr" == *"$d/entity.svg: uses the entity &arrow;"* ]] || fail "no clear message: $stderr"
}
