# SPDX-License-Identifier: MIT
# tests/helpers/common.bash: what every test file of the course loads first.
#
#   load ../helpers/common
#
# It finds the repository and the build folder, loads bats-support and
# bats-assert, and gives tests a small vocabulary:
#
#   chapter_bin NAME          path of a chapter program: build/chapters/NN-slug/NAME
#   impl_bin EXERCISE NAME    path of an exercise program, from $IMPL (solutions or exercises)
#   tool_bin NAME             path of a common tool (echo-client, echo-load)
#   server_start CMD...       start a server, wait for "listening on", set $PORT, $SERVER_PID
#   server_stop [SIGNAL]      signal it (default TERM), wait, set $SERVER_STATUS
#   run_client ARGS...        echo-client with a timeout
#   client_echo LINE [SECS]   one echo-client sends LINE: it must come back
#   slow_reader_echo IN SECS  IN through a slow-reading echo-client: it must come back
#   slow_reader_bytes IN SECS the same, judged by the bytes alone
#   clients_at_once N SIZE [ARGS...]  N echo-clients at once, each with its own payload
#   payload FILE BYTES        random binary payload that certainly contains NUL bytes
#   faults_env ...            env(1) arguments that preload the faults shim
#   faults_injected NAME...   fail unless the shim injected some of each NAME
#   slow_reader_mib MIB SECS [bytes]  MIB MiB of random bytes through slow_reader_echo
#   usage_contract PROG...    chapter programs: bad arguments exit 2 with usage, -h exits 0
#
# and, for tests that hold raw connections (bash's /dev/tcp) or look at the
# server process itself:
#
#   conn_open VAR             connect to $PORT, put the new fd in VAR
#   expect_echo FD LINE       send LINE, require it back within 10 s
#   expect_line FD LINE [WHEN]  a LINE sent earlier comes back within 10 s
#   expect_no_echo FD WHAT    nothing comes back on FD for a second
#   echoes_on_one_conn N      N messages one after another on one connection to $PORT
#   flood_never_reading [BYTES]  a client that sends BYTES (32 MiB) and does not read;
#                             flood_read_back SECS reads the echo, flood_end stops it
#   server_exited [TRIES]     has the server exited (zombies included)?
#   require_server_alive      fail with its status and stderr if it exited
#   server_gone MSG           fail with MSG, or with why the server died
#   stop_within SECONDS [SIG] signal it, require exit 0 within SECONDS
#   stop_asleep_in CALL SIG   a client served, the server asleep in CALL: SIG stops it, exit 0
#   wait_blocked_in CALL      wait until the server sleeps inside CALL
#   cpu_ticks PID, rss_kb PID, written_bytes PID   from /proc
#
# and, for what root has and an ordinary account may not (see "Limits" below):
#
#   require_fds N             N open files in one process: raise the soft limit, or skip
#   require_memlock KIB WHAT  KIB KiB of pinned memory (io_uring), or skip
#
# With VALGRIND=1 (make test VALGRIND=1), server_start runs the course's
# own programs under valgrind's memcheck, and server_stop fails the test
# when valgrind found an error or a leak (see "VALGRIND=1" below).
#
# Every process started with server_start is killed and reaped in teardown,
# even when a test fails half-way. Tests that define their own teardown()
# must call course_teardown from it.
#
# A note on timeout(1). A test that signals a `timeout N PROGRAM` it started
# in the background must write `timeout --foreground N PROGRAM`. Without
# --foreground, timeout passes the signal on and then sends SIGCONT to the
# program and to its whole process group. In a SAN=address build the program
# is by then exiting, and LeakSanitizer stops it with ptrace (PTRACE_ATTACH
# sends SIGSTOP); a SIGCONT arriving at that moment discards the pending
# SIGSTOP, so the leak checker waits forever for a stop that never comes
# while the program spins waiting for the leak checker. That hung a CI run
# once; a test in tests/meta/runner.bats keeps it from coming back.

TOP="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
BUILD="${BUILD:-$TOP/build}"
IMPL="${IMPL:-solutions}"
CHAPTER="$(basename "$BATS_TEST_DIRNAME")"
export TOP BUILD IMPL

bats_load_library bats-support
bats_load_library bats-assert

# untraced CMD...: run CMD without bats' DEBUG trap, which bats runs before
# every simple command of a test to know where a failure happened. In a loop
# of a few hundred clients it costs more than the clients: a loop of 3,000
# arithmetic steps takes about 2.8 s with it and 0.03 s without. A failure
# inside still fails the test with its message; bats then reports it at the
# line that called untraced. The trap is back once CMD returns.
untraced() {
    local saved
    saved=$(trap -p DEBUG)
    trap - DEBUG
    "$@"
    eval "$saved"
}

