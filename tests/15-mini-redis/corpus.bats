# Chapter 15: the fuzz target's checks (chapters/15-mini-redis/resp-fuzz.c,
# built here as an ordinary program) over every file of the committed
# corpus: the RESP parser keeps resp.h's promises and finds the same
# requests, or the same error, whether each input comes whole, in pieces or
# a byte at a time. The fuzzer itself runs in fuzz.bats (make test-long).

load ../helpers/common

@test "resp-fuzz: every input of the committed corpus holds, whole, in pieces and byte by byte" {
    local n
    n=$(find "$TOP/chapters/15-mini-redis/corpus" -type f | wc -l)
    [ "$n" -ge 10 ] || fail "expected the committed corpus (10 files or more), found $n"
    run timeout 60 "$(chapter_bin resp-fuzz)" "$TOP/chapters/15-mini-redis/corpus/"*
    assert_success
    assert_output "resp-fuzz: $n inputs, every one held"
}

@test "resp-fuzz: no file is a usage error, and a missing file is named, exit 2" {
    run timeout 10 "$(chapter_bin resp-fuzz)"
    assert_failure 2
    [[ "$stderr$output" == *"usage: resp-fuzz FILE..."* ]] || fail "expected the usage, got: $output"
    run timeout 10 "$(chapter_bin resp-fuzz)" "$BATS_TEST_TMPDIR/no-such-file"
    assert_failure 2
    assert_output --partial "no-such-file: No such file or directory"
}
