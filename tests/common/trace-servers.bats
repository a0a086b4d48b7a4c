#!/usr/bin/env bats
# test-long: each test runs a real server under strace for about a second (make trace)
# test-serial: what a picture shows (batches per wait, operations per io_uring_enter) is the shape of a quiet machine, as the chapters' pictures are drawn; beside three other test files echo-epoll-lt and echo-uring batched less (CI, once)
# make trace on real servers: what each picture is meant to show is in the
# trace. Each test runs common/tools/trace/trace.sh into its own folder and
# reads the table of calls it writes beside the SVG (NAME.calls.tsv, one call
# a line: tid comm start duration name kind fd return detail).

load ../helpers/common

setup() {
    command -v strace >/dev/null || skip "strace is not installed (make deps)"
    command -v python3 >/dev/null || skip "python3 is not installed"
    require_bin "$BUILD/common/tools/echo-load" common
    export TRACE_OUT="$BATS_TEST_TMPDIR/trace"
}

# trace NAME: make trace S=NAME, or skip where the server cannot run here.
trace() {
    run timeout 120 "$TOP/common/tools/trace/trace.sh" "$1"
    [ "$status" -ne 77 ] || skip "$output"
    [ "$status" -eq 0 ] || fail "trace.sh $1 exited $status: $output"
    assert_output --partial "trace: $1: "
    assert_output --partial "$TRACE_OUT/$1.svg"
    [ -s "$TRACE_OUT/$1.svg" ] || fail "no $1.svg"
    grep -q "<svg " "$TRACE_OUT/$1.svg" || fail "$1.svg is not SVG"
    ! grep -q "<!DOCTYPE" "$TRACE_OUT/$1.svg" || fail "$1.svg has a DOCTYPE"
    grep -q "data=\"$1.svg\"" "$TRACE_OUT/index.html" || fail "index.html does not show $1.svg"
    CALLS="$TRACE_OUT/$1.calls.tsv"
}

@test "echo-epoll-lt: one thread sleeps in epoll_wait(), and its reads and writes come after a wait that reported events" {
    trace echo-epoll-lt
    # the load: 8 connections x 100 messages, and client A's 2 halves
    # (from its "listening on" line, a write to fd 1: before, the loader reads libraries)
    run awk -F'\t' '
        $5 == "write" && $7 == 1 { listening = 1; next }
        !listening { next }
        $5 == "epoll_wait" { waits++; ready = $8 + 0; if (ready > 0) woke++ }
        $6 == "read" || $6 == "write" {
            if (waits == 0) { print "a " $5 " on fd " $7 " before any epoll_wait"; bad++ }
            else if (ready == 0) { print "a " $5 " after an epoll_wait that returned 0"; bad++ }
            io++
        }
        END {
            printf "waits %d, with events %d, reads and writes %d\n", waits, woke, io
            exit bad > 0
        }' "$CALLS"
    [ "$status" -eq 0 ] || fail "$output"
    local waits io
    waits=$(sed -n 's/^waits \([0-9]*\),.*/\1/p' <<<"$output")
    io=$(sed -n 's/.*reads and writes \([0-9]*\)$/\1/p' <<<"$output")
    [ "$waits" -ge 3 ] || fail "expected epoll_wait bars, got $waits: $output"
    # 802 messages: at least a read and a write each, served a batch per wait
    [ "$io" -ge 1604 ] || fail "expected at least 1604 reads and writes, got $io"
    [ "$waits" -lt "$((io / 4))" ] || fail "expected batches: $waits waits for $io reads and writes"
    [ "$(cut -f1 "$CALLS" | sort -u | wc -l)" -eq 1 ] || fail "expected one thread, got $(cut -f1 "$CALLS" | sort -u | wc -l)"
    grep -q '>8</text>\|>[2-9]</text>' "$TRACE_OUT/echo-epoll-lt.svg" ||
        fail "no epoll_wait in the zoom labelled with more than one event"
}

