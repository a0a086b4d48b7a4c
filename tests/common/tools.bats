#!/usr/bin/env bats
# Tests of the measuring tools, echo-client, echo-load and stop-anytime
# (common/tools/).
#
# socat plays the echo server: `EXEC:cat` echoes faithfully, `tr a b` corrupts,
# `sleep` never answers. Each server runs in its own session (setsid), so
# teardown can stop it together with every child it forked.
#
#   bats tests/common/tools.bats
#   BUILD=$PWD/build/san-address-undefined bats tests/common/tools.bats

bats_require_minimum_version 1.5.0 # run --separate-stderr

load ../helpers/common

setup() {
    TOOLS="$BUILD/common/tools"
    require_bin "$TOOLS/echo-client" common
    require_bin "$TOOLS/echo-load" common
    command -v socat >/dev/null || fail "socat is not installed: run 'make deps'"
    SOCAT_PIDS=()
    CLIENT_PIDS=()
}

teardown() {
    local pid
    for pid in "${CLIENT_PIDS[@]}"; do
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    # Each socat leads its own process group: signal the group, so the
    # children it forked for connections (and their cat, tr, sleep) go too.
    for pid in "${SOCAT_PIDS[@]}"; do
        kill -TERM -- "-$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    course_teardown
}

# A port nothing uses, below the ephemeral range so no client socket takes it.
free_port() {
    local port try
    for try in $(seq 1 50); do
        port=$((20000 + RANDOM % 12000))
        if ! ss -Htan "( sport = :$port )" | grep -q .; then
            echo "$port"
            return 0
        fi
    done
    return 1
}

# start_server SOCAT-ADDRESS: a socat listening on 127.0.0.1:$PORT that hands
# each connection to SOCAT-ADDRESS. Retries on another port if the one picked
# was taken in the meantime.
start_server() {
    local spec=$1 more=${2:-} pid try i
    for try in 1 2 3 4 5; do
        PORT=$(free_port) || continue
        # fd 3 is bats' own: a background process holding it stalls bats.
        setsid socat -t 5 "TCP-LISTEN:$PORT,bind=127.0.0.1,reuseaddr,fork$more" "$spec" \
            </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/socat.err" 3>&- &
        pid=$!
        for i in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            # Listening, and by this socat: not by a stranger that took the port first.
            if ss -Hltnp "( sport = :$PORT )" | grep -q "pid=$pid,"; then
                SOCAT_PIDS+=("$pid")
                return 0
            fi
            sleep 0.05
        done
        kill -TERM -- "-$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    fail "could not start socat with $spec: $(cat "$BATS_TEST_TMPDIR/socat.err")"
}

start_echo() { start_server EXEC:cat; }
start_corrupting() { start_server "SYSTEM:stdbuf -o0 tr a b"; }
start_silent() { start_server "SYSTEM:sleep 10"; }

# wait_for FILE TEXT: until FILE has a line with TEXT (10 s at most).
wait_for() {
    local i
    for i in $(seq 1 200); do
        grep -qF -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    fail "'$2' never appeared in $1: $(cat "$1")"
}

# ---- echo-client ----

@test "echo-client sends MESSAGE and prints exactly the echo, adding no newline" {
    start_echo
    run --separate-stderr timeout 10 "$TOOLS/echo-client" -p "$PORT" "hello world"
    assert_success
    assert_output "hello world"
    timeout 10 "$TOOLS/echo-client" -p "$PORT" "hello" >"$BATS_TEST_TMPDIR/out"
    printf 'hello' | cmp - "$BATS_TEST_TMPDIR/out"
}

@test "echo-client returns a 5 MiB binary payload with NUL bytes intact" {
    start_echo
    local in="$BATS_TEST_TMPDIR/in.bin" out="$BATS_TEST_TMPDIR/out.bin"
    payload "$in" $((5 * 1024 * 1024))
    timeout 30 "$TOOLS/echo-client" -p "$PORT" <"$in" >"$out"
    cmp "$in" "$out"
}

@test "echo-client with empty stdin exits 0 with empty output" {
    start_echo
    run --separate-stderr timeout 10 "$TOOLS/echo-client" -p "$PORT" </dev/null
    assert_success
    assert_output ""
    assert_equal "$stderr" ""
}

@test "echo-client -q prints only the byte counts on stderr" {
    start_echo
    payload "$BATS_TEST_TMPDIR/in.bin" 300000
    run --separate-stderr timeout 10 "$TOOLS/echo-client" -p "$PORT" -q <"$BATS_TEST_TMPDIR/in.bin"
    assert_success
    assert_output ""
    assert_equal "$stderr" "sent 300000 received 300000"
}