# The make command that builds what this test file needs, for error messages.
course_make_hint() {
    local san=""
    [ -n "${SAN:-}" ] && san=" SAN=$SAN"
    case "$1" in
    chapters/* | common*) echo "make -C $1$san   (or: make$san)" ;;
    *) echo "make$san" ;;
    esac
}

# require_bin PATH DIR: fail with a clear message when PATH was not built.
require_bin() {
    if [ ! -x "$1" ]; then
        fail "missing ${1#"$TOP"/}: build it first with: $(course_make_hint "$2")"
    fi
}

chapter_bin() {
    local p="$BUILD/chapters/$CHAPTER/$1"
    require_bin "$p" "chapters/$CHAPTER"
    echo "$p"
}

impl_bin() {
    local p="$BUILD/$IMPL/$CHAPTER/$1/$2"
    require_bin "$p" "$IMPL/$CHAPTER/$1"
    echo "$p"
}

tool_bin() {
    local p="$BUILD/common/tools/$1"
    require_bin "$p" common
    echo "$p"
}

FAULTS_SHIM="$BUILD/common/faults/libfaults.so"

# faults_env VAR=VALUE...: print env(1) arguments that preload the shim with
# the given settings and the per-test log file $BATS_TEST_TMPDIR/faults.log,
# which faults_count reads.
# Usage: server_start env $(faults_env FAULTS_SHORT_WRITE=50) "$bin" -p 0
faults_env() {
    require_bin "$FAULTS_SHIM" common
    local FAULTS_LOG="$BATS_TEST_TMPDIR/faults.log"
    # A sanitized binary wants its runtime first in the library list; the
    # shim only wraps libc calls, so the order does not matter here.
    echo "LD_PRELOAD=$FAULTS_SHIM FAULTS_LOG=$FAULTS_LOG ASAN_OPTIONS=verify_asan_link_order=0:${ASAN_OPTIONS:-} $*"
}

# log_total LOG NAME: the sum of every NAME=N in LOG (0 when there is no LOG),
# the log each process of a test appends its counters to.
log_total() {
    local total=0 n
    [ -f "$1" ] || { echo 0; return; }
    for n in $(grep -o "$2=[0-9]*" "$1" | cut -d= -f2); do
        total=$((total + n))
    done
    echo "$total"
}

# faults_count NAME: total of one counter (short_reads, short_writes, eintr,
# eagain) over every process that wrote to this test's faults log.
faults_count() {
    log_total "$BATS_TEST_TMPDIR/faults.log" "$1"
}

# counted_positive COUNT_FN WHO NAME...: fail unless `COUNT_FN NAME` is above
# 0 for every NAME, naming WHO and every count; for a shim that must prove it
# injected what the test is about.
counted_positive() {
    local fn="$1" who="$2" name n counts="" ok=1
    shift 2
    for name in "$@"; do
        n=$("$fn" "$name")
        counts+=" $name=$n"
        [ "$n" -gt 0 ] || ok=0
    done
    [ "$ok" -eq 1 ] || fail "$who should have injected some of each of: $*; counted:$counts"
}

# late_waits_reach MARK N: wait (up to 10 s) until the faults shim's
# FAULTS_LATE_WAIT_MARK file MARK says N condition waits have begun late: the
# N-th waiter is then in the moment between testing its condition and
# sleeping, mutex held, for the FAULTS_LATE_WAIT the test gave.
late_waits_reach() {
    local i
    for ((i = 0; i < 500; i++)); do
        [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0
        sleep 0.02
    done
    fail "the faults shim saw $(stat -c %s "$1" 2>/dev/null || echo 0) late condition waits in 10 s, expected $2"
}

# faults_injected NAME...: the faults shim injected at least one of each NAME
# (short_reads, short_writes, eintr, eagain), or the test proved nothing.
faults_injected() {
    counted_positive faults_count "the faults shim" "$@"
}

payload() {
    # NUL and 0xff bytes first, so "binary data" is never luck.
    { printf '\000\377\000\r\n\000'; head -c "$(($2 > 6 ? $2 - 6 : 0))" /dev/urandom; } >"$1"
    truncate -s "$2" "$1"
}

# usage_contract PROG...: each chapter program PROG answers a bad argument
# with its usage on stderr and exit 2, and -h with its usage and exit 0.
# shellcheck disable=SC2154 # output and status are set by bats' run
usage_contract() {
    local p bin
    for p in "$@"; do
        bin="$(chapter_bin "$p")"
        run timeout 10 bash -c '"$1" --bogus 2>&1 >/dev/null' _ "$bin"
        [ "$status" -eq 2 ] || fail "$p --bogus: expected exit 2, got $status: $output"
        [[ "$output" == *"usage:"* ]] || fail "$p --bogus: expected the usage on stderr, got: $output"
        run timeout 10 "$bin" -h
        [ "$status" -eq 0 ] || fail "$p -h: expected exit 0, got $status: $output"
        [[ "$output" == *"usage:"* ]] || fail "$p -h: expected the usage, got: $output"
    done
}

_course_pids=()
_course_srv_n=0

# server_start CMD...: run CMD in the background (stdout and stderr to files),
# wait up to 10 s for its "listening on ADDR:PORT" line, set PORT, SERVER_PID,
# SERVER_OUT and SERVER_ERR. Fails with the server's stderr if it exits first.
server_start() {
    _course_srv_n=$((_course_srv_n + 1))
    SERVER_OUT="$BATS_TEST_TMPDIR/server$_course_srv_n.out"
    SERVER_ERR="$BATS_TEST_TMPDIR/server$_course_srv_n.err"
    SERVER_VALGRIND_LOG=""
    : >"$SERVER_OUT"
    local cmd=("$@") i tries=200
    if course_valgrind; then
        _course_valgrind_wrap cmd
        tries=600 # valgrind takes a second or more to start a program
    fi
    # 3>&- : bats waits for fd 3 to close; a server holding it would hang the run.
    "${cmd[@]}" >"$SERVER_OUT" 2>"$SERVER_ERR" 3>&- &
    SERVER_PID=$!
    _course_pids+=("$SERVER_PID")
    for ((i = 0; i < tries; i++)); do
        if grep -q '^listening on ' "$SERVER_OUT" 2>/dev/null; then
            PORT=$(sed -n 's/^listening on [0-9.]*:\([0-9]*\)$/\1/p' "$SERVER_OUT" | head -n 1)
            [ -n "$PORT" ] || fail "bad listening line: $(head -n 1 "$SERVER_OUT")"
            return 0
        fi
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            # (`|| ...`: under bats' set -e a bare failing wait would end the
            # test here, silently, before the message below)
            SERVER_STATUS=0
            wait "$SERVER_PID" || SERVER_STATUS=$?
            course_note_exit "$SERVER_STATUS" "$*"
            fail "server exited with status $SERVER_STATUS before listening: ${cmd[*]}
--- stderr ---
$(cat "$SERVER_ERR")$(course_valgrind_log)"
        fi
        sleep 0.05
    done
    fail "server printed no 'listening on' line within $((tries / 20)) s: ${cmd[*]}"
}

# server_alive: the server started last is still running.
server_alive() {
    kill -0 "$SERVER_PID" 2>/dev/null
}

# server_stop [SIGNAL]: send SIGNAL (default TERM) and wait up to 10 s for
# the exit; sets SERVER_STATUS. A server that does not exit is killed and the
# test fails: a clean shutdown is part of every server's contract.
server_stop() {
    local sig="${1:-TERM}" i tries=200
    # valgrind: the leak check at exit takes time, and valgrind runs one
    # thread at a time: chapter 02's server may have 2,000 of them to end
    course_valgrind && tries=2400
    kill -"$sig" "$SERVER_PID" 2>/dev/null || true
    for ((i = 0; i < tries; i++)); do
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -9 "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null || true
        fail "server did not exit within $((tries / 20)) s of SIG$sig"
    fi
    SERVER_STATUS=0
    wait "$SERVER_PID" || SERVER_STATUS=$?
    course_note_exit "$SERVER_STATUS" "server"
    [ "$SERVER_STATUS" -ne 97 ] || [ -z "$SERVER_VALGRIND_LOG" ] ||
        fail "valgrind found errors in the server (exit status 97):$(course_valgrind_log)"
}

# A server started as `strace ... PROGRAM` is two processes: strace, whose
# pid is $SERVER_PID, and the program it traces, its child. A signal meant
# for the server goes to the child: strace, sent SIGTERM itself, would
# detach and leave the server running.
# traced_child: TRACED_PID is the traced server (fails if there is none).
traced_child() {
    TRACED_PID=$(pgrep -P "$SERVER_PID" | head -n 1)
    [ -n "$TRACED_PID" ] || fail "no traced server process under strace (pid $SERVER_PID)"
}

# traced_stop [SIG]: SIG (TERM) to the traced server, then wait for strace
# to exit with it, as server_stop does; its status is in $SERVER_STATUS.
traced_stop() {
    traced_child
    kill -"${1:-TERM}" "$TRACED_PID"
    server_stop 0
}

# course_note_exit STATUS WHAT: the course's own meta tests run exercises as
# shipped and need to know why they failed: TODO (exit 99) is the right
# reason, a crash is a course bug. COURSE_EXIT_LOG collects crashes.
course_note_exit() {
    [ -n "${COURSE_EXIT_LOG:-}" ] || return 0
    case "$1" in
    132 | 134 | 135 | 136 | 139) echo "crash: status $1: $2" >>"$COURSE_EXIT_LOG" ;;
    esac
}

# run_client ARGS...: echo-client with a timeout (30 s unless CLIENT_TIMEOUT).
run_client() {
    timeout "${CLIENT_TIMEOUT:-30}" "$(tool_bin echo-client)" "$@"
}

# client_echo LINE [SECONDS]: one echo-client sends LINE and waits up to
# SECONDS (10) for the echo; it must exit 0 with LINE back.
client_echo() {
    local out
    out=$(run_client -p "$PORT" -t "${2:-10}" "$1") || server_gone "echo-client failed (status $?)"
    [ "$out" = "$1" ] || fail "expected '$1', got '$out'"
}

# slow_reader_echo IN SECONDS: IN through echo-client as a slow reader (up
# to 1 MiB written per turn, a 2 ms nap before each read of 64 KiB): the
# echo piles up, the server's socket fills, its writes come back short or
# EAGAIN, and the rest must wait for room, in order. echo-client must exit
# 0 within SECONDS with every byte of IN back (in IN.out).
slow_reader_echo() {
    local in="$1"
    CLIENT_TIMEOUT="$2" run_client -p "$PORT" --chunk 1M --read-delay 2 <"$in" >"$in.out" ||
        server_gone "echo-client failed (status $?)"
    cmp -s "$in" "$in.out" ||
        fail "echoed bytes differ: sent $(stat -c %s "$in"), got $(stat -c %s "$in.out"); $(cmp "$in" "$in.out" 2>&1 | head -n 1)"
}

# slow_reader_bytes IN SECONDS: the same slow reader, judged by the bytes
# alone: whatever echo-client's status, what came back within SECONDS (in
# IN.out) must be IN.
slow_reader_bytes() {
    local in="$1"
    CLIENT_TIMEOUT="$2" run_client -p "$PORT" --chunk 1M --read-delay 2 <"$in" >"$in.out" || true
    if ! cmp -s "$in" "$in.out"; then
        server_exited && server_gone "the server died"
        fail "sent $(stat -c %s "$in") bytes, got $(stat -c %s "$in.out") back within $2 s"
    fi
}

# slow_reader_mib MIB SECONDS [bytes]: MIB MiB of random bytes (NUL bytes
# included) through slow_reader_echo, or with "bytes" slow_reader_bytes.
slow_reader_mib() {
    local in="$BATS_TEST_TMPDIR/slow-reader-$1M"
    payload "$in" $(($1 * 1024 * 1024))
    if [ "${3:-}" = bytes ]; then
        slow_reader_bytes "$in" "$2"
    else
        slow_reader_echo "$in" "$2"
    fi
}

# clients_at_once N SIZE [ARGS...]: N echo-clients at once (run_client -p
# $PORT ARGS), client i sending its own random payload of SIZE bytes, an
# arithmetic expression that may use i ('200000', '100 + i * 3000'). Says on
# stderr which clients failed, and how; returns 1 unless every one exited 0
# with its own bytes back (the test says what that means).
clients_at_once() {
    local n="$1" size="$2" i f pids=() failed=0
    shift 2
    for ((i = 0; i < n; i++)); do
        f="$BATS_TEST_TMPDIR/c$i"
        payload "$f" $((size))
        run_client -p "$PORT" "$@" <"$f" >"$f.out" &
        pids+=($!)
    done
    for ((i = 0; i < n; i++)); do
        f="$BATS_TEST_TMPDIR/c$i"
        wait "${pids[$i]}" || { echo "client $i: echo-client status $?" >&2; failed=1; }
        cmp -s "$f" "$f.out" ||
            { echo "client $i: echoed bytes differ: $(cmp "$f" "$f.out" 2>&1 | head -n 1)" >&2; failed=1; }
    done
    [ "$failed" -eq 0 ]
}

# ---- the server process, seen from /proc -------------------------------------

# cpu_ticks PID: user + system CPU time used so far, in clock ticks.
cpu_ticks() {
    local stat
    read -r stat <"/proc/$1/stat" || return 1
    # the command name is in parentheses and may hold spaces: skip past it
    set -- ${stat##*) }
    echo $((${12} + ${13}))
}

# rss_kb PID: resident memory in KiB (nothing, and no awk message, once the
# process is gone: the caller's check says what that means).
rss_kb() {
    awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

# written_bytes PID: bytes the process has written so far (write(2) and
# friends); nothing once it is gone.
written_bytes() {
    awk '/^wchar:/ { print $2 }' "/proc/$1/io" 2>/dev/null
}

# writer_stuck PID: wait (up to 20 s) until PID's count of bytes written
# stops moving for 0.5 s: its peer has stopped reading it and every buffer
# between them is full. STUCK_AT is that count. Returns 1 if PID ended
# first (it wrote everything it had).
writer_stuck() {
    local i now last=-1
    for ((i = 0; i < 40; i++)); do
        sleep 0.5
        kill -0 "$1" 2>/dev/null || return 1
        now=$(written_bytes "$1") || return 1
        [ "$now" = "$last" ] && break
        last=$now
    done
    # shellcheck disable=SC2034 # read by the caller
    STUCK_AT=$last
    kill -0 "$1" 2>/dev/null
}

# server_exited [TRIES]: has the server exited, or is it a zombie not yet
# reaped (kill -0 still succeeds on one)? Looks TRIES times, 50 ms apart.
server_exited() {
    local i state
    for ((i = 0; i < ${1:-1}; i++)); do
        ((i == 0)) || sleep 0.05
        state=$(cat "/proc/$SERVER_PID/stat" 2>/dev/null) || return 0
        state=${state##*) }
        [ "${state%% *}" = Z ] && return 0
    done
    return 1
}

# server_gone MSG: a client failed; if the server died, say so (with its
# status and stderr: an exercise's TODO shows there), else fail with MSG.
server_gone() {
    if server_exited 20; then
        SERVER_STATUS=0
        wait "$SERVER_PID" || SERVER_STATUS=$?
        course_note_exit "$SERVER_STATUS" server
        fail "$1: the server exited with status $SERVER_STATUS
--- stderr ---
$(cat "$SERVER_ERR")"
    fi
    fail "$1"
}

# require_server_alive: the server started last is still running.
require_server_alive() {
    server_exited || return 0
    server_gone "the server is not running"
}

# stop_within SECONDS [SIGNAL]: send SIGNAL (TERM), require exit 0 within SECONDS.
stop_within() {
    local limit="$1" sig="${2:-TERM}" t0 ms
    t0=$(date +%s%N)
    server_stop "$sig"
    ms=$((($(date +%s%N) - t0) / 1000000))
    [ "$SERVER_STATUS" -eq 0 ] ||
        fail "expected exit status 0 after SIG$sig, got $SERVER_STATUS
--- stderr ---
$(cat "$SERVER_ERR")"
    [ "$ms" -le $((limit * 1000)) ] || fail "expected an exit within $limit s of SIG$sig, took $ms ms"
}

# syscall_numbers CALL: the numbers /proc/PID/syscall shows for CALL on this
# machine, as a regex; empty when this architecture is not listed.
syscall_numbers() {
    case "$(uname -m):$1" in
    x86_64:read) echo 0 ;;
    x86_64:write) echo 1 ;;
    x86_64:accept) echo '43|288' ;;
    x86_64:epoll_wait) echo '232|281|441' ;;
    x86_64:io_uring_enter) echo 426 ;;
    aarch64:read) echo 63 ;;
    aarch64:write) echo 64 ;;
    aarch64:accept) echo '202|242' ;;
    aarch64:epoll_wait) echo '22|441' ;;
    aarch64:io_uring_enter) echo 426 ;;
    esac
}

# wait_blocked_in CALL: wait up to 10 s until the server's main thread is
# asleep inside the system call CALL, so a signal sent next finds it there.
# Where /proc/PID/syscall cannot say (another architecture, or a ptrace
# policy that hides it even from the parent), wait 1 s.
wait_blocked_in() {
    local nr i now=""
    require_server_alive
    nr="$(syscall_numbers "$1")"
    # /proc/PID/syscall is read with the shell's own `read`, in the process
    # that started the server: the kernel shows it only to a process that
    # may ptrace the server, and under Yama's ptrace_scope=1 (Ubuntu's
    # default) an ordinary user may ptrace only their descendants; a `cut`
    # beside the server is not one (root may ptrace anything).
    if [ -z "$nr" ] || ! read -r now _ <"/proc/$SERVER_PID/syscall" 2>/dev/null; then
        sleep 1
        return 0
    fi
    for ((i = 0; i < 200; i++)); do
        require_server_alive
        now=""
        read -r now _ <"/proc/$SERVER_PID/syscall" 2>/dev/null || true
        if [[ "$now" =~ ^($nr)$ ]] && grep -q '^State:.*(sleeping)' "/proc/$SERVER_PID/status"; then
            return 0
        fi
        sleep 0.05
    done
    fail "the server was not blocked in $1() within 10 s (last system call: $now)"
}

# ---- raw connections (bash's /dev/tcp), to hold clients open in any order -----

# conn_open VAR: connect to $PORT; store the new descriptor in VAR.
conn_open() {
    local _conn_fd
    exec {_conn_fd}<>"/dev/tcp/127.0.0.1/$PORT" || fail "could not connect to port $PORT"
    printf -v "$1" '%s' "$_conn_fd"
}

# expect_echo FD LINE: send one line, require the same line back within 10 s.
expect_echo() {
    local line=""
    # in a subshell: a write to a reset socket raises SIGPIPE, which would
    # kill the test itself
    (printf '%s\n' "$2" >&"$1") 2>/dev/null
    read -r -t 10 line <&"$1" || true
    [ "$line" = "$2" ] || server_gone "expected the echo '$2' within 10 s, got '$line'"
}

# expect_line FD LINE [WHEN]: the LINE, sent earlier, comes back within 10 s.
expect_line() {
    local line=""
    read -r -t 10 line <&"$1" || true
    [ "$line" = "$2" ] || server_gone "expected the echo '$2' ${3:+$3 }within 10 s, got '$line'"
}

# expect_no_echo FD WHAT: nothing comes back on FD for a second.
expect_no_echo() {
    local line=""
    if read -r -t 1 line <&"$1"; then
        fail "$2 got an echo ('$line') when none was expected yet"
    fi
}

# flood_never_reading [BYTES]: connect to $PORT and send BYTES (32 MiB) of
# zeros in the background without reading: the server's echo fills this
# client's receive buffer, then the server's send buffer, and its write()
# blocks (or says EAGAIN, or an io_uring server stops receiving). Sets
# FLOOD_FD, FLOOD_PID and FLOOD_BYTES. flood_read_back SECONDS then reads
# the echo and prints how many bytes came back within SECONDS; flood_end
# kills the writer and closes the connection.
flood_never_reading() {
    FLOOD_BYTES="${1:-$((32 * 1024 * 1024))}"
    exec {FLOOD_FD}<>"/dev/tcp/127.0.0.1/$PORT"
    head -c "$FLOOD_BYTES" /dev/zero >&"$FLOOD_FD" 2>/dev/null 3>&- &
    FLOOD_PID=$!
    _course_pids+=("$FLOOD_PID")
}

flood_read_back() {
    timeout "$1" head -c "$FLOOD_BYTES" <&"$FLOOD_FD" | wc -c
}

flood_end() {
    kill "$FLOOD_PID" 2>/dev/null || true
    wait "$FLOOD_PID" 2>/dev/null || true
    exec {FLOOD_FD}>&-
}

# stop_asleep_in CALL SIG: start the server, serve one client, wait until the
# server sleeps in CALL (epoll_wait, kevent...) with that client connected,
# then SIG must stop it with exit 0 within 5 s.
stop_asleep_in() {
    local a
    server_start "${SERVER_CMD[@]}" -p 0
    conn_open a
    expect_echo "$a" ping
    wait_blocked_in "$1"
    stop_within 5 "$2"
    exec {a}>&-
}

# echoes_on_one_conn N: one connection to $PORT, and N messages on it, each
# sent once the previous one came back: the server must go on serving a
# connection after its first event.
echoes_on_one_conn() {
    local fd i
    conn_open fd
    for ((i = 1; i <= $1; i++)); do
        expect_echo "$fd" "message $i"
    done
    exec {fd}>&-
}

# PATH without bats' own libexec folder, which bats puts first while it runs.
# A test that runs make (and through it bats again) needs the real bats
# first in PATH: the libexec one relies on a shell function that /bin/sh
# (make's shell) does not pass on.
course_clean_path() {
    local out="" d
    local IFS=:
    for d in $PATH; do
        case "$d" in */bats-core* | */libexec/bats*) ;; *) out="${out:+$out:}$d" ;; esac
    done
    echo "$out"
}

