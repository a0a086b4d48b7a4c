#!/usr/bin/env bats
# Chapter 13's C# programs (chapters/13-mini-runtime/dotnet/): where the
# exception of an unawaited async method goes (async void against an
# unawaited Task), and the .Result deadlock on a one-thread
# SynchronizationContext with its two ways out. Each test skips, saying
# why, without the .NET SDK.

load ../helpers/common

setup() {
    require_dotnet
}

@test "async-void-dotnet void: the exception of an async void method ends the process (SIGABRT), past the caller's try/catch" {
    run bash -c 'ulimit -c 0; exec timeout 30 "$0" void 2>"$1"' "$(chapter_bin async-void-dotnet)" "$BATS_TEST_TMPDIR/stderr"
    [ "$status" -eq 134 ] || fail "expected status 134 (SIGABRT after an unhandled exception), got $status; stdout: $output; stderr: $(cat "$BATS_TEST_TMPDIR/stderr")"
    assert_output "FailLaterVoid() returned at its first await; the try/catch around it is already behind us"
    local first
    first=$(head -n 1 "$BATS_TEST_TMPDIR/stderr")
    [ "$first" = "Unhandled exception. System.InvalidOperationException: thrown after an await in an async void method" ] ||
        fail "unexpected first line on stderr: $first"
    # rethrown on a pool thread, not where it was started
    grep -q 'ThreadPoolWorkQueue.Dispatch' "$BATS_TEST_TMPDIR/stderr" ||
        fail "expected the exception rethrown on a thread-pool thread; stderr: $(cat "$BATS_TEST_TMPDIR/stderr")"
}

@test "async-void-dotnet task: an unawaited Task's exception is silent until the GC finalizes it, then reported to UnobservedTaskException; exit 0" {
    run timeout 30 "$(chapter_bin async-void-dotnet)" task
    assert_success
    assert_line --index 0 "FailLaterTask() returned a Task, which nobody awaits"
    assert_line --index 1 "it has failed, silently: 0 reported; now a full GC and the finalizers"
    assert_line --index 2 "UnobservedTaskException: thrown after an await in an async Task method nobody awaits"
    assert_line --index 3 "the process goes on: 1 unobserved exception(s) reported, exit 0"
}

@test "async-void-dotnet dropped: with nobody subscribed to UnobservedTaskException, the default, the finalized Task's exception is dropped: nothing printed, exit 0, no crash" {
    run bash -c 'ulimit -c 0; exec timeout 30 "$0" dropped 2>"$1"' "$(chapter_bin async-void-dotnet)" "$BATS_TEST_TMPDIR/stderr"
    [ "$status" -eq 0 ] || fail "expected exit status 0 (the process goes on), got $status; stderr: $(cat "$BATS_TEST_TMPDIR/stderr")"
    [ ! -s "$BATS_TEST_TMPDIR/stderr" ] || fail "expected nothing on stderr, got: $(cat "$BATS_TEST_TMPDIR/stderr")"
    assert_line --index 0 "FailLaterTask() returned a Task, which nobody awaits; nobody handles UnobservedTaskException"
    assert_line --index 1 "it has failed, silently; now a full GC and the finalizers"
    assert_line --index 2 "the Task is collected and the finalizers have run: its exception is dropped, nothing reported, exit 0"
    [ "${#lines[@]}" -eq 3 ] || fail "expected 3 lines, got: $output"
    refute_output --partial "thrown after an await"
}

@test "async-void-dotnet: no mode is a usage error (exit 2)" {
    run "$(chapter_bin async-void-dotnet)"
    [ "$status" -eq 2 ] || fail "expected status 2, got $status: $output"
    assert_output "usage: async-void-dotnet void|task|dropped"
}

@test "result-deadlock-dotnet: .Result deadlocks on a one-thread context; ConfigureAwait(false) and await do not" {
    run timeout 30 "$(chapter_bin result-deadlock-dotnet)"
    assert_success
    assert_line --index 0 "1. .Result, and the await inside captures the UI thread's context:"
    assert_line --regexp '^  \[ *[0-9]+ ms, thread [0-9]+\] no result after 2 s: deadlock \(the task is WaitingForActivation; its continuation is queued for this thread\)$'
    assert_line --regexp '^  \[ *[0-9]+ ms, thread [0-9]+\] the handler returned, the UI thread ran the queued continuation: task RanToCompletion, result 42$'
    assert_line "2. .Result, with ConfigureAwait(false) in the awaited method:"
    assert_line --regexp '^  \[ *[0-9]+ ms, thread [0-9]+\] got 42: the continuation ran on a pool thread$'
    assert_line "3. await all the way: the handler awaits, and blocks nothing:"
    assert_line --regexp '^  \[ *[0-9]+ ms, thread [0-9]+\] got 42, back on the UI thread, which was free meanwhile$'
    # case 3 resumes on the thread it started on: the UI thread
    local before after
    before=$(sed -n 's/^  \[ *[0-9]* ms, thread \([0-9]*\)\] awaiting LoadAsync()$/\1/p' <<<"$output")
    after=$(sed -n 's/^  \[ *[0-9]* ms, thread \([0-9]*\)\] got 42, back on the UI thread.*/\1/p' <<<"$output")
    [ -n "$before" ] && [ "$before" = "$after" ] || fail "expected the await to resume on the UI thread ($before), got thread $after"
}
