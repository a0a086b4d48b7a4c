# How make ex runs an exercise's test file (exercise_bats in
# common/mk/exercise-lib.sh): the verdict comes at the first failing test,
# and nothing the stopped tests started is left running, not even what left
# their process group (GNU timeout makes a group of its own; a wineserver
# detaches).
load ../helpers/common

setup() {
    # a mark of this test's own for the fixture's sleeps, so that pgrep finds
    # only them
    MARK="$((RANDOM + 1000)).$BATS_TEST_NUMBER"
    FX="$BATS_TEST_TMPDIR/fx.bats"
    T=@test # the fixtures' own tests (bats would take the word as this file's)
}

teardown() {
    pkill -KILL -f "^sleep 7$MARK" 2>/dev/null || true
}

lib() { # lib CMD...: run CMD with exercise-lib.sh loaded
    bash -c '. "$1/common/mk/exercise-lib.sh" && "${@:2}"' _ "$TOP" "$@"
}

@test "a failing test stops the file at once, and what its tests started is killed, in their group or not" {
    cat >"$FX" <<EOT
$T "starts a server and fails" {
    sleep 7$MARK 3>&- &
    timeout 300 sleep 7$MARK 3>&- &   # its own process group, on purpose
    setsid sleep 7$MARK 3>&- &
    sleep 0.5
    false
}
$T "slow 1" { sleep 30; }
$T "slow 2" { sleep 30; }
$T "slow 3" { sleep 30; }
$T "slow 4" { sleep 30; }
$T "slow 5" { sleep 30; }
EOT
    local t0=$SECONDS
    run lib exercise_bats "$BATS_TEST_TMPDIR/tap" "$FX" show
    assert_failure 1
    [ $((SECONDS - t0)) -lt 20 ] || fail "the verdict took $((SECONDS - t0)) s: the run was not stopped at the failure"
    assert_output --partial "not ok 1 starts a server and fails"
    assert_output --partial "# stopped at the first failure"
    run pgrep -f "^sleep 7$MARK\$"
    assert_output ""
}

@test "a file whose tests pass runs to its end, with status 0" {
    cat >"$FX" <<EOT
$T "one" { true; }
$T "two" { sleep 1; }
$T "three" { skip "not here"; }
EOT
    run lib exercise_bats "$BATS_TEST_TMPDIR/tap" "$FX"
    assert_success
    run grep -cE '^ok [0-9]+ ' "$BATS_TEST_TMPDIR/tap"
    assert_output 3
}