@test "echo-client with a slow reader and small writes still returns every byte" {
    start_echo
    local in="$BATS_TEST_TMPDIR/in.bin" out="$BATS_TEST_TMPDIR/out.bin"
    payload "$in" 200000
    timeout 20 "$TOOLS/echo-client" -p "$PORT" --chunk 1000 --read-delay 2 <"$in" >"$out"
    cmp "$in" "$out"
}

@test "echo-client prints what the server really sent back, corrupted or not" {
    start_corrupting
    run --separate-stderr timeout 10 "$TOOLS/echo-client" -p "$PORT" "abcabc"
    assert_success
    assert_output "bbcbbc"
}

@test "echo-client --no-shutdown stops once the echo is back, without waiting for EOF" {
    # This server echoes but keeps the connection open after the client's EOF,
    # so only a client that does not wait for the server to close can finish.
    start_server "SYSTEM:cat; sleep 10"
    run --separate-stderr timeout 10 "$TOOLS/echo-client" -p "$PORT" -t 5 --no-shutdown "ping"
    assert_success
    assert_output "ping"
    run --separate-stderr timeout 10 "$TOOLS/echo-client" -p "$PORT" -t 1 "ping"
    assert_equal "$status" 3
}

@test "echo-client --reset sends its input and exits 0 without reading the echo" {
    start_echo
    run --separate-stderr timeout 10 "$TOOLS/echo-client" -p "$PORT" --reset "some request"
    assert_success
    assert_output ""
    # The server must still serve the next client.
    run --separate-stderr timeout 10 "$TOOLS/echo-client" -p "$PORT" "again"
    assert_success
    assert_output "again"
}

@test "echo-client reports a refused connection with exit 1 and a message naming connect" {
    local port
    port=$(free_port)
    run timeout 10 "$TOOLS/echo-client" -p "$port" hello
    assert_equal "$status" 1
    assert_output "echo-client: connect(127.0.0.1:$port): Connection refused"
}

@test "echo-client times out with exit 3 against a server that never answers" {
    start_silent
    run timeout 10 "$TOOLS/echo-client" -p "$PORT" -t 1 hello
    assert_equal "$status" 3
    assert_output "echo-client: timeout after 1 s: sent 5 bytes, received 0 bytes"
}

@test "echo-client usage errors exit 2 with a message and the usage" {
    run timeout 5 "$TOOLS/echo-client" hello
    assert_equal "$status" 2
    assert_line --index 0 "echo-client: -p PORT is required"
    assert_line --partial "usage: echo-client"

    run timeout 5 "$TOOLS/echo-client" -p 70000 hello
    assert_equal "$status" 2
    assert_line --index 0 "echo-client: -p 70000: not a port number (1-65535)"

    run timeout 5 "$TOOLS/echo-client" -p http hello
    assert_equal "$status" 2
    assert_line --index 0 "echo-client: -p http: not a port number (1-65535)"

    run timeout 5 "$TOOLS/echo-client" -p 8080 --bogus hello
    assert_equal "$status" 2
    assert_line --index 0 "echo-client: unknown option --bogus"

    run timeout 5 "$TOOLS/echo-client" -p
    assert_equal "$status" 2
    assert_line --index 0 "echo-client: -p needs a value"
}

@test "echo-client -h prints the usage on stdout and exits 0" {
    run --separate-stderr timeout 5 "$TOOLS/echo-client" -h
    assert_success
    assert_line --index 0 "usage: echo-client [-b ADDR] -p PORT [options] [MESSAGE]"
}

# ---- echo-load ----

@test "echo-load ping-pong run reports every request and no errors" {
    start_echo
    run --separate-stderr timeout 30 "$TOOLS/echo-load" -p "$PORT" -c 4 -n 200
    assert_success
    assert_line --index 0 "connections 4  length 128  depth 1"
    assert_line --index 1 --regexp '^requests +800  errors 0  seconds [0-9]+\.[0-9]{3}$'
    assert_line --index 2 --regexp '^throughput +[0-9]+ req/s  [0-9]+\.[0-9]{2} MB/s \(each way\)$'
    assert_line --index 3 --regexp '^latency us +p50 [0-9]+  p99 [0-9]+  max [0-9]+$'
}

