#!/usr/bin/env bats
# Chapter 10's C# programs (chapters/10-threadpool/dotnet/): the real .NET
# thread pool starved by sync-over-async, sampled from inside, and
# File.ReadAllTextAsync under strace (blocking preads on a pool thread, no
# epoll). Each test skips, saying why, without the .NET SDK.

load ../helpers/common
load ../helpers/echo_suite # require_strace

setup() {
    require_dotnet
}

# summary_field NAME: from "all N done in T ms; pool threads A -> B: C added, R a second"
summary() {
    sed -n 's/^all \([0-9]*\) done in \([0-9]*\) ms; pool threads \([0-9]*\) -> \([0-9]*\): \([0-9]*\) added, \([0-9.]*\) a second$/\1 \2 \3 \4 \5 \6/p' <<<"$output"
}

@test "pool-starve-dotnet -m result: sync over async blocks every pool thread; the pool adds threads until the requests finish, and meanwhile a new work item waits" {
    run timeout 60 "$(chapter_bin pool-starve-dotnet)" -m result -n 32 -d 100
    assert_success
    assert_line --regexp '^[0-9]+ CPUs, pool minimum [0-9]+ threads; 32 requests at once, each waiting 100 ms by result$'
    assert_line --regexp '^ +[0-9]+ ms  threads +[0-9]+  pending +[0-9]+  done +[0-9]+/32  probe still queued after [0-9]+ ms$'
    local s added
    s=$(summary)
    [ -n "$s" ] || fail "no summary line: $output"
    read -r _ _ _ _ added _ <<<"$s"
    echo "# $(tail -n 1 <<<"$output")" >&3
    [ "$added" -ge 3 ] || fail "expected the pool to add threads to the blocked ones (3 or more), it added $added"
}

