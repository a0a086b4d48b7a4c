#!/usr/bin/env bats
# Tests of make trace (common/tools/trace/): the parser of strace's output,
# the picture it draws, the names it accepts, and the pictures the chapters
# show. No server runs here (tests/common/trace-servers.bats traces real
# ones, in make test-long).
#
# The fixtures (tests/common/fixtures/trace/) are excerpts of real logs of
# `strace -f -ttt -T -Y -s 0`, as make trace writes them: echo-threads.strace
# is 33 lines of a run of echo-threads as they were, with two threads' calls
# split by strace into "<unfinished ...>" and "<... resumed>" halves;
# echo-uring.strace keeps io_uring_setup and io_uring_enter lines of a run of
# echo-uring, to which an io_uring_enter split the same way, an EINTR, a
# signal, an exit line and a thread named ".NET Sockets" (comm with a space,
# from a run of echo-dotnet-async) were added; echo-uring-sqpoll.strace holds
# io_uring_setup with IORING_SETUP_SQPOLL and the wait-only io_uring_enter
# calls that go with it. The .calls files are what the parser must print.

load ../helpers/common

setup() {
    TIMELINE="$TOP/common/tools/trace/timeline.py"
    FIX="$TOP/tests/common/fixtures/trace"
    command -v python3 >/dev/null || skip "python3 is not installed (Debian has it by default)"
}

# svg_words FILE: the picture's text, as one line (the legend wraps).
svg_words() {
    sed 's/<[^>]*>/ /g' "$1" | tr -s ' \n' '  '
}

# calls FIXTURE: the parser's table of FIXTURE.strace.
calls() {
    run timeout 20 python3 "$TIMELINE" "$FIX/$1.strace" --calls -
    assert_success
}

# svg_check FILE: FILE is XML whose root is an SVG element, with no DOCTYPE
# and no entity declaration (the EPUB forbids both).
svg_check() {
    run timeout 20 python3 -c '
import sys, xml.etree.ElementTree as ET
text = open(sys.argv[1], encoding="utf-8").read()
if "<!DOCTYPE" in text or "<!ENTITY" in text:
    sys.exit("a DOCTYPE or an entity declaration")
root = ET.fromstring(text)
if root.tag != "{http://www.w3.org/2000/svg}svg":
    sys.exit("the root is " + root.tag)
print(len(root.findall(".//{http://www.w3.org/2000/svg}rect")), "rects")' "$1"
    [ "$status" -eq 0 ] || fail "$1 is not standalone SVG: $output"
}

@test "the parser reads every call of every thread, joining the halves strace splits with <unfinished ...> and <... resumed>" {
    calls echo-threads
    diff <(echo "$output") "$FIX/echo-threads.calls" || fail "the parser's table differs from echo-threads.calls (above)"
    # a worker's read(), split around the main thread's calls: one call,
    # from its start to its end, with the resumed half's return value
    assert_line "$(printf '14107\techo-threads\t1796413204.215479\t0.002121\tread\tread\t8\t128\t-')"
    # the main thread's poll(), split the same way, with the events it returned
    assert_line "$(printf '14036\techo-threads\t1796413204.114437\t0.100513\tpoll\twait\t-\t1\tevents=1')"
    # a thread's return value carries its name (-Y): clone3() = 14079<echo-threads>
    assert_line "$(printf '14036\techo-threads\t1796413204.114240\t0.000080\tclone3\tother\t-\t14079\t-')"
    # a read never resumed before the log ends: still blocked in it
    assert_line "$(printf '14079\techo-threads\t1796413204.117521\tunfinished\tread\tread\t7\t?\t-')"
    [ "$(grep -c . <<<"$output")" -eq 25 ] || fail "expected 25 calls from 33 lines, got $(grep -c . <<<"$output")"
}

@test "the parser reads io_uring_enter's arguments: to_submit, min_complete, the flags, and what it returned" {
    calls echo-uring
    diff <(echo "$output") "$FIX/echo-uring.calls" || fail "the parser's table differs from echo-uring.calls (above)"
    assert_line "$(printf '14492\techo-uring\t1796413205.571520\t0.000054\tio_uring_enter\turing\t3\t8\tto_submit=8 min_complete=1 flags=IORING_ENTER_GETEVENTS')"
    # split in two by strace: the arguments from the first half, the result from the second
    assert_line "$(printf '14492\techo-uring\t1796413205.572125\t0.000114\tio_uring_enter\turing\t3\t8\tto_submit=8 min_complete=1 flags=IORING_ENTER_GETEVENTS')"
    assert_line --partial "$(printf '\t-1\tto_submit=0 min_complete=1 flags=IORING_ENTER_GETEVENTS|IORING_ENTER_EXT_ARG error=EINTR')"
    # a thread name with a space in it, and an epoll_wait split in two
    assert_line "$(printf '2909\t.NET Sockets\t1796413271.811971\t0.129692\tepoll_wait\twait\t59\t1\tevents=1')"
    # the "--- SIGTERM" and "+++ exited" lines are not calls
    refute_output --partial SIGTERM
    refute_output --partial exited
}

