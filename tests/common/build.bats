#!/usr/bin/env bats
# The build rules every program shares (common/mk/prog.mk), on a scratch
# build folder: what a learner's tree goes through between two pulls.

load ../helpers/common

# A .d file records the source an object was built from. When a pull moves
# or deletes that source, the old record must not stop the next make with
# "No rule to make target": the record is dropped and the object built again
# from where its source is now.
@test "make builds again after a source named in an old .d file is gone" {
    local b="$BATS_TEST_TMPDIR/build" out d
    run make -s -C "$TOP/chapters/00-latency" BUILD="$b"
    assert_success
    out="$b/chapters/00-latency"
    d="$out/chase.d"
    [ -f "$d" ] || fail "no $d after the first build"
    # the record as a build from before a move would have left it
    printf '%s: \\\n %s %s\n%s:\n' "$out/chase.o" "$TOP/chapters/00-latency/gone/chase.c" \
        "$TOP/chapters/00-latency/latency.h" "$TOP/chapters/00-latency/latency.h" >"$d"
    run make -C "$TOP/chapters/00-latency" BUILD="$b"
    assert_success
    refute_output --partial "No rule to make target"
    assert_output --partial "chapters/00-latency/chase.c"
    grep -q "chapters/00-latency/chase.c" "$d" || fail "chase.d was not written again: $(cat "$d")"
}

# A chapter whose programs take sources from other folders (SRC_DIRS in
# prog.mk): chapter 11 builds its library from cio/ and chapter 10's pool.c
# from chapters/10-threadpool. On a scratch copy, so that a header can be
# touched without rebuilding anyone else's tree.
@test "a build from several source folders is incremental: a second make does nothing, a touched header rebuilds its users" {
    local s="$BATS_TEST_TMPDIR/tree"
    mkdir -p "$s/chapters"
    cp -a "$TOP/common" "$s/"
    cp -a "$TOP/chapters/10-threadpool" "$TOP/chapters/11-one-api" "$s/chapters/"
    # one program, not the chapter's all (its Windows twins too): the rules
    # are the same, in a third of the time
    local prog="$s/build/chapters/11-one-api/echo-aio"
    run timeout 600 make -C "$s/chapters/11-one-api" BUILD="$s/build" "$prog"
    assert_success
    assert_output --partial "CC      chapters/10-threadpool/pool.c"
    run timeout 120 make -C "$s/chapters/11-one-api" BUILD="$s/build" "$prog"
    assert_success
    refute_output --partial "  CC  "
    refute_output --partial "  LD  "
    touch "$s/chapters/10-threadpool/pool.h"
    run timeout 600 make -C "$s/chapters/11-one-api" BUILD="$s/build" "$prog"
    assert_success
    assert_output --partial "CC      chapters/10-threadpool/pool.c"
    assert_output --partial "CC      chapters/11-one-api/cio/offload.c" # includes pool.h
    refute_output --partial "CC      chapters/11-one-api/cio/cio_epoll.c"
    assert_output --partial "LD      build/chapters/11-one-api/echo-aio"
}
