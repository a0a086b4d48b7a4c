# test-long: builds the whole book (pandoc) and renders it in a headless browser (about 45 s)
# The book: `make book` turns the chapter READMEs and book/*.md into HTML
# pages and an EPUB (build/book/), and a real browser renders them. Every
# link and image must resolve, every page must have its tables of contents,
# and every claim in the "claims checked" appendix must name a test that
# exists.
load ../helpers/common
bats_require_minimum_version 1.5.0

setup_file() {
    export BOOK="$TOP/build/book"
    command -v pandoc >/dev/null || return 0
    # Built once for the whole file; the log is kept for the first test.
    "$TOP/common/mk/book.sh" >"$BATS_FILE_TMPDIR/book.log" 2>&1
    echo $? >"$BATS_FILE_TMPDIR/book.status"
}

require_pandoc() {
    command -v pandoc >/dev/null || skip "pandoc is not installed (make deps installs it)"
}

require_chromium() {
    CHROMIUM=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
    [ -n "$CHROMIUM" ] || skip "Chromium is not installed (make deps installs it: Debian package chromium)"
}

# chromium ARGS... URL: headless, no sandbox (root, containers), no GPU.
chromium() {
    timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --no-first-run --disable-extensions --allow-file-access-from-files \
        --user-data-dir="$BATS_TEST_TMPDIR/chromium-profile" "$@" 2>/dev/null
}

# the chapter pages the book must have: one per chapters/NN-slug/README.md
chapter_pages() {
    local r
    for r in "$TOP"/chapters/[0-9][0-9]-*/README.md; do
        [ -f "$r" ] && basename "$(dirname "$r")"
    done
}

@test "make book builds a page for every chapter README, the front and back matter, and the EPUB" {
    require_pandoc
    [ "$(cat "$BATS_FILE_TMPDIR/book.status")" = 0 ] || fail "book.sh failed:
$(cat "$BATS_FILE_TMPDIR/book.log")"
    local p missing=""
    for p in index preface glossary dotnet claims $(chapter_pages); do
        [ -s "$BOOK/$p.html" ] || missing+=" $p.html"
    done
    [ -z "$missing" ] || fail "missing pages in build/book:$missing"
    [ -s "$BOOK/course.epub" ] || fail "no build/book/course.epub"
    # the build warns about broken links and missing images on stderr
    if grep -q 'broken link\|missing image' "$BATS_FILE_TMPDIR/book.log"; then
        fail "$(cat "$BATS_FILE_TMPDIR/book.log")"
    fi
}

@test "every link and image in the HTML book resolves: pages, #fragments, diagrams, repository files" {
    require_pandoc
    run "$TOP/common/mk/book-check.sh" "$BOOK"
    [ "$status" -eq 0 ] || fail "$output"
}

@test "the link checker catches a missing page, a missing id and a missing repository file" {
    require_pandoc
    local d="$BATS_TEST_TMPDIR/book"
    mkdir -p "$d"
    printf '<a href="#here">ok</a><p id="here"></p>' >"$d/index.html"
    printf '<a href="gone.html">x</a><a href="index.html#nowhere">y</a><img src="../../no/such.c">' >"$d/bad.html"
    run "$TOP/common/mk/book-check.sh" "$d"
    assert_failure
    assert_output --partial "bad.html: gone.html: no such file in the book"
    assert_output --partial "bad.html: index.html#nowhere: no id \"nowhere\" in index.html"
    assert_output --partial "bad.html: ../../no/such.c: no such file in the repository"
}

