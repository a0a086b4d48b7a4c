#!/usr/bin/env bats
# Chapter 15: mini-redis driven by Debian's redis-cli (package redis-tools),
# a client nobody in the course wrote: one-shot commands, a mass insert with
# --pipe, and the interactive mode, whose start asks for COMMAND DOCS.

load ../helpers/common
load redis

setup() {
    command -v redis-cli >/dev/null || skip "redis-cli is not installed (make deps: package redis-tools)"
}

@test "redis-cli -p PORT: SET, GET, INCR, a missing key and an error, on each backend" {
    local backend
    for backend in epoll uring kqueue; do
        if [ "$backend" = uring ]; then
            course_valgrind && { echo "# io_uring under valgrind: skipped (memcheck cannot see what io_uring writes)" >&3; continue; }
            run timeout 10 "$BUILD/chapters/13-mini-runtime/rt-test" probe
            [ "$status" -ne 77 ] || { echo "# io_uring is not allowed here: skipped" >&3; continue; }
        fi
        RT_BACKEND=$backend mini_start
        run timeout 10 redis-cli -p "$PORT" set greeting "hello world"
        assert_output OK
        run timeout 10 redis-cli -p "$PORT" get greeting
        assert_output "hello world"
        run timeout 10 redis-cli -p "$PORT" incrby n 41
        assert_output 41
        run timeout 10 redis-cli -p "$PORT" get missing
        assert_output ""
        run timeout 10 redis-cli -p "$PORT" incr greeting
        assert_output "ERR value is not an integer or out of range"
        server_stop
        [ "$SERVER_STATUS" -eq 0 ] || fail "$backend: exit $SERVER_STATUS"
    done
}


@test "redis-cli --pipe: 20,000 commands in one stream, every reply counted, no error" {
    mini_start
    untraced mass_insert >"$BATS_TEST_TMPDIR/mass"
    run timeout 60 redis-cli -p "$PORT" --pipe <"$BATS_TEST_TMPDIR/mass"
    assert_success
    assert_output --partial "errors: 0, replies: 20000"
    run timeout 10 redis-cli -p "$PORT" dbsize
    assert_output 20000
    run timeout 10 redis-cli -p "$PORT" get key:19999
    assert_output 19999
}

@test "redis-cli's interactive mode starts (COMMAND DOCS refused: it falls back to its own help), runs commands, and shows help" {
    command -v script >/dev/null || skip "script(1) is not installed (package bsdutils)"
    mini_start
    # a terminal (script), but a dumb one: linenoise reads plain lines
    run bash -c "printf 'set a 1\nget a\nhelp incr\nquit\n' | TERM=dumb timeout 10 script -qec 'redis-cli -p $PORT' /dev/null"
    assert_success
    assert_output --partial "127.0.0.1:$PORT> "
    # the terminal echoes what was typed whenever it comes, so a reply may
    # follow its prompt or stand on a line of its own
    grep -Eq '(^|> )OK'$'\r''?$' <<<"$output" || fail "no OK for SET in: $output"
    grep -Eq '(^|> )"1"'$'\r''?$' <<<"$output" || fail "no \"1\" for GET in: $output"
    assert_output --partial "Increment the integer value of a key by one"
    require_server_alive
}
