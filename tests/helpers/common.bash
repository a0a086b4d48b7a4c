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
#   payload FILE BYTES        random binary payload that certainly contains NUL bytes
#   faults_env ...            env(1) arguments that preload the faults shim
#
# Every process started with server_start is killed and reaped in teardown,
# even when a test fails half-way. Tests that define their own teardown()
# must call course_teardown from it.

TOP="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
BUILD="${BUILD:-$TOP/build}"
IMPL="${IMPL:-solutions}"
CHAPTER="$(basename "$BATS_TEST_DIRNAME")"
export TOP BUILD IMPL

bats_load_library bats-support
bats_load_library bats-assert

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

# faults_count NAME: total of one counter (short_reads, short_writes, eintr,
# eagain) over every process that wrote to this test's faults log.
faults_count() {
    local total=0 n FAULTS_LOG="$BATS_TEST_TMPDIR/faults.log"
    [ -f "$FAULTS_LOG" ] || { echo 0; return; }
    for n in $(grep -o "$1=[0-9]*" "$FAULTS_LOG" | cut -d= -f2); do
        total=$((total + n))
    done
    echo "$total"
}

payload() {
    # NUL and 0xff bytes first, so "binary data" is never luck.
    { printf '\000\377\000\r\n\000'; head -c "$(($2 > 6 ? $2 - 6 : 0))" /dev/urandom; } >"$1"
    truncate -s "$2" "$1"
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
    : >"$SERVER_OUT"
    # 3>&- : bats waits for fd 3 to close; a server holding it would hang the run.
    "$@" >"$SERVER_OUT" 2>"$SERVER_ERR" 3>&- &
    SERVER_PID=$!
    _course_pids+=("$SERVER_PID")
    local i
    for ((i = 0; i < 200; i++)); do
        if grep -q '^listening on ' "$SERVER_OUT" 2>/dev/null; then
            PORT=$(sed -n 's/^listening on [0-9.]*:\([0-9]*\)$/\1/p' "$SERVER_OUT" | head -n 1)
            [ -n "$PORT" ] || fail "bad listening line: $(head -n 1 "$SERVER_OUT")"
            return 0
        fi
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            wait "$SERVER_PID"
            SERVER_STATUS=$?
            course_note_exit "$SERVER_STATUS" "$*"
            fail "server exited with status $SERVER_STATUS before listening: $*
--- stderr ---
$(cat "$SERVER_ERR")"
        fi
        sleep 0.05
    done
    fail "server printed no 'listening on' line within 10 s: $*"
}

# server_alive: the server started last is still running.
server_alive() {
    kill -0 "$SERVER_PID" 2>/dev/null
}

# server_stop [SIGNAL]: send SIGNAL (default TERM) and wait up to 10 s for
# the exit; sets SERVER_STATUS. A server that does not exit is killed and the
# test fails: a clean shutdown is part of every server's contract.
server_stop() {
    local sig="${1:-TERM}" i
    kill -"$sig" "$SERVER_PID" 2>/dev/null || true
    for ((i = 0; i < 200; i++)); do
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -9 "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
        fail "server did not exit within 10 s of SIG$sig"
    fi
    SERVER_STATUS=0
    wait "$SERVER_PID" || SERVER_STATUS=$?
    course_note_exit "$SERVER_STATUS" "server"
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
    local pid
    for pid in "${_course_pids[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then
            kill -9 "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null || true
        fi
    done
    _course_pids=()
}

teardown() {
    course_teardown
}