@test "the picture is standalone SVG: a named lane per thread, a legend, a time axis in ms, each call's bar, what each wait returned" {
    local svg="$BATS_TEST_TMPDIR/threads.svg"
    printf '1796413204.100000 listening\n1796413204.110000 load starts\n1796413204.219000 load ends\n' >"$BATS_TEST_TMPDIR/marks"
    run timeout 20 python3 "$TIMELINE" "$FIX/echo-threads.strace" -o "$svg" --marks "$BATS_TEST_TMPDIR/marks" \
        --title "echo-threads, a test" --zoom-ms 250
    assert_success
    svg_check "$svg"
    # the zoom (250 ms, all of the excerpt) draws each of the 25 calls as a bar with its call as tooltip
    local n
    n=$(grep -o '</title></rect>' "$svg" | wc -l)
    [ "$n" -eq 25 ] || fail "expected a bar for each of the 25 calls, got $n"
    # one lane for each of the three threads that made a call, the main one named so
    grep -q '>echo-threads 14036 (main)<' "$svg" || fail "no lane for the main thread 14036"
    grep -q '>echo-threads 14079<' "$svg" || fail "no lane for thread 14079"
    grep -q '>echo-threads 14107<' "$svg" || fail "no lane for thread 14107"
    grep -q '1 calls, I/O on fd 8\|calls, I/O on fd 8' "$svg" || fail "the lane of 14107 does not say it works on fd 8"
    grep -q '>ms since the server said' "$svg" || fail "no time axis in ms"
    for k in 'wait: epoll_wait' 'read, recv' 'write, send' accept io_uring_enter other; do
        grep -q ">$k" "$svg" || fail "the legend has no '$k'"
    done
    grep -q '<title>read(8) = 128, 2.12 ms</title>' "$svg" || fail "the zoom has no bar for 14107's read (2.12 ms)"
    grep -q '<title>read(7) = ?, still in it when the trace ended</title>' "$svg" ||
        fail "14079's unfinished read is not drawn to the end"
    grep -q '>load starts<' "$svg" || fail "the moments (--marks) are not drawn"
}

@test "io_uring_enter is labelled S/≥W: S submitted, and at least W completions waited for; under SQPOLL only what it waited for" {
    local svg="$BATS_TEST_TMPDIR/uring.svg"
    run timeout 20 python3 "$TIMELINE" "$FIX/echo-uring.strace" -o "$svg" --title t
    assert_success
    svg_check "$svg"
    grep -q '>8/≥1</text>' "$svg" || fail "no io_uring_enter labelled 8/≥1 (8 submitted, waited for 1)"
    grep -q '>0/≥1</text>' "$svg" || fail "no io_uring_enter labelled 0/≥1 (a wait that submitted nothing)"
    grep -q 'the server reads from the ring in its own memory: strace cannot see that' <(svg_words "$svg") ||
        fail "the legend does not say the reaped completions are not seen"
    svg="$BATS_TEST_TMPDIR/sqpoll.svg"
    run timeout 20 python3 "$TIMELINE" "$FIX/echo-uring-sqpoll.strace" -o "$svg" --title t --zoom-ms 10
    assert_success
    svg_check "$svg"
    # the kernel returns to_submit under SQPOLL: the polling thread submits, so no count is claimed
    grep -q '>≥1</text>' "$svg" || fail "no io_uring_enter labelled ≥1 under SQPOLL"
    grep -q '>wake</text>' "$svg" || fail "the IORING_ENTER_SQ_WAKEUP call is not labelled wake"
    ! grep -q '>2/≥1</text>' "$svg" || fail "under SQPOLL a wait is labelled as if it had submitted 2"
    grep -q "SQPOLL: the kernel.* polling thread submits, with no system call" <(svg_words "$svg") ||
        fail "the legend does not explain SQPOLL"
}

