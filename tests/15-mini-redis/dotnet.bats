#!/usr/bin/env bats
# Chapter 15's C# program (chapters/15-mini-redis/dotnet/channel-dotnet/):
# what Channel<T> does with the readers that wait, beside blocked.c's
# blocked clients (first come, first served; an item handed straight to a
# waiter; a cancelled waiter skipped), and the BLPOP timeout as a linked
# CancellationTokenSource or as Task.WhenAny over a TaskCompletionSource.
# Each test skips, saying why, without the .NET SDK.

load ../helpers/common

setup() {
    require_dotnet
}

# channel_run: run the program once, into $output and $lines.
channel_run() {
    run timeout 60 "$(chapter_bin channel-dotnet)"
    assert_success
    [ "${#lines[@]}" -eq 23 ] || fail "expected 23 lines, got ${#lines[@]}: $output"
}

# ms_at_least VALUE LOW, ms_below VALUE HIGH: compare milliseconds with a decimal.
ms_at_least() { awk -v v="$1" -v l="$2" 'BEGIN { exit !(v + 0 >= l + 0) }'; }
ms_below() { awk -v v="$1" -v h="$2" 'BEGIN { exit !(v + 0 < h + 0) }'; }

@test "channel-dotnet: readers waiting on an empty channel get the writes first come, first served, each item handed straight to one (Count stays 0)" {
    channel_run
    assert_line --index 0 "a. three readers wait on an empty unbounded channel, in the order A, B, C"
    assert_line --index 1 "  Reader.Count 0; A, B, C done: False, False, False"
    assert_line --index 2 '  write "x": TryWrite True, Reader.Count 0: handed to a waiting reader, never in the channel'
    assert_line --index 3 '  write "y": TryWrite True, Reader.Count 0: handed to a waiting reader, never in the channel'
    assert_line --index 4 '  write "z": TryWrite True, Reader.Count 0: handed to a waiting reader, never in the channel'
    assert_line --index 5 "  A got x, B got y, C got z: first come, first served"
}

@test "channel-dotnet: a reader cancelled while it waits throws OperationCanceledException and the next write skips it; cancelled before the call, TaskCanceledException" {
    channel_run
    assert_line --index 6 "b. reader 1 waits with a token, then reader 2 without; reader 1's token is cancelled"
    assert_line --index 7 "  reader 1 ends cancelled: its await threw System.OperationCanceledException"
    assert_line --index 8 '  write "p": TryWrite True, Reader.Count 0'
    assert_line --index 9 "  reader 2 got p: the write skipped the cancelled reader, nothing lost"
    assert_line --index 10 '  write "q": TryWrite True, Reader.Count 1: no reader waits, the item stays in the channel'
    # the token is checked before the channel: the item waiting does not help
    assert_line --index 11 "  ReadAsync with a token cancelled before the call: System.Threading.Tasks.TaskCanceledException, Reader.Count 1"
    assert_line --index 12 "  ReadAsync without: q at once, Reader.Count 0"
}

@test "channel-dotnet: ReadAsync under CancelAfter(100) ends cancelled, never before 100 ms by Environment.TickCount64 (the timers' clock), up to its step early by Stopwatch" {
    channel_run
    assert_line --index 13 "c. the BLPOP timeout, 100 ms, nothing written"
    assert_line --index 14 "  ReadAsync, linked CancellationTokenSource, CancelAfter(100): System.OperationCanceledException; clientGone cancelled: False, a timeout"
    assert_line --index 15 "  the timers' clock, TimerQueue.TickCount64, calls System.Environment.get_TickCount64"
    local re='^  10 such waits: ([0-9]+) to ([0-9]+) ms by Environment\.TickCount64, whose smallest move seen is ([0-9]+) ms$'
    [[ "${lines[16]}" =~ $re ]] || fail "unexpected line 17: ${lines[16]}"
    local tmin=${BASH_REMATCH[1]} tmax=${BASH_REMATCH[2]} step=${BASH_REMATCH[3]}
    # by the timers' own clock, a timeout never ends early
    [ "$tmin" -ge 100 ] && [ "$tmax" -lt 2000 ] ||
        fail "expected every wait in [100, 2000) ms by Environment.TickCount64, got $tmin to $tmax"
    # a kernel tick, or more if the loop that watched it was descheduled
    [ "$step" -ge 1 ] || fail "expected a move of 1 ms or more, got $step"
    re='^  and about ([0-9]+\.[0-9]) to ([0-9]+\.[0-9]) ms by Stopwatch$'
    [[ "${lines[17]}" =~ $re ]] || fail "unexpected line 18: ${lines[17]}"
    # By Stopwatch, as early as the count was behind when the timer was set:
    # one step, two for a tick that comes late on a loaded machine.
    local low=$((100 - 2 * step))
    ms_at_least "${BASH_REMATCH[1]}" "$low" && ms_below "${BASH_REMATCH[2]}" 2000 ||
        fail "expected every wait in [$low, 2000) ms by Stopwatch, got ${BASH_REMATCH[1]} to ${BASH_REMATCH[2]}"
}

@test "channel-dotnet: Task.WhenAny(tcs.Task, Task.Delay(100, token)): the delay wins alone, the TCS when completed first, and a TCS completes once" {
    channel_run
    local re='^  Task\.WhenAny\(tcs\.Task, Task\.Delay\(100, token\)\), nobody completes the TCS: the delay wins, after about ([0-9]+\.[0-9]) ms; tcs\.Task WaitingForActivation$'
    [[ "${lines[18]}" =~ $re ]] || fail "unexpected line 19: ${lines[18]}"
    local ms=${BASH_REMATCH[1]} step
    step=$(sed -n 's/.*whose smallest move seen is \([0-9]*\) ms$/\1/p' <<<"$output")
    [ -n "$step" ] || fail "no step of Environment.TickCount64 in: $output"
    ms_at_least "$ms" $((100 - 2 * step)) && ms_below "$ms" 2000 ||
        fail "expected the delay to win after [$((100 - 2 * step)), 2000) ms, got $ms"
    assert_line --index 19 "  the waiter cancels its TCS: TrySetCanceled True; a writer that comes later: TrySetResult False"
    assert_line --index 20 '  the same, another task completes the TCS first: the TCS wins, with "item" (its TrySetResult True)'
    assert_line --index 21 "  TrySetResult on it afterwards: False; TrySetCanceled: False: a TaskCompletionSource completes once"
    assert_line --index 22 "  the delay that lost was WaitingForActivation until the wait cancelled its token: Canceled"
}

@test "channel-dotnet: an argument is a usage error (exit 2)" {
    run "$(chapter_bin channel-dotnet)" extra
    [ "$status" -eq 2 ] || fail "expected status 2, got $status: $output"
    assert_output "usage: channel-dotnet"
}