course_teardown() {
    local pid f
    # A failed test shows what its servers said on stderr, last lines
    # first-hand: the reason a server gave up is often the whole story.
    if [ -z "${BATS_TEST_COMPLETED:-}" ] && [ -n "${BATS_TEST_TMPDIR:-}" ]; then
        for f in "$BATS_TEST_TMPDIR"/server*.err; do
            [ -s "$f" ] || continue
            echo "--- the server's stderr (${f##*/}, last 10 lines) ---" >&2
            tail -n 10 "$f" >&2
        done
    fi
    local st
    for pid in "${_course_pids[@]}"; do
        # Only a child of this shell: a server already waited for has given
        # its pid back, and the kernel may have handed it to another test's
        # process since.
        st=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
        st=${st##*) }
        st=${st#* }
        [ "${st%% *}" = "$BASHPID" ] || continue
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null || true
    done
    _course_pids=()
}

teardown() {
    course_teardown
}

# san_slowdown: how many times slower than the normal build the sanitized
# build under test runs its servers, for the few bounds that are about time
# (ThreadSanitizer checks every memory access; ASan and UBSan less;
# valgrind translates every instruction).
san_slowdown() {
    if course_valgrind; then
        echo 20
        return
    fi
    case "$BUILD" in
    */san-thread*) echo 5 ;;
    */san-*) echo 3 ;;
    *) echo 1 ;;
    esac
}

