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
