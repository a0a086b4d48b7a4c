# test-long: libFuzzer on the RESP parser for 60 s, under ASan and UBSan
# Chapter 15: the fuzz target of the RESP parser (chapters/15-mini-redis/
# resp-fuzz.c), built with clang's libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer (make -C chapters/15-mini-redis fuzz), run for
# a bounded time from the committed corpus. Its oracle: no crash, no memory
# error, resp.h's promises kept, and the same requests or error whether the
# stream comes whole, in pieces, or a byte at a time. make test runs the
# same checks over the corpus alone (corpus.bats).

load ../helpers/common

@test "resp-fuzz: 60 s of libFuzzer on the parser, from the committed corpus, find nothing" {
    [ -z "${SAN:-}" ] || skip "the fuzz target has its own sanitizers; SAN=$SAN changes nothing here"
    command -v "${FUZZ_CC:-clang}" >/dev/null || skip "clang is not installed (make deps: packages clang, libclang-rt-14-dev)"
    local out="$BATS_TEST_TMPDIR/fuzz" corpus="$BATS_TEST_TMPDIR/corpus"
    run timeout 300 make -s -C "$TOP/chapters/15-mini-redis" fuzz BUILD="$BUILD" QUIET_WHERE=1
    if [ "$status" -ne 0 ] && grep -q "libclang_rt.fuzzer" <<<"$output"; then
        skip "clang has no libFuzzer here (make deps: package libclang-rt-14-dev)"
    fi
    assert_success
    mkdir -p "$out" "$corpus"
    cp "$TOP/chapters/15-mini-redis/corpus/"* "$corpus/"
    # the corpus copy grows as the fuzzer finds new paths; the committed one stays as it is
    cd "$out"
    run timeout 200 "$BUILD/chapters/15-mini-redis/fuzz/resp-fuzz" -max_len=4096 -max_total_time=60 \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$corpus"
    echo "$output" | grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' | sed 's/^/# /' >&3
    [ "$status" -eq 0 ] || fail "libFuzzer found an input the parser does not hold (status $status):
$(grep -E 'resp-fuzz:|ERROR|SUMMARY|Test unit written|^  ' <<<"$output" | head -n 20)"
    ! ls "$out"/crash-* "$out"/leak-* "$out"/timeout-* 2>/dev/null || fail "libFuzzer left $(ls "$out")"
}