@test "echo-uring: each io_uring_enter that submits during the load carries more than one operation" {
    trace echo-uring
    # every io_uring_enter, those that submitted, those that submitted more
    # than one, the operations in all, and the reads and writes once listening
    run awk -F'\t' '$5 == "write" && $7 == 1 { listening = 1; next }
        $5 == "io_uring_enter" && $8 > 0 { n++; sum += $8; if ($8 > 1) many++ }
        $5 == "io_uring_enter" { enters++ }
        listening && ($6 == "read" || $6 == "write") { rw++ }
        END { printf "enters %d submitting %d many %d ops %d rw %d\n", enters, n, many, sum, rw }' "$CALLS"
    assert_success
    local enters submitting many ops rw
    read -r _ enters _ submitting _ many _ ops _ rw <<<"$output"
    # 802 messages need 802 sends (and 8+1 accepts, recvs re-armed): far
    # fewer io_uring_enter calls than that, most of them carrying several
    [ "$ops" -ge 802 ] || fail "expected at least 802 operations submitted, got $ops ($output)"
    [ "$enters" -lt 400 ] || fail "expected far fewer io_uring_enter than messages, got $enters ($output)"
    [ "$many" -ge "$((submitting / 2))" ] ||
        fail "expected most submitting calls to carry more than one operation: $output"
    [ "$rw" -eq 0 ] || fail "echo-uring made $rw read/write calls once listening: $output"
    grep -qE '>[2-9][0-9]*/≥1</text>' "$TRACE_OUT/echo-uring.svg" ||
        fail "no io_uring_enter in the zoom labelled as submitting several and waiting for one"
}

@test "echo-threads: one lane per connection, each thread reading and writing its own socket" {
    trace echo-threads
    local main
    main=$(head -n 1 "$CALLS" | cut -f1)
    # the threads other than the main one that read or wrote a socket, and the socket
    run awk -F'\t' -v main="$main" '$1 != main && ($6 == "read" || $6 == "write") && $8 > 0 {
            n[$1, $7]++; t[$1] = 1 }
        END { for (k in n) { split(k, p, SUBSEP); if (n[k] > 1) print p[1], p[2] } }' "$CALLS"
    assert_success
    local lanes fds
    lanes=$(cut -d' ' -f1 <<<"$output" | sort -u | wc -l)
    fds=$(cut -d' ' -f2 <<<"$output" | sort -u | wc -l)
    # 8 connections of echo-load and client A: 9 threads, 9 sockets, one each
    [ "$lanes" -eq 9 ] || fail "expected 9 connection threads, got $lanes: $output"
    [ "$fds" -eq 9 ] || fail "expected each of the 9 threads on its own socket, got $fds sockets: $output"
    [ "$(wc -l <<<"$output")" -eq 9 ] || fail "a thread worked on more than one socket: $output"
    # client A's thread sleeps in read() through its 0.6 s pause: a bar that long
    run awk -F'\t' '$6 == "read" && $4 != "unfinished" && $4 > 0.4' "$CALLS"
    [ -n "$output" ] || fail "no read() that blocked 0.4 s or more (client A pauses 0.6 s)"
    local svg="$TRACE_OUT/echo-threads.svg" n
    n=$(grep -c '(main)<' "$svg")
    [ "$n" -eq 2 ] || fail "expected the main thread's lane in both panels, got $n"
}

@test "echo-uring-sqpoll: the polling thread strace cannot see gets a lane, with its CPU time" {
    trace echo-uring-sqpoll
    grep -q '>iou-sqp-[0-9]* [0-9]*<' "$TRACE_OUT/echo-uring-sqpoll.svg" || fail "no lane for the iou-sqp thread"
    grep -q "it submits for the server, in the kernel" "$TRACE_OUT/echo-uring-sqpoll.svg" || fail "the iou-sqp lane is not explained"
    # the server's own calls: waits for completions, none labelled as submitting
    ! grep -qE '>[0-9]+/≥1</text>' "$TRACE_OUT/echo-uring-sqpoll.svg" || fail "a wait under SQPOLL is labelled as a submission"
}

@test "mini-redis-epoll: under a pipelined load, one send carries the replies to a batch of requests, and client A's split SET is answered" {
    command -v redis-benchmark >/dev/null || skip "redis-benchmark is not installed (make deps: package redis-tools)"
    require_bin "$BUILD/chapters/15-mini-redis/resp-cat" chapters/15-mini-redis
    trace mini-redis-epoll
    # 800 SETs and 800 GETs on 8 connections, 16 in flight on each: 100
    # batches, so about 100 sends; one send per reply would be 1,600
    run awk -F'\t' '$6 == "write" && $7 > 2 { n++ } END { print n + 0 }' "$CALLS"
    [ "$output" -ge 100 ] && [ "$output" -le 200 ] ||
        fail "expected 100 to 200 sends to the clients (one per batch of 16 replies), got $output"
}