@test "echo-load pipelined run (-D 8) reports every request and no errors" {
    start_echo
    run --separate-stderr timeout 30 "$TOOLS/echo-load" -p "$PORT" -c 3 -n 500 -D 8 -l 100
    assert_success
    assert_line --index 0 "connections 3  length 100  depth 8"
    assert_line --index 1 --regexp '^requests +1500  errors 0 '
}

@test "echo-load --csv prints the header and one line with the right fields" {
    start_echo
    run --separate-stderr timeout 30 "$TOOLS/echo-load" -p "$PORT" -c 2 -n 100 -D 2 -l 64 --csv
    assert_success
    assert_equal "${#lines[@]}" 2
    assert_line --index 0 \
        "connections,length,depth,requests,errors,seconds,req_per_s,mb_per_s,p50_us,p99_us,max_us"
    # connections,length,depth,requests,errors, then seconds, req/s, MB/s and 3 latencies
    assert_line --index 1 --regexp \
        '^2,64,2,200,0,[0-9]+\.[0-9]{3},[0-9]+,[0-9]+\.[0-9]{2},[0-9]+,[0-9]+,[0-9]+$'
}

@test "echo-load with 1 MiB messages (-D 2) completes without deadlock" {
    start_echo
    run --separate-stderr timeout 60 "$TOOLS/echo-load" -p "$PORT" -c 2 -n 3 -l 1M -D 2 -t 50
    assert_success
    assert_line --index 0 "connections 2  length 1048576  depth 2"
    assert_line --index 1 --regexp '^requests +6  errors 0 '
}

@test "echo-load -d runs for a duration and finishes what is in flight" {
    start_echo
    run --separate-stderr timeout 30 "$TOOLS/echo-load" -p "$PORT" -c 2 -D 4 -d 0.5
    assert_success
    assert_line --index 1 --regexp '^requests +[1-9][0-9]*  errors 0 '
}

@test "echo-load --vary: each connection has a length of its own from 1 to LEN, the same for the same seed" {
    start_echo
    run --separate-stderr timeout 30 "$TOOLS/echo-load" -p "$PORT" -c 50 -n 2 -l 5000 --vary 3
    assert_success
    assert_line --index 0 "connections 50  length 1 to 5000  depth 1"
    assert_line --index 1 --regexp '^requests +100  errors 0 '
    # the lengths differ: 100 messages of 5000 bytes would be 0.50 MB, of
    # 1 to 5000 bytes about half that (throughput = bytes / seconds)
    local secs mbps
    secs=$(sed -n 's/^requests .* seconds \([0-9.]*\)$/\1/p' <<<"$output")
    mbps=$(sed -n 's/^throughput .*  \([0-9.]*\) MB\/s.*/\1/p' <<<"$output")
    awk -v s="$secs" -v m="$mbps" 'BEGIN { b = s * m * 1e6; exit !(b > 0.1e6 && b < 0.45e6) }' ||
        fail "expected 0.1 to 0.45 MB echoed with --vary, got $secs s at $mbps MB/s"
}

@test "echo-load --eager: against a server that serves one connection at a time, every client is served in turn" {
    # socat with max-children=1 accepts the next connection only once the
    # one before it is closed; without --eager the first would wait for
    # the others to connect, which they never do before it is done
    start_server EXEC:cat ,max-children=1
    run --separate-stderr timeout 30 "$TOOLS/echo-load" -p "$PORT" -c 20 -n 2 -l 100 --eager -t 20
    assert_success
    assert_line --index 1 --regexp '^requests +40  errors 0 '
}

@test "echo-load verifies every byte: against a corrupting server it reports errors and exits 1" {
    start_corrupting
    run --separate-stderr timeout 30 "$TOOLS/echo-load" -p "$PORT" -c 2 -n 20
    assert_failure 1
    assert_line --index 1 --regexp '^requests +[0-9]+  errors [1-9][0-9]* '
    local named='echo-load: conn [01]: message [0-9]+ offset [0-9]+: expected 0x61, got 0x62'
    [[ "$stderr" =~ $named ]] || fail "no mismatch named in: $stderr"
}

@test "echo-load reports a server that closes the connection early" {
    start_server "SYSTEM:stdbuf -o0 head -c 1000"
    run --separate-stderr timeout 30 "$TOOLS/echo-load" -p "$PORT" -n 20
    assert_failure 1
    # 1000 bytes are 7 whole messages of 128; the other 13 count as errors.
    assert_line --index 1 --regexp '^requests +7  errors 13 '
    [[ "$stderr" == *"the server closed the connection after 7 messages"* ]] ||
        fail "unexpected stderr: $stderr"
}

