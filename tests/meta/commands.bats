# test-long: runs every marked README command in a scratch copy of the course (about 35 s)
# test-serial: its README commands run against the shared build/ (a make there would rebuild it under the other files)
# Commands that work as written: every command block a README marks runnable
# (<!-- run --> on the line before its fence) is run by common/mk/commands.sh
# from a scratch copy of the repository root, against the built tree ($BUILD),
# and its output is compared with the text wherever the text shows it.
load ../helpers/common

# run_commands ARGS...: the runner, with bats' fds closed (a server a block
# starts must not hold the pipe bats reads from).
run_commands() {
    run "$TOP/common/mk/commands.sh" "$@" 3>&-
}

@test "every runnable command block in the READMEs works as written" {
    [ -x "$BUILD/common/tools/echo-client" ] ||
        fail "the course is not built in $BUILD: run make (or make SAN=...) first"
    run_commands
    [ "$status" -eq 0 ] || fail "$output"
    assert_output --regexp "command blocks: [0-9]+ passed, 0 failed"
}

@test "the chapters mark at least 15 runnable command blocks, each before a fenced block" {
    run_commands --list
    assert_success
    local n
    n=$(grep -c 'README.md:[0-9]' <<<"$output")
    [ "$n" -ge 15 ] || fail "expected at least 15 marked blocks, found $n:
$output"
}

@test "a transcript's output is compared: '...' lines, vary=numbers, excerpt" {
    cat >"$BATS_TEST_TMPDIR/README.md" <<'EOF'
<!-- run -->
```
$ printf 'one\ntwo\nthree\nfour\n'
one
...
four
```

<!-- run: vary=numbers -->
```
$ echo "listening on 127.0.0.1:$((40000 + RANDOM % 1000))   took 0.25 s"
listening on 127.0.0.1:8080 took 1.5 s
```

<!-- run: excerpt -->
```
$ seq 10
3
7
```
EOF
    run_commands "$BATS_TEST_TMPDIR/README.md"
    assert_success
    assert_output --partial "command blocks: 3 passed, 0 failed"
}

@test "a wrong output, a missing program and a timeout each fail the block, naming where" {
    cat >"$BATS_TEST_TMPDIR/README.md" <<'EOF'
<!-- run -->
```
$ echo actual
expected
```

<!-- run -->
```
build/no-such-program --help
true
```

<!-- run: timeout=1 -->
```
sleep 30
```

<!-- run: vary=numbers -->
```
$ echo "3 bytes"
3 kilobytes
```
EOF
    run_commands "$BATS_TEST_TMPDIR/README.md"
    assert_failure
    assert_output --partial "README.md:1: the output differs from the text"
    assert_output --partial "README.md:7: exit status 127"
    assert_output --partial "README.md:13: timed out after 1 s"
    assert_output --partial "README.md:18: the output differs from the text (numbers may vary)"
    assert_output --partial "command blocks: 0 passed, 4 failed"
}

@test "a block runs in a scratch folder like the repository root, with build/ pointing at BUILD" {
    cat >"$BATS_TEST_TMPDIR/README.md" <<EOF
<!-- run -->
\`\`\`
\$ readlink build
$BUILD
\$ test -f Makefile && test -d chapters && echo repository root
repository root
\$ touch written-by-a-block && ls written-by-a-block
written-by-a-block
\`\`\`
EOF
    run_commands "$BATS_TEST_TMPDIR/README.md"
    assert_success
    [ ! -e "$TOP/written-by-a-block" ] || fail "the block wrote into the repository"
}

@test "a server a block leaves running is stopped when the block ends" {
    cat >"$BATS_TEST_TMPDIR/README.md" <<EOF
<!-- run -->
\`\`\`
sleep 300 &
echo \$! >$BATS_TEST_TMPDIR/pid
\`\`\`
EOF
    run_commands "$BATS_TEST_TMPDIR/README.md"
    assert_success
    local pid state
    pid=$(cat "$BATS_TEST_TMPDIR/pid")
    # gone, or a zombie waiting for whoever adopted it to reap it
    state=$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null || echo gone)
    [ "$state" = gone ] || [ "$state" = Z ] || fail "the block's sleep (pid $pid) still runs: state $state"
}

@test "a run marker without a fenced block after it, or with an unknown option, is an error" {
    printf '<!-- run -->\ntext, not a block\n' >"$BATS_TEST_TMPDIR/README.md"
    run_commands "$BATS_TEST_TMPDIR/README.md"
    assert_failure
    assert_output --partial "README.md:1: run marker not followed by a \`\`\` block"
    printf '<!-- run: timeout=5 colour=blue -->\n```\ntrue\n```\n' >"$BATS_TEST_TMPDIR/README.md"
    run_commands "$BATS_TEST_TMPDIR/README.md"
    assert_failure
    assert_output --partial "unknown option 'colour=blue'"
}