@test "every page has the sidebar of all pages, a table of contents, and previous/next links in order" {
    require_pandoc
    local pages=(preface $(chapter_pages) glossary dotnet claims) i p
    grep -q 'id="book-toc"' "$BOOK/index.html" || fail "index.html has no table of contents (#book-toc)"
    for p in "${pages[@]}"; do
        grep -q "href=\"$p.html\"" "$BOOK/index.html" || fail "the table of contents does not list $p.html"
    done
    for i in "${!pages[@]}"; do
        p="${pages[$i]}"
        grep -q 'id="book-nav"' "$BOOK/$p.html" || fail "$p.html has no sidebar"
        grep -q 'class="current"' "$BOOK/$p.html" || fail "$p.html: the sidebar does not mark it"
        grep -q 'id="TOC"' "$BOOK/$p.html" || fail "$p.html has no table of contents of its own"
        if [ "$i" -gt 0 ]; then
            grep -q "rel=\"prev\" href=\"${pages[$((i - 1))]}.html\"" "$BOOK/$p.html" ||
                fail "$p.html: previous should be ${pages[$((i - 1))]}.html"
        fi
        if [ "$i" -lt $((${#pages[@]} - 1)) ]; then
            grep -q "rel=\"next\" href=\"${pages[$((i + 1))]}.html\"" "$BOOK/$p.html" ||
                fail "$p.html: next should be ${pages[$((i + 1))]}.html"
        fi
    done
}

@test "code is highlighted, and nothing is fetched from the network" {
    require_pandoc
    local p
    p=$(chapter_pages | head -n 1)
    grep -q '<code class="sourceCode c">' "$BOOK"/[0-9][0-9]-*.html || fail "no C code block highlighted"
    grep -q '<span class="kw">' "$BOOK"/[0-9][0-9]-*.html || fail "no keyword highlighted"
    if grep -lE '<(script|link|img)[^>]+(src|href)="(https?:)?//' "$BOOK"/*.html; then
        fail "a page loads something from the network (above)"
    fi
}

@test "the EPUB is a zip whose first entry is an uncompressed mimetype, and pandoc reads it back" {
    require_pandoc
    local epub="$BOOK/course.epub"
    # A zip's first local header: "PK\3\4", and the EPUB spec wants the file
    # name "mimetype" at offset 30, stored, holding application/epub+zip.
    [ "$(head -c 4 "$epub" | od -An -c | tr -d ' ')" = 'PK003004' ] || fail "not a zip file"
    [ "$(dd if="$epub" bs=1 skip=30 count=8 status=none)" = mimetype ] || fail "the first entry is not mimetype"
    [ "$(dd if="$epub" bs=1 skip=38 count=20 status=none)" = application/epub+zip ] ||
        fail "mimetype is not stored as application/epub+zip"
    run pandoc --from epub --to plain "$epub"
    assert_success
    assert_output --partial "Appendix B"
    local ch
    ch=$(sed -n 's/^# //p' "$TOP/$(ls "$TOP"/chapters/[0-9][0-9]-*/README.md | head -n 1 | sed "s|^$TOP/||")" | head -n 1)
    assert_output --partial "${ch#*· }"
}

# test_names FILE: the names of FILE's tests; for a link to the shared echo
# suite, with its server's name and titles put in, as bats shows them.
test_names() {
    if [[ -L "$TOP/$1" && "$1" == */suite-*.bats ]]; then
        (
            load ../helpers/echo_suite
            suite_load_server "${1##*/}"
            sed -n 's/^@test "\(.*\)" {$/\1/p' "$TOP/$1" | while IFS= read -r t; do eval "echo \"$t\""; done
        )
    else
        sed -n 's/^@test "\(.*\)" {$/\1/p' "$TOP/$1"
    fi
}

@test "the claims appendix names only tests that exist, in the files it names" {
    local f name bad="" n=0
    while IFS=$'\t' read -r f name; do
        n=$((n + 1))
        test_names "$f" 2>/dev/null | grep -qxF "$name" || bad+="
  $f: \"$name\""
    done < <(grep -oE '\[`tests/[^`]+\.bats`\]\([^)]*\): "[^"]+"' "$TOP/book/claims.md" |
        sed -E 's/^\[`([^`]+)`\]\([^)]*\): "(.*)"$/\1\t\2/')
    [ "$n" -ge 20 ] || fail "expected at least 20 claims with their tests, found $n"
    [ -z "$bad" ] || fail "claims.md names tests that do not exist:$bad"
}

@test "a link to a chapter not in the book becomes text; chapter, source and image links are rewritten" {
    require_pandoc
    local d="$BATS_TEST_TMPDIR"
    printf '%s\n' '# T' '' '[next](../99-not-yet/README.md) [epoll](../04-epoll/README.md#the-idea)' \
        '[code](bench.c) [here](#t) ![pic](../../book/diagrams/epoll-lists.svg) ![chart](figures/memory.svg)' >"$d/in.md"
    run --separate-stderr pandoc --from gfm --to html5 --lua-filter "$TOP/book/links.lua" -M book-mode=html \
        -M book-page=00-demo -M book-src=chapters/00-demo -M book-repo=../.. -M "book-top=$TOP" \
        -M "book-pages=chapters/04-epoll/README.md=04-epoll chapters/00-demo/README.md=00-demo" "$d/in.md"
    assert_success
    assert_output --partial '<p>next <a'
    refute_output --partial '99-not-yet'
    [[ "$stderr" == *"99-not-yet/README.md, which is not in the book yet"* ]] || fail "no warning: $stderr"
    assert_output --partial 'href="04-epoll.html#the-idea"'
    assert_output --partial 'href="../../chapters/00-demo/bench.c"'
    assert_output --partial 'href="#t"'
    assert_output --partial 'src="diagrams/epoll-lists.svg"'
    assert_output --partial 'src="figures/00-demo/memory.svg"'
}

@test "headless Chromium renders the index and chapters: screenshots, contents, every image loaded, the style applied" {
    require_pandoc
    require_chromium
    local shots="$BOOK/screenshots" chapter charts page out
    chapter=$(chapter_pages | grep -m1 epoll || chapter_pages | head -n 1)
    # and the chapter with the charts (images from the chapter's figures/)
    charts=$(chapter_pages | grep -m1 c10k || true)
    mkdir -p "$shots"
    for page in index "$chapter" $charts; do
        chromium --window-size=1280,2000 --screenshot="$shots/$page.png" "file://$BOOK/$page.html" ||
            fail "Chromium could not render $page.html"
        [ -s "$shots/$page.png" ] || fail "no screenshot of $page.html"
        [ "$(head -c 8 "$shots/$page.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
            fail "$shots/$page.png is not a PNG"

        # The page inside a small harness page, whose script asks the
        # browser what it really loaded and writes it into the DOM.
        cat >"$BATS_TEST_TMPDIR/harness.html" <<EOF
<html><body><iframe id="f" src="file://$BOOK/$page.html" width="1280" height="2000"></iframe>
<pre id="out">pending</pre><script>
document.getElementById('f').addEventListener('load', function () {
  var out = [], doc = this.contentDocument, i, img, a, id;
  out.push('toc ' + (doc.getElementById('TOC') || doc.getElementById('book-toc') ? 'yes' : 'no'));
  out.push('nav ' + doc.querySelectorAll('#book-nav li a').length);
  out.push('sheets ' + doc.styleSheets.length + ' rules ' + (doc.styleSheets.length ? doc.styleSheets[0].cssRules.length : 0));
  out.push('sidebar-width ' + Math.round(doc.getElementById('book-nav').getBoundingClientRect().width));
  for (i = 0; i < doc.images.length; i++) {
    img = doc.images[i];
    out.push((img.complete && img.naturalWidth > 0 ? 'image-ok ' : 'image-broken ') + img.getAttribute('src'));
  }
  for (i = 0; i < doc.links.length; i++) {
    a = doc.links[i].getAttribute('href');
    if (a.charAt(0) === '#' && a.length > 1 && !doc.getElementById(decodeURIComponent(a.slice(1))))
      out.push('anchor-broken ' + a);
  }
  document.getElementById('out').textContent = out.join('\n');
});
</script></body></html>
EOF
        out=$(chromium --virtual-time-budget=10000 --dump-dom "file://$BATS_TEST_TMPDIR/harness.html" |
            sed -n '/<pre id="out">/,/<\/pre>/p' | sed 's/<[^>]*>//g')
        [ -n "$out" ] && ! grep -q pending <<<"$out" || fail "$page.html: the harness got no answer from Chromium: $out"
        grep -q '^toc yes$' <<<"$out" || fail "$page.html: no table of contents in the rendered page: $out"
        grep -Eq '^nav ([5-9]|[1-9][0-9]+)$' <<<"$out" || fail "$page.html: the sidebar lists too few pages: $out"
        grep -Eq '^sheets 1 rules [1-9][0-9]*$' <<<"$out" || fail "$page.html: book.css was not applied: $out"
        grep -Eq '^sidebar-width (2[0-9][0-9]|3[0-9][0-9])$' <<<"$out" || fail "$page.html: the sidebar is not laid out beside the text: $out"
        if grep -q 'image-broken\|anchor-broken' <<<"$out"; then
            fail "$page.html, as Chromium rendered it:
$out"
        fi
    done
    [ "$chapter" = "$(chapter_pages | grep -m1 epoll || true)" ] || return 0
    # chapter 04 shows the epoll diagram
    grep -q 'src="diagrams/epoll-lists.svg"' "$BOOK/$chapter.html" || fail "04-epoll.html does not show its diagram"
    # and its trace picture (make trace), which Chromium loaded above like every image
    grep -q 'src="figures/04-epoll/trace-echo-epoll-lt.svg"' "$BOOK/$chapter.html" ||
        fail "04-epoll.html does not show its trace picture"
}