# ---- limits: what root has and an ordinary account may not ---------------------
#
# Root may raise any limit; an ordinary account gets at most its hard
# limits. Debian gives one a soft limit of 1024 open files (the hard limit
# is higher), which make test (common/mk/run-tests.sh) raises to the hard
# limit before any test starts. A test that needs more than the hard limit
# allows skips at once, saying how much it needs and how to raise it,
# rather than failing a minute later.

# course_fd_hard: the hard limit on open files, as a number ("unlimited"
# is fs.nr_open, the most a process may have).
course_fd_hard() {
    local hard
    hard=$(ulimit -Hn)
    if [ "$hard" = unlimited ]; then
        hard=$(cat /proc/sys/fs/nr_open 2>/dev/null || echo 1048576)
    fi
    echo "$hard"
}

# course_fd_advice N: how to raise the hard limit on open files to N.
course_fd_advice() {
    echo "raise the hard limit to $1 or more: for an account, the line '${USER:-$(id -un)} hard nofile $1' in /etc/security/limits.conf (from its next login); for a systemd unit, LimitNOFILE=$1 in its [Service] section; for a container, docker run --ulimit nofile=$1 (make test raises the soft limit to the hard one itself)"
}

# require_fds N: this test needs N open files in one process (a server
# holding N - 64 connections, say). Raises this shell's soft limit to N if
# it is lower (the servers and clients the test starts inherit it), or
# skips, saying why, where the hard limit is below N. In a file that loads
# wine.bash, the wineserver (which holds every Windows socket) must have
# room too: see wine_require_fds.
require_fds() {
    local need="$1" hard soft
    [[ "$need" =~ ^[1-9][0-9]*$ ]] || fail "require_fds: '$need' is not a number of files"
    hard=$(course_fd_hard)
    [ "$hard" -ge "$need" ] ||
        skip "needs $need open files in one process, and the hard limit here is $hard (ulimit -Hn): $(course_fd_advice "$need")"
    soft=$(ulimit -Sn)
    if [ "$soft" != unlimited ] && [ "$soft" -lt "$need" ]; then
        ulimit -Sn "$need" || fail "require_fds: could not raise the soft limit from $soft to $need (hard: $hard)"
    fi
    if declare -F wine_require_fds >/dev/null; then
        wine_require_fds "$need"
    fi
}

