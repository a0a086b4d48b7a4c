# The pictures: book/diagrams/*.dot are the sources, the committed .svg files
# what Graphviz renders from them (make book re-renders them). A picture that
# was edited by hand, or a source changed without rendering it again, fails
# here, and so does a README that shows an image that does not exist.
load ../helpers/common

# check_diagrams [DIR]: diagrams.sh --check, skipping where it cannot compare.
check_diagrams() {
    run env ${1:+DIAGRAMS_DIR="$1"} "$TOP/common/mk/diagrams.sh" --check
    [ "$status" -ne 77 ] || skip "$output"
}

@test "every committed SVG is what dot renders from its .dot source, and every source has its SVG" {
    check_diagrams
    [ "$status" -eq 0 ] || fail "$output"
    local n
    n=$(ls "$TOP"/book/diagrams/*.dot | wc -l)
    [ "$n" -ge 5 ] || fail "expected the five diagrams of the book, found $n sources"
}

@test "the check notices an SVG that no longer matches its source, and a source without an SVG" {
    local d="$BATS_TEST_TMPDIR/diagrams"
    mkdir -p "$d"
    cp "$TOP"/book/diagrams/epoll-lists.dot "$TOP"/book/diagrams/epoll-lists.svg "$d/"
    sed -i 's/the process/the program/' "$d/epoll-lists.dot"
    check_diagrams "$d"
    assert_failure
    assert_output --partial "epoll-lists.svg differs from what dot renders"
    cp "$TOP"/book/diagrams/task-states.dot "$d/"
    check_diagrams "$d"
    assert_output --partial "task-states.dot has no"
}

# prose FILE: the Markdown without its code: fenced blocks and `inline code`
# show image syntax as an example, not as an image.
prose() {
    awk '/^```/ { fence = !fence; next } !fence' "$1" | sed 's/`[^`]*`//g'
}

@test "every image a README or a book page shows exists" {
    local md dir img bad="" n=0
    for md in "$TOP"/README.md "$TOP"/chapters/*/README.md "$TOP"/book/*.md "$TOP"/exercises/*/*/README.md; do
        [ -f "$md" ] || continue
        dir=$(dirname "$md")
        while IFS= read -r img; do
            case "$img" in http://* | https://*) continue ;; esac
            n=$((n + 1))
            [ -f "$dir/${img%%#*}" ] || bad+="
  ${md#"$TOP"/}: $img"
        done < <(prose "$md" | grep -oE '!\[[^]]*\]\([^) ]+' | sed 's/.*](//'
            prose "$md" | grep -oE '<img [^>]*src="[^"]+"' | sed 's/.*src="//; s/"$//')
    done
    [ -z "$bad" ] || fail "images that do not exist:$bad"
    [ "$n" -gt 0 ] || fail "no image found in any README"
}

@test "chapters 04, 07 and 09 show their diagrams" {
    local ch svg
    for ch in 04-epoll:epoll-lists 07-io_uring-basics:uring-rings 09-iocp:iocp-flow; do
        svg="${ch#*:}" ch="${ch%%:*}"
        [ -f "$TOP/chapters/$ch/README.md" ] || continue
        grep -q "(../../book/diagrams/$svg.svg)" "$TOP/chapters/$ch/README.md" ||
            fail "chapters/$ch/README.md does not show book/diagrams/$svg.svg"
    done
}
