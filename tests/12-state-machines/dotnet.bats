#!/usr/bin/env bats
# Chapter 12's C# program (chapters/12-state-machines/dotnet/): the state
# machine the C# compiler generates for SumPagesAsync, the method
# sum-pages-sm.c transforms by hand, seen by reflection. Skips, saying why,
# without the .NET SDK.

load ../helpers/common

setup() {
    require_dotnet
}

# section N: the lines of section N of the output (up to the next blank line)
section() {
    awk -v n="$1." '$1 == n { on = 1 } on && /^$/ { exit } on' <<<"$output"
}

@test "state-machine-dotnet: optimised, a struct with the state, the builder, the parameters, the locals that cross an await and one awaiter per kind" {
    run timeout 30 "$(chapter_bin state-machine-dotnet)"
    assert_success
    local release
    release=$(section 1 | sed -n '/^optimised (Release)/,/^unoptimised/p' | sed '$d')
    echo "$release" | head -n 1 | grep -q '^optimised (Release): struct <SumPagesAsync>d__[0-9]* : IAsyncStateMachine$' ||
        fail "expected a struct implementing IAsyncStateMachine, got: $(head -n 1 <<<"$release")"
    local field
    for field in 'int +<>1__state' 'AsyncTaskMethodBuilder<long> +<>t__builder' 'Func<int, Task<string>> +getString' \
        'int +pages' 'int +delayMs' 'long +<total>5__[0-9]+' 'int +<i>5__[0-9]+' 'TaskAwaiter<string> +<>u__[0-9]+' \
        'TaskAwaiter +<>u__[0-9]+'; do
        grep -Eq "^    $field\$" <<<"$release" || fail "no field matching '$field' in the optimised state machine:
$release"
    done
    ! grep -Eq '<page>|<words>' <<<"$release" ||
        fail "page and words never cross an await: optimised, they should stay locals:
$release"
}

@test "state-machine-dotnet: unoptimised (as in Debug), a class, and every local is a field" {
    run timeout 30 "$(chapter_bin state-machine-dotnet)"
    assert_success
    local debug
    debug=$(section 1 | sed -n '/^unoptimised (Debug)/,$p')
    head -n 1 <<<"$debug" | grep -q '^unoptimised (Debug): class <SumPagesAsync>d__[0-9]* : IAsyncStateMachine$' ||
        fail "expected a class, got: $(head -n 1 <<<"$debug")"
    grep -Eq '^    string +<page>5__[0-9]+$' <<<"$debug" || fail "no hoisted page field:
$debug"
    grep -Eq '^    long +<words>5__[0-9]+$' <<<"$debug" || fail "no hoisted words field:
$debug"
}

@test "state-machine-dotnet: one call stops at await #0 and #1 in turn (<>1__state 0, 1, ...), in a box that is the Task; a call that never waits allocates no box" {
    run timeout 30 "$(chapter_bin state-machine-dotnet)"
    assert_success
    assert_line "  the Task returned is the box the struct was copied into: AsyncStateMachineBox<long, <SumPagesAsync>d__0>"
    local states
    states=$(section 2 | sed -n 's/.*<>1__state *\(-*[0-9]*\) *i \([0-9]*\) *total \([0-9]*\)$/\1:\2:\3/p' | paste -sd ' ' -)
    [ "$states" = "0:1:0 1:1:3 0:2:3 1:2:5 0:3:5 1:3:6" ] ||
        fail "expected state:i:total 0:1:0 1:1:3 0:2:3 1:2:5 0:3:5 1:3:6, got: $states"
    assert_line "  done, 6 words: the box has reset its state machine to default, so that the GC can free what it held"
    assert_line "  completed inside the call: True, result 4; the Task is a Task<long>, with no state machine in it: the struct stayed on the stack"
}