# require_memlock KIB WHAT: WHAT pins KIB KiB of memory (io_uring's
# registered buffers; on some kernels, 6.18 among them, its rings as well).
# Unless the process has CAP_IPC_LOCK (root has it, though not in a
# container with Docker's default capabilities), pinned memory counts
# against RLIMIT_MEMLOCK, summed over every process of the user. Raises the
# soft limit to KIB if it is lower, or skips, saying why, where the hard
# limit is below it.
require_memlock() {
    local need="$1" what="$2" caps soft hard
    caps=$(awk '/^CapEff:/ { print $2 }' /proc/self/status 2>/dev/null)
    if [ -n "$caps" ] && (((16#$caps >> 14) & 1)); then
        return 0 # CAP_IPC_LOCK: nothing is counted
    fi
    soft=$(ulimit -Sl) hard=$(ulimit -Hl)
    if [ "$soft" = unlimited ] || [ "$soft" -ge "$need" ]; then
        return 0
    fi
    if [ "$hard" = unlimited ] || [ "$hard" -ge "$need" ]; then
        ulimit -Sl "$need" || fail "require_memlock: could not raise the soft limit from $soft KiB to $need KiB (hard: $hard)"
        return 0
    fi
    skip "$what pins $need KiB of memory, which counts against the locked-memory limit of a process without CAP_IPC_LOCK, and the hard limit here is $hard KiB (ulimit -Hl): raise it to $need or more: for an account, the line '${USER:-$(id -un)} hard memlock $need' in /etc/security/limits.conf (from its next login); for a systemd unit, LimitMEMLOCK=${need}K; for a container, docker run --ulimit memlock=$((need * 1024))"
}

# ---- C# programs -------------------------------------------------------------------
#
# The chapters' C# companions (chapters/NN-slug/dotnet/NAME/) are built by
# make where the .NET SDK is installed (common/mk/dotnet.mk), into the same
# folder as the C programs: chapter_bin finds them.

# course_dotnet_advice: how to get the .NET SDK, for a skip message.
course_dotnet_advice() {
    echo "install the .NET SDK 8 or newer (sudo make deps does where the distribution packages it: Ubuntu has dotnet-sdk-8.0, or dotnet8; Debian 12 does not: Microsoft's instructions are at https://learn.microsoft.com/dotnet/core/install/linux-debian), then run make"
}

# require_dotnet: this test runs a C# program. Skips, saying why, where
# there is none to run: no SDK (make skipped them), a sanitizer build (SAN=
# instruments C code; make builds no C# there), or VALGRIND=1 (memcheck
# checks C memory; a C# program's memory is the garbage collector's, and
# the runtime under valgrind would outlast every time bound).
require_dotnet() {
    case "${SAN:-}:$BUILD" in
    ?*:* | *:*/san-*) skip "a C# program, and a sanitizer build (${SAN:-${BUILD##*/}}) instruments C code only: the C# programs are built and tested by plain make and make test" ;;
    esac
    valgrind_skip "a C# program: memcheck checks the C programs' memory, and a C# program's is the garbage collector's"
    command -v "${DOTNET:-dotnet}" >/dev/null ||
        skip "a C# program, and the .NET SDK (dotnet) is not installed: $(course_dotnet_advice)"
    # as common/mk/dotnet.mk decides whether to build them
    local major
    major=$("${DOTNET:-dotnet}" --list-sdks 2>/dev/null | sed -n 's/^\([0-9][0-9]*\)\..*/\1/p' | sort -n | tail -n 1)
    [ "${major:-0}" -ge 8 ] ||
        skip "a C# program, and ${DOTNET:-dotnet} has ${major:+only SDK }${major:-no SDK}: $(course_dotnet_advice)"
}

# ---- VALGRIND=1 ------------------------------------------------------------------
#
# make test VALGRIND=1 runs every course program that server_start starts
# (the first word under $BUILD that is not a Windows .exe or a preloaded
# .so) under valgrind's memcheck: --error-exitcode=97, full leak check,
# definite and indirect leaks counted as errors, one log per server in the
# test's folder. server_stop fails on status 97 and shows the log. Tests
# whose figures valgrind changes skip with the reason (valgrind_skip):
# strace would count valgrind's own system calls, a server started under a
# low `ulimit -n N` would not get the fds the test counts on (valgrind
# keeps some of its own, and refuses a limit of 12 outright), and
# resident memory includes its shadow memory. Time bounds are stretched
# (san_slowdown). --max-threads: a thread per connection (chapter 02) needs
# more than valgrind's default 500.

course_valgrind() { [ "${VALGRIND:-0}" = 1 ]; }

# valgrind_skip WHY: skip this test under VALGRIND=1, saying why.
valgrind_skip() {
    ! course_valgrind || skip "under VALGRIND=1: $1"
}

# course_valgrind_log: the server's valgrind log, for a failure message.
course_valgrind_log() {
    [ -n "${SERVER_VALGRIND_LOG:-}" ] && [ -s "$SERVER_VALGRIND_LOG" ] || return 0
    printf '\n--- valgrind (%s) ---\n' "${SERVER_VALGRIND_LOG##*/}"
    cat "$SERVER_VALGRIND_LOG"
}

# _course_valgrind_wrap ARRAY: put valgrind in front of the course program
# in the command held by ARRAY (a name); leaves it alone when the test runs
# valgrind itself, and skips a test that puts strace in front.
_course_valgrind_wrap() {
    local -n _vc="$1"
    local i w limit
    for i in "${!_vc[@]}"; do
        w="${_vc[$i]}"
        case "${w##*/}" in
        valgrind) return 0 ;;
        strace) valgrind_skip "strace would count valgrind's own system calls" ;;
        esac
        # a limit the test counts on (not one raised to hold many clients);
        # bash -c 'ulimit -n "$0" ...' LIMIT passes it as the next word
        limit=""
        if [[ "$w" =~ ulimit\ -n\ \"?([0-9]+) ]]; then
            limit=${BASH_REMATCH[1]}
        elif [[ "$w" == *'ulimit -n "$0"'* ]]; then
            limit=${_vc[$((i + 1))]:-}
        fi
        if [[ "$limit" =~ ^[0-9]+$ ]] && [ "$limit" -lt 4096 ]; then
            valgrind_skip "valgrind takes descriptors of its own (at start, and at the top of the limit; it refuses a limit of 12 outright), so the server would not get the fds this test counts on"
        fi
    done
    for i in "${!_vc[@]}"; do
        w="${_vc[$i]}"
        case "$w" in
        *.exe | *.so) continue ;;
        "$BUILD"/*) [ -f "$w" ] && [ -x "$w" ] || continue ;;
        *) continue ;;
        esac
        SERVER_VALGRIND_LOG="$BATS_TEST_TMPDIR/valgrind$_course_srv_n.log"
        # shellcheck disable=SC2054 # the commas are valgrind's, inside one word
        _vc=("${_vc[@]:0:i}" valgrind --quiet --error-exitcode=97 --max-threads=4096 --leak-check=full
            --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect
            --log-file="$SERVER_VALGRIND_LOG" "${_vc[@]:i}")
        return 0
    done
}