@test "echo-load counts refused connections as errors, naming connect" {
    local port
    port=$(free_port)
    run --separate-stderr timeout 30 "$TOOLS/echo-load" -p "$port" -c 3 -n 10
    assert_failure 1
    assert_line --index 1 --regexp '^requests +0  errors 30 '
    [[ "$stderr" == *"echo-load: conn 0: connect(127.0.0.1:$port): Connection refused"* ]] ||
        fail "unexpected stderr: $stderr"
}

@test "echo-load gives up at -t against a server that never answers" {
    start_silent
    run --separate-stderr timeout 30 "$TOOLS/echo-load" -p "$PORT" -c 2 -n 10 -t 1
    assert_failure 1
    assert_line --index 1 --regexp '^requests +0  errors 20 '
    [[ "$stderr" == *"timeout after 1 s"* ]] || fail "unexpected stderr: $stderr"
    # where the connections were stuck: connected, each 128-byte message written, no echo
    [[ "$stderr" == *"(0 still connecting; 0 with 0 bytes of a message not yet written; 2 with 256 bytes written and not echoed)"* ]] ||
        fail "no account of where the connections were stuck: $stderr"
}

@test "echo-load stops on SIGINT and reports what was done" {
    start_echo
    local out="$BATS_TEST_TMPDIR/load.out"
    "$TOOLS/echo-load" -p "$PORT" -c 2 -n 1000000000 -t 20 >"$out" 2>&1 3>&- &
    CLIENT_PIDS+=("$!")
    sleep 0.5
    kill -INT "${CLIENT_PIDS[0]}"
    local status=0
    wait "${CLIENT_PIDS[0]}" || status=$?
    assert_equal "$status" 0
    run cat "$out"
    assert_line --index 1 --regexp '^requests +[0-9]+  errors 0 '
}

@test "echo-load --idle holds N connections and prints the holding line" {
    start_echo
    local out="$BATS_TEST_TMPDIR/idle.out"
    # --foreground: see the note on timeout in tests/helpers/common.bash.
    timeout --foreground 20 "$TOOLS/echo-load" -p "$PORT" -c 20 --idle >"$out" 2>&1 3>&- &
    CLIENT_PIDS+=("$!")
    wait_for "$out" "holding 20 connections"
    run bash -c "ss -Htn state established '( sport = :$PORT )' | wc -l"
    assert_output 20
    kill -TERM "${CLIENT_PIDS[0]}"
    local status=0
    wait "${CLIENT_PIDS[0]}" || status=$?
    assert_equal "$status" 0
}

@test "echo-load --idle -d holds for the duration, then exits 0" {
    start_echo
    run --separate-stderr timeout 20 "$TOOLS/echo-load" -p "$PORT" -c 3 --idle -d 0.5
    assert_success
    assert_output "holding 3 connections"
}

@test "echo-load refuses -c beyond the fd limit with a clear message" {
    run bash -c 'ulimit -n 64 && exec timeout 5 "$0" -p 8080 -c 100' "$TOOLS/echo-load"
    assert_equal "$status" 2
    assert_output --partial \
        "echo-load: -c 100 needs 110 file descriptors but the limit is 64; raise it with ulimit -n"
}

@test "echo-load usage errors exit 2 with a message and the usage" {
    run timeout 5 "$TOOLS/echo-load" -c 2
    assert_equal "$status" 2
    assert_line --index 0 "echo-load: -p PORT is required"
    assert_line --partial "usage: echo-load"

    run timeout 5 "$TOOLS/echo-load" -p 8080 -n 10 -d 1
    assert_equal "$status" 2
    assert_line --index 0 "echo-load: give -n REQUESTS or -d SECONDS, not both"

    run timeout 5 "$TOOLS/echo-load" -p 8080 -l 0
    assert_equal "$status" 2
    assert_line --index 0 "echo-load: -l 0: not a length from 1 to 16M"

    run timeout 5 "$TOOLS/echo-load" -p 8080 -D 0
    assert_equal "$status" 2

    run timeout 5 "$TOOLS/echo-load" -p 8080 --nope
    assert_equal "$status" 2
    assert_line --index 0 "echo-load: unknown option --nope"
}

# ---- stop-anytime ------------------------------------------------------------
# Its stand-ins for a server print a listening line for port 1 (where
# nothing listens, so only the "listen" moment of the first start, -n 1,
# is tried) and then behave well or badly on SIGTERM.

