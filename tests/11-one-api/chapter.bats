#!/usr/bin/env bats
# Chapter 11: one completion API (chapters/11-one-api/cio/). What does not
# depend on the backend: choosing it, refusing a wrong one, the server
# contract. Each backend's own tests are in echo-aio-BACKEND.bats (links to
# backend.cases); the Windows build's in echo-aio-iocp.bats.

load ../helpers/common

uring_allowed() {
    CIO_BACKEND=uring timeout 10 "$(chapter_bin aio-test)" probe >/dev/null 2>&1
}

@test "an unknown CIO_BACKEND is an error that names the backends there are, exit 2" {
    CIO_BACKEND=select run timeout 10 "$(chapter_bin echo-aio)" -p 0
    assert_failure 2
    assert_output --partial "CIO_BACKEND=select: no such backend in this program (it has: uring epoll kqueue poll)"
    refute_output --partial "listening on"
    # poll is a backend of the chapter's build, never the default
    CIO_BACKEND=poll run timeout 10 "$(chapter_bin aio-test)" probe
    assert_success
    assert_line --index 0 "backend poll"
}

@test "without CIO_BACKEND the best backend is chosen: io_uring where the kernel allows it, else epoll" {
    local want=epoll
    uring_allowed && want=uring
    run env -u CIO_BACKEND timeout 10 "$(chapter_bin aio-test)" probe
    assert_success
    assert_line "backend $want"
    echo "# default backend here: $want" >&3
}

@test "each backend's capability flags say readiness or completion, and how files and timeouts are done" {
    run env CIO_BACKEND=epoll timeout 10 "$(chapter_bin aio-test)" probe
    assert_line "caps readiness; file reads on a worker thread; timeouts in a list in the library"
    run env CIO_BACKEND=kqueue timeout 10 "$(chapter_bin aio-test)" probe
    assert_line "caps readiness; file reads on a worker thread; timeouts in the kernel"
    uring_allowed || skip "io_uring is not allowed here: $(CIO_BACKEND=uring "$(chapter_bin aio-test)" probe 2>&1)"
    run env CIO_BACKEND=uring timeout 10 "$(chapter_bin aio-test)" probe
    assert_line "caps completion; file reads asynchronous in the kernel; timeouts in the kernel"
}

@test "echo-aio says which backend it runs on, with its capabilities, on stderr" {
    CIO_BACKEND=kqueue server_start "$(chapter_bin echo-aio)" -p 0
    stop_within 5
    grep -q '^echo-aio: backend kqueue (readiness; ' "$SERVER_ERR" ||
        fail "no 'echo-aio: backend kqueue (...)' line on stderr: $(cat "$SERVER_ERR")"
    grep -q '^echo-aio: 0 connections served, 0 still open' "$SERVER_ERR" ||
        fail "no closing count on stderr: $(cat "$SERVER_ERR")"
}

@test "echo-aio with CIO_TRACE=1 logs each op: on epoll a pooled recv waits for readiness, on io_uring the kernel picks its buffer" {
    local a
    CIO_BACKEND=epoll CIO_TRACE=1 server_start "$(chapter_bin echo-aio)" -p 0
    conn_open a
    expect_echo "$a" "traced"
    exec {a}>&-
    stop_within 5
    grep -Eq '^cio\[epoll\]: accept fd=[0-9]+ len=0 -> readiness$' "$SERVER_ERR" ||
        fail "no accept trace line: $(cat "$SERVER_ERR")"
    grep -Eq '^cio\[epoll\]: recv-pooled fd=[0-9]+ -> readiness, then a pool buffer$' "$SERVER_ERR" ||
        fail "no recv trace line: $(cat "$SERVER_ERR")"
    grep -Eq '^cio\[epoll\]: send fd=[0-9]+ len=7 -> readiness$' "$SERVER_ERR" ||
        fail "no send trace line for the 7 bytes 'traced\n': $(cat "$SERVER_ERR")"
    uring_allowed || skip "io_uring is not allowed here"
    CIO_BACKEND=uring CIO_TRACE=1 server_start "$(chapter_bin echo-aio)" -p 0
    conn_open a
    expect_echo "$a" "traced"
    exec {a}>&-
    stop_within 5
    grep -Eq '^cio\[uring\]: recv-pooled fd=[0-9]+ -> native, the kernel picks a buffer from the ring$' "$SERVER_ERR" ||
        fail "no native recv trace line: $(cat "$SERVER_ERR")"
}

@test "CIO_BACKEND=uring where io_uring is refused exits 77 with the reason" {
    uring_allowed && skip "io_uring is allowed here: nothing to refuse"
    CIO_BACKEND=uring run timeout 10 "$(chapter_bin echo-aio)" -p 0
    assert_failure 77
    assert_output --partial "io_uring_setup"
}

@test "echo-aio: bad arguments print usage on stderr and exit 2; -h exits 0" {
    run "$(chapter_bin echo-aio)" --bogus
    assert_failure 2
    assert_output --partial "usage:"
    run "$(chapter_bin echo-aio)" -p 70000
    assert_failure 2
    run "$(chapter_bin echo-aio)" -h
    assert_success
    assert_output --partial "usage:"
    run "$(chapter_bin aio-test)" nothing
    assert_failure 2
}

@test "echo-aio: SIGINT, like SIGTERM, completes the signalfd read and exits 0 on every backend" {
    local b a
    for b in epoll kqueue uring; do
        [ "$b" != uring ] || uring_allowed || continue
        CIO_BACKEND=$b server_start "$(chapter_bin echo-aio)" -p 0
        conn_open a
        expect_echo "$a" "before SIGINT on $b"
        stop_within 5 INT
        exec {a}>&-
    done
}

