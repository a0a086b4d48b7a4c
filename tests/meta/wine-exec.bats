# wine_exec (tests/helpers/wine.bash) starts a Windows program under Wine for
# `run`, and starts it once more only when Wine exited non-zero without a
# byte of output: Wine failing to start it, not the program failing. These
# tests put a script in Wine's place, so they need no Wine.
load ../helpers/common
source "$BATS_TEST_DIRNAME/../helpers/wine.bash"

# setup: $WINE is a script that logs each start in $BATS_TEST_TMPDIR/starts
# and then does what the file named by its first argument says.
setup() {
    WINE="$BATS_TEST_TMPDIR/fake-wine"
    cat >"$WINE" <<'END'
#!/usr/bin/env bash
echo start >>"$(dirname "$0")/starts"
n=$(wc -l <"$(dirname "$0")/starts")
source "$1" "$n"
END
    chmod +x "$WINE"
}

starts() { wc -l <"$BATS_TEST_TMPDIR/starts"; }

@test "wine_exec: a program that prints and exits 0 runs once, its output and status passed on" {
    printf 'echo "hello from $0"; exit 0\n' >"$BATS_TEST_TMPDIR/prog"
    run wine_exec 10 "$BATS_TEST_TMPDIR/prog"
    assert_success
    assert_output --partial "hello from"
    [ "$(starts)" -eq 1 ] || fail "started $(starts) times"
}

@test "wine_exec: a program that fails with a message is not started again" {
    printf 'echo "usage: prog" >&2; exit 2\n' >"$BATS_TEST_TMPDIR/prog"
    run wine_exec 10 "$BATS_TEST_TMPDIR/prog"
    assert_failure 2
    assert_output "usage: prog"
    [ "$(starts)" -eq 1 ] || fail "started $(starts) times"
}

@test "wine_exec: Wine exiting 1 without a word is tried once more, and the second run counts" {
    # the first start says nothing and fails; the second is the program's
    printf '[ "$1" -eq 1 ] && exit 1; echo "all checks passed"; exit 0\n' >"$BATS_TEST_TMPDIR/prog"
    run wine_exec 10 "$BATS_TEST_TMPDIR/prog"
    assert_success
    assert_output "all checks passed"
    [ "$(starts)" -eq 2 ] || fail "started $(starts) times"
}

@test "wine_exec: silent failures are tried twice, no more, and the failure stands" {
    printf 'exit 1\n' >"$BATS_TEST_TMPDIR/prog"
    run wine_exec 10 "$BATS_TEST_TMPDIR/prog"
    assert_failure 1
    [ "$(starts)" -eq 2 ] || fail "started $(starts) times"
}

@test "wine_exec: a program stopped by the timeout is not started again" {
    printf 'sleep 5\n' >"$BATS_TEST_TMPDIR/prog"
    run wine_exec 1 "$BATS_TEST_TMPDIR/prog"
    assert_failure 124
    [ "$(starts)" -eq 1 ] || fail "started $(starts) times"
}
