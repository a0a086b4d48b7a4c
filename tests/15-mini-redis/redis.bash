# SPDX-License-Identifier: MIT
# tests/15-mini-redis/redis.bash: what chapter 15's tests share.
#
#   require_redis             skip unless redis-server (the real one) and redis-cli are here
#   redis_start [ARGS]        start redis-server 7.0 for this test alone: no TCP port, a
#                             Unix socket in $BATS_TEST_TMPDIR ($REDIS_SOCK), no config
#                             file, no persistence, one database (as mini-redis has)
#   mini_start [ARGS]         start mini-redis on port 0 ($PORT), RT_BACKEND as the caller set it
#   stage_setup               a capstone stage's tests (stage-N.bats): mini_start starts the
#                             learner's program with IMPL=exercises, the chapter's otherwise
#   both SCRIPT_ARGS...       resp-cat ARGS against each: $BATS_TEST_TMPDIR/{redis,mini}.out
#   same_replies WHAT         fail unless both outputs are the same bytes, showing the diff
#   replies_match WHAT        same_replies, but first: if mini-redis died, how (a TODO of the
#                             learner's shows there); outputs of megabytes compared, not shown
#   send_on FD BYTES          BYTES (a printf format) to the server on FD; if that fails, why
#   mini_cmd ARGS...          resp-cat -r: one command (inline) to mini-redis, its reply line
#   mass_insert               20,000 inline SETs (key:N N), for redis-cli --pipe

# shellcheck disable=SC2034 # read by the test files that load this one
SCRIPTS="$BATS_TEST_DIRNAME/scripts"

require_redis() {
    command -v redis-server >/dev/null ||
        skip "redis-server is not installed (make deps: package redis-server)"
    command -v redis-cli >/dev/null || skip "redis-cli is not installed (make deps: package redis-tools)"
    redis-server --version | grep -q 'v=7\.0\.' ||
        skip "the replies are compared with Redis 7.0, and this is $(redis-server --version)"
}

