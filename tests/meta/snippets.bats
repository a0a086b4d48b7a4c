# Code excerpts in the READMEs are copies of the real, compiled, tested
# source: this fails as soon as one differs or names a snippet that is gone.
load ../helpers/common

@test "every code excerpt in the READMEs matches its source file" {
    run "$TOP/common/mk/snippets.sh"
    [ "$status" -eq 0 ] || fail "$output"
}

@test "the snippet checker notices a changed excerpt and a missing snippet" {
    local d="$BATS_TEST_TMPDIR"
    printf 'int main(void)\n{\n    /* snippet: body */\n    return 0;\n    /* end snippet */\n}\n' >"$d/demo.c"
    printf '<!-- snippet: %s body -->\n```c\nreturn 1;\n```\n' "$d/demo.c" >"$d/README.md"
    run "$TOP/common/mk/snippets.sh" "$d/README.md"
    assert_failure
    assert_output --partial "differs from $d/demo.c (body)"
    run "$TOP/common/mk/snippets.sh" --fix "$d/README.md"
    run "$TOP/common/mk/snippets.sh" "$d/README.md"
    assert_success
    grep -qx 'return 0;' "$d/README.md"
    printf '<!-- snippet: %s gone -->\n```c\nx\n```\n' "$d/demo.c" >"$d/README.md"
    run "$TOP/common/mk/snippets.sh" "$d/README.md"
    assert_failure
    assert_output --partial "has no snippet 'gone'"
}