@test "timeline.py: a log with no system call in it, or a missing file, is an error with a message" {
    printf 'not strace output\n' >"$BATS_TEST_TMPDIR/empty.log"
    run timeout 20 python3 "$TIMELINE" "$BATS_TEST_TMPDIR/empty.log" -o "$BATS_TEST_TMPDIR/x.svg"
    assert_failure 1
    assert_output --partial "no system call found"
    [ ! -e "$BATS_TEST_TMPDIR/x.svg" ] || fail "an SVG was written anyway"
    run timeout 20 python3 "$TIMELINE" "$BATS_TEST_TMPDIR/none.log"
    assert_failure 1
    assert_output --partial "none.log: No such file"
}

@test "make trace: an unknown name lists the servers, an exercise's server is refused, no name says how; all exit 2" {
    run timeout 20 "$TOP/common/tools/trace/trace.sh" no-such-server
    assert_failure 2
    assert_output --partial "no server named 'no-such-server'"
    assert_output --partial "echo-epoll-lt"
    refute_output --partial "poll-echo" # an exercise's: not offered
    run timeout 20 "$TOP/common/tools/trace/trace.sh" poll-echo
    assert_failure 2
    assert_output --partial "poll-echo is an exercise's server"
    assert_output --partial "echo-poll"
    run timeout 20 "$TOP/common/tools/trace/trace.sh" ""
    assert_failure 2
    assert_output --partial "make trace S=NAME"
    run timeout 20 "$TOP/common/tools/trace/trace.sh"
    assert_failure 2
    assert_output --partial "usage:"
}

@test "make trace: where io_uring is refused, it says why and exits 77 (a test skips on it)" {
    local no_uring="$BUILD/chapters/07-io_uring-basics/no-uring"
    require_bin "$BUILD/chapters/08-io_uring-echo/echo-uring" chapters/08-io_uring-echo
    require_bin "$no_uring" chapters/07-io_uring-basics
    require_bin "$BUILD/common/tools/echo-load" common
    command -v strace >/dev/null || skip "strace is not installed (make deps)"
    TRACE_OUT="$BATS_TEST_TMPDIR/trace" run timeout 60 "$no_uring" "$TOP/common/tools/trace/trace.sh" echo-uring
    assert_failure 77
    assert_output --partial "echo-uring cannot run here"
    assert_output --partial "io_uring_setup"
    [ ! -e "$BATS_TEST_TMPDIR/trace/echo-uring.svg" ] || fail "a picture was drawn anyway"
}

@test "every trace picture a chapter shows is standalone SVG drawn by make trace, and its README shows it" {
    local fig n=0 ch name
    for fig in "$TOP"/chapters/[0-9][0-9]-*/figures/trace-*.svg; do
        [ -f "$fig" ] || continue
        n=$((n + 1))
        ch=$(basename "$(dirname "$(dirname "$fig")")")
        name=$(basename "$fig" .svg)
        name=${name#trace-}
        svg_check "$fig"
        grep -q "Drawn by make trace S=$name from strace" <(svg_words "$fig") || fail "$fig: not drawn by make trace S=$name"
        grep -q "](figures/trace-$name.svg)" "$TOP/chapters/$ch/README.md" ||
            fail "chapters/$ch/README.md does not show figures/trace-$name.svg"
    done
    [ "$n" -ge 4 ] || fail "expected the chapters to show at least 4 trace pictures (02, 04, 08 twice), found $n"
}

@test "every trace picture is stamped with its server's code as it is now, and a change to that code (not to a comment) makes it stale" {
    run "$TOP/common/tools/trace/trace.sh" --stale
    [ "$status" -eq 0 ] || fail "the code of these servers changed since their picture was drawn (make trace-figures S=NAME, and check what the chapter says of it): $output"
    # the stamp, on a copy of chapter 04
    local t="$BATS_TEST_TMPDIR/repo" a b c
    mkdir -p "$t/chapters"
    cp -r "$TOP/chapters/04-epoll" "$t/chapters/"
    stamp() {
        (cd "$t" && eval "$(sed -n '/^source_stamp()/,/^}/p' "$TOP/common/tools/trace/trace.sh")" &&
            . "$TOP/common/tools/servers.bash" && source_stamp echo-epoll-lt)
    }
    a=$(stamp)
    [ -n "$a" ] || fail "no stamp"
    sed -i '1a /* a comment more */' "$t/chapters/04-epoll/conn.c"
    b=$(stamp)
    assert_equal "$b" "$a"
    echo 'static int one_more;' >>"$t/chapters/04-epoll/conn.h"
    c=$(stamp)
    [ "$c" != "$a" ] || fail "a change to conn.h, which echo-epoll-lt includes, left its stamp as it was"
}