stop_anytime() {
    run --separate-stderr timeout 60 "$TOOLS/stop-anytime" "$@"
}

@test "stop-anytime: a real server stopped 40 times, at four moments: all exit 0, and the summary counts each moment" {
    local server="$BUILD/chapters/04-epoll/echo-epoll-lt"
    require_bin "$server" chapters/04-epoll
    stop_anytime -n 40 -S 7 -- "$server" -p 0
    assert_success
    assert_output --regexp "^40 starts, 40 stopped cleanly \(exit 0 within 3 s of SIGTERM\): 10/10 just after 'listening on', 10/10 just after a connect, 10/10 mid-echo, 10/10 0-2 ms after a line was sent; slowest exit [0-9.]+ ms \(seed 7\)$"
}

@test "stop-anytime: a server that ignores SIGTERM is killed after -t seconds and reported, exit 1" {
    stop_anytime -n 1 -t 1 -- bash -c 'trap "" TERM; echo "listening on 127.0.0.1:1"; exec sleep 30'
    assert_failure 1
    [[ "$stderr" == *"start 1 (just after 'listening on'), SIGTERM: still running 1.0 s later (killed)"* ]] ||
        fail "expected the start reported as still running, got: $stderr"
    assert_output --partial "1 starts, 0 stopped cleanly"
}

@test "stop-anytime: a non-zero exit, and a death by the signal itself, are failures too" {
    stop_anytime -n 1 -- bash -c 'trap "exit 3" TERM; echo "listening on 127.0.0.1:1"; while :; do sleep 0.01; done'
    assert_failure 1
    [[ "$stderr" == *"SIGTERM: exit status 3"* ]] || fail "expected 'exit status 3', got: $stderr"
    stop_anytime -n 1 -- bash -c 'echo "listening on 127.0.0.1:1"; exec sleep 30'
    assert_failure 1
    [[ "$stderr" == *"SIGTERM: killed by signal 15"* ]] || fail "expected 'killed by signal 15', got: $stderr"
}

@test "stop-anytime: a server's standard error is shown with its failure" {
    stop_anytime -n 1 -s INT -- bash -c 'trap "echo cannot stop now >&2; exit 1" INT; echo "listening on 127.0.0.1:1"; while :; do sleep 0.01; done'
    assert_failure 1
    [[ "$stderr" == *"SIGINT: exit status 1"*"| cannot stop now"* ]] || fail "expected the server's stderr under its failure, got: $stderr"
}

@test "stop-anytime: no listening line, or the wrong one, is a failed start, not a hang" {
    stop_anytime -n 1 -w 1 -- bash -c 'exec sleep 30'
    assert_failure 1
    [[ "$stderr" == *"no 'listening on' line within 1 s"*"start 1 (listen): did not start"* ]] || fail "got: $stderr"
    stop_anytime -n 1 -- bash -c 'echo hello; exec sleep 30'
    assert_failure 1
    [[ "$stderr" == *"expected 'listening on ADDR:PORT', got 'hello'"* ]] || fail "got: $stderr"
}

@test "stop-anytime usage errors exit 2 with a message" {
    stop_anytime -n 0 -- true
    assert_failure 2
    [[ "$stderr" == "stop-anytime: -n wants a number of starts, 1 or more: '0'"* ]] || fail "got: $stderr"
    stop_anytime -s HUP -- true
    assert_failure 2
    [[ "$stderr" == "stop-anytime: -s wants TERM or INT: 'HUP'"* ]] || fail "got: $stderr"
    stop_anytime -n 3
    assert_failure 2
    [[ "$stderr" == "stop-anytime: no server command after the options"* ]] || fail "got: $stderr"
}

@test "stop-anytime -R: a start that dies before a word is tried once more (Wine's failed starts), and only once" {
    local once="$BATS_TEST_TMPDIR/started-once"
    local server='[ -e "$0" ] || { touch "$0"; exit 1; }; trap "exit 0" TERM; echo "listening on 127.0.0.1:1"; while :; do sleep 0.01; done'
    stop_anytime -n 1 -- bash -c "$server" "$once"
    assert_failure 1
    rm -f "$once"
    stop_anytime -n 1 -R -- bash -c "$server" "$once"
    assert_success
    [[ "$stderr" == *"ended before its listening line; started again (-R)"* ]] || fail "got: $stderr"
    stop_anytime -n 1 -R -- bash -c 'exit 1'
    assert_failure 1
    [[ "$stderr" == *"start 1 (listen): did not start"* ]] || fail "got: $stderr"
}