redis_start() {
    local i
    REDIS_SOCK="$BATS_TEST_TMPDIR/redis.sock"
    # A socket's path must fit in 107 bytes (sun_path). Where the test's
    # folder is deeper (the mutant runner's copies of the course), it is
    # reached through a descriptor of this shell, which redis-server and
    # every client the test starts inherit: /proc/self/fd/N is that folder
    # in each of them, and the descriptor goes with the test.
    if [ ${#REDIS_SOCK} -gt 100 ]; then
        exec {_redis_dir_fd}<"$BATS_TEST_TMPDIR"
        REDIS_SOCK="/proc/self/fd/$_redis_dir_fd/redis.sock"
    fi
    # --port 0: no TCP at all, so nothing on 6379 (a packaged daemon, say)
    # is ever in the way; --dir: where it would write, were it to write
    # (ARGS, later on the line, may name another, and a file to load).
    redis-server --port 0 --unixsocket "$REDIS_SOCK" --save '' --appendonly no --databases 1 \
        --dir "$BATS_TEST_TMPDIR" "$@" >"$BATS_TEST_TMPDIR/redis-server.log" 2>&1 3>&- &
    REDIS_PID=$!
    _course_pids+=("$REDIS_PID")
    for ((i = 0; i < 200; i++)); do
        [ "$(timeout 5 redis-cli -s "$REDIS_SOCK" ping 2>/dev/null)" = PONG ] && return 0
        kill -0 "$REDIS_PID" 2>/dev/null ||
            fail "redis-server exited${*:+ (started with $*)}: $(cat "$BATS_TEST_TMPDIR/redis-server.log")"
        sleep 0.05
    done
    fail "redis-server did not answer PING on $REDIS_SOCK within 10 s"
}

# Under VALGRIND=1 the default backend is epoll: memcheck cannot see the
# bytes the kernel writes into memory for io_uring, and calls them
# uninitialised. require_not_uring_under_valgrind skips a test that asks for io_uring.
mini_start() {
    local bin="${MINI_REDIS:-}"
    [ -n "$bin" ] || bin=$(chapter_bin mini-redis)
    if course_valgrind && [ -z "${RT_BACKEND:-}" ]; then
        RT_BACKEND=epoll server_start "$bin" -p 0 "$@"
    else
        server_start "$bin" -p 0 "$@"
    fi
}

# The tests of a stage of the capstone (stage-N.bats) run one program: with
# IMPL=exercises the learner's, grown in exercises/15-mini-redis/my-redis/
# through every stage; otherwise the reference, the chapter's mini-redis.
stage_setup() {
    if [ "$IMPL" = exercises ]; then
        MINI_REDIS="$BUILD/exercises/$CHAPTER/my-redis/mini-redis"
        require_bin "$MINI_REDIS" "exercises/$CHAPTER/my-redis"
    else
        MINI_REDIS="$BUILD/chapters/$CHAPTER/mini-redis"
        require_bin "$MINI_REDIS" "chapters/$CHAPTER"
    fi
}

require_not_uring_under_valgrind() {
    valgrind_skip "memcheck cannot see what io_uring writes into memory (it reports the bytes received as uninitialised)"
}

# both ARGS...: the same resp-cat run (ARGS: its options and input file)
# against redis-server and against mini-redis, stdin included (read once).
both() {
    local cat
    cat="$(chapter_bin resp-cat)"
    cat >"$BATS_TEST_TMPDIR/stdin"
    timeout 30 "$cat" -s "$REDIS_SOCK" "$@" <"$BATS_TEST_TMPDIR/stdin" >"$BATS_TEST_TMPDIR/redis.out" ||
        fail "resp-cat against redis-server failed (status $?): $(tail -n 3 "$BATS_TEST_TMPDIR/redis.out")"
    timeout 30 "$cat" -p "$PORT" "$@" <"$BATS_TEST_TMPDIR/stdin" >"$BATS_TEST_TMPDIR/mini.out" ||
        server_gone "resp-cat against mini-redis failed (status $?): $(tail -n 3 "$BATS_TEST_TMPDIR/mini.out")"
}

same_replies() {
    local d
    [ -s "$BATS_TEST_TMPDIR/redis.out" ] || fail "$1: redis-server gave no output"
    if ! d=$(diff -u --label redis-server --label mini-redis "$BATS_TEST_TMPDIR/redis.out" \
        "$BATS_TEST_TMPDIR/mini.out"); then
        fail "$1: the replies differ (- redis-server 7.0, + mini-redis):
$d"
    fi
}

# replies_match WHAT: same_replies; but if mini-redis died on the way, its
# exit status and stderr (where a TODO of the learner's says what is
# missing); and outputs of megabytes are compared, not shown.
replies_match() {
    local r="$BATS_TEST_TMPDIR/redis.out" m="$BATS_TEST_TMPDIR/mini.out"
    cmp -s "$r" "$m" && return 0
    server_exited 20 && server_gone "$1: mini-redis stopped answering"
    [ "$(wc -c <"$m")" -lt 65536 ] ||
        fail "$1: the replies differ from redis-server's: $(cmp "$r" "$m" 2>&1 | head -n 1); mini-redis's last line: $(tail -n 1 "$m" | head -c 200)"
    same_replies "$1"
}

# send_on FD BYTES: BYTES (a printf format) to the server on FD. A write that
# fails (the server went) says why the server went.
send_on() {
    # in a subshell: a write to a reset socket raises SIGPIPE
    # shellcheck disable=SC2059 # the format is the request
    (printf "$2" >&"$1") 2>/dev/null || server_gone "could not send $2"
}

mini_cmd() {
    printf '%s\r\n' "$*" | timeout 10 "$(chapter_bin resp-cat)" -r -p "$PORT" | head -n 1
}

mass_insert() {
    local i
    for ((i = 0; i < 20000; i++)); do
        printf 'SET key:%d %d\n' "$i" "$i"
    done
}