# Who adds the threads under .Result: the gate thread's blocking adjustment
# (at once to the minimum plus one per CPU, then a thread every 25 to 250
# ms). Switched off in a copy of the program's runtime configuration, only
# the starvation check is left, one thread per 500 ms at most.
@test "pool-starve-dotnet -m result: with the blocking adjustment switched off (runtimeconfig), only the starvation check adds threads, about two a second at most, and the requests take several times as long" {
    local bin dir conf s on_ms on_rate off_ms off_rate
    bin=$(readlink -f "$(chapter_bin pool-starve-dotnet)")
    dir=${bin%/*}
    conf="$BATS_TEST_TMPDIR/no-blocking.json"
    sed 's/"configProperties": {/&\n      "System.Threading.ThreadPool.Blocking.CooperativeBlocking": false,/' \
        "$dir/pool-starve-dotnet.runtimeconfig.json" >"$conf"
    grep -q '"System.Threading.ThreadPool.Blocking.CooperativeBlocking": false' "$conf" ||
        fail "could not add the switch to $dir/pool-starve-dotnet.runtimeconfig.json: $(cat "$conf")"
    run timeout 60 "$bin" -m result -n 8 -d 100
    assert_success
    s=$(summary)
    [ -n "$s" ] || fail "no summary line: $output"
    read -r _ on_ms _ _ _ on_rate <<<"$s"
    echo "# as shipped: $(tail -n 1 <<<"$output")" >&3
    run timeout 60 "${DOTNET:-dotnet}" exec --runtimeconfig "$conf" "$dir/pool-starve-dotnet.dll" -m result -n 8 -d 100
    assert_success
    s=$(summary)
    [ -n "$s" ] || fail "no summary line: $output"
    read -r _ off_ms _ _ _ off_rate <<<"$s"
    echo "# CooperativeBlocking false: $(tail -n 1 <<<"$output")" >&3
    [ "$off_ms" -ge 1500 ] && [ "$off_ms" -gt $((3 * on_ms)) ] ||
        fail "expected the requests to take 1.5 s or more, and 3 times as long as with the adjustment ($on_ms ms), without it; took $off_ms ms"
    # one thread per 500 ms at most: 2 a second, and one more at the start
    awk -v r="$off_rate" 'BEGIN { exit !(r <= 3) }' ||
        fail "expected at most about 2 threads a second from the starvation check alone, got $off_rate"
    awk -v on="$on_rate" -v off="$off_rate" 'BEGIN { exit !(on >= 2 * off) }' ||
        fail "expected the blocking adjustment to add threads at least twice as fast ($on_rate a second) as the starvation check ($off_rate)"
}

@test "pool-starve-dotnet -m await: nothing blocks, the pool stays small, and all finish in about the operation's time" {
    run timeout 60 "$(chapter_bin pool-starve-dotnet)" -m await -n 32 -d 100
    assert_success
    local s ms added
    s=$(summary)
    [ -n "$s" ] || fail "no summary line: $output"
    read -r _ ms _ _ added _ <<<"$s"
    echo "# $(tail -n 1 <<<"$output")" >&3
    [ "$ms" -lt 2000 ] || fail "expected 32 awaiting requests done within 2 s, took $ms ms"
    [ "$added" -le 2 ] || fail "expected no more than 2 threads added while nothing blocks, got $added"
    refute_output --partial "still queued"
}

@test "pool-starve-dotnet -m sleep: a blocking call the pool cannot see; the queue drains at the speed of the threads it has" {
    run timeout 60 "$(chapter_bin pool-starve-dotnet)" -m sleep -n 16 -d 100
    assert_success
    local s
    s=$(summary)
    [ -n "$s" ] || fail "no summary line: $output"
    echo "# $(tail -n 1 <<<"$output")" >&3
    run "$(chapter_bin pool-starve-dotnet)" -m spin
    [ "$status" -eq 2 ] || fail "a bad mode: expected exit status 2, got $status"
}

@test "file-read-dotnet under strace: File.ReadAllTextAsync reads with pread() on a pool thread, not the caller's, and uses neither epoll nor io_uring" {
    require_strace
    local f="$BATS_TEST_TMPDIR/text.txt" trace="$BATS_TEST_TMPDIR/trace" main worker fd readers
    head -c 300000 /dev/urandom | base64 >"$f"
    run timeout 60 strace -f -qq -o "$trace" -e trace=openat,read,pread64,close,epoll_ctl,io_uring_setup \
        "$(chapter_bin file-read-dotnet)" "$f"
    assert_success
    assert_line --index 1 "ReadAllTextAsync returned, not complete yet, on the same thread"
    main=$(sed -n 's/^main: thread \([0-9]*\) .*/\1/p' <<<"$output")
    worker=$(sed -n 's/^after the await: [0-9]* characters, on thread \([0-9]*\) (\.NET TP Worker)$/\1/p' <<<"$output")
    [ -n "$main" ] && [ -n "$worker" ] || fail "expected the main thread and a '.NET TP Worker' after the await: $output"
    fd=$(grep -F "\"$f\"" "$trace" | sed -n 's/.* = \([0-9]*\)$/\1/p' | head -n 1)
    [ -n "$fd" ] || fail "the file's openat() is not in the trace"
    # the reads of the file: from its openat to its close
    readers=$(awk -v path="\"$f\"" -v fd="$fd" '
        index($0, path) && / = [0-9]+$/ { on = 1; next }
        on && $2 ~ "^close\\(" fd "[,)]" { exit }
        on && $2 ~ "^(pread64|read)\\(" fd "," { n[$1]++ }
        END { for (t in n) printf "%s:%d ", t, n[t] }' "$trace")
    echo "# main thread $main, the await resumed on $worker; reads of the file by thread:calls $readers" >&3
    [ -n "$readers" ] || fail "no read of the file (fd $fd) in the trace"
    [[ " $readers" != *" $main:"* ]] || fail "the main thread ($main) read the file itself: $readers"
    [[ " $readers" == *" $worker:"* ]] || fail "the pool thread the await resumed on ($worker) did not read the file: $readers"
    ! grep -q 'epoll_ctl(' "$trace" || fail "epoll_ctl() was called: $(grep 'epoll_ctl(' "$trace")"
    ! grep -q 'io_uring_setup(' "$trace" || fail "io_uring was set up: $(grep 'io_uring_setup(' "$trace")"
}
