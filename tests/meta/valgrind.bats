#!/usr/bin/env bats
# make test VALGRIND=1: server_start runs the course's programs under
# valgrind's memcheck, and a leak or an error fails the test that stopped
# the server, with valgrind's report (tests/helpers/common.bash).

load ../helpers/common

# A stand-in server in a scratch build folder: prints the line server_start
# waits for, waits for SIGTERM, and frees its block only when asked to.
setup() {
    command -v valgrind >/dev/null || skip "valgrind is not installed (make deps)"
    FX="$BATS_TEST_TMPDIR/fx"
    mkdir -p "$FX/build" "$FX/tests/01-demo"
    ln -s "$TOP/tests/helpers" "$FX/tests/helpers"
    cat >"$FX/leaky.c" <<'END'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_term(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv)
{
    char *block = malloc(100);
    memset(block, 1, 100);
    signal(SIGTERM, on_term);
    printf("listening on 127.0.0.1:1\n");
    fflush(stdout);
    while (!stop)
        pause();
    if (argc > 1 && strcmp(argv[1], "free") == 0)
        free(block);
    block = NULL; /* otherwise the block is lost */
    return 0;
}
END
    cc -O0 -g -o "$FX/build/leaky" "$FX/leaky.c"
    # (written with "TEST", turned into @test by sed: bats would take an
    # @test line in this file for one of its own)
    sed 's/^TEST /@test /' >"$FX/tests/01-demo/demo.bats" <<'END'
load ../helpers/common
TEST "a server that leaks a block" {
    server_start "$BUILD/leaky" -p 0
    server_stop
}
TEST "a server that frees it" {
    server_start env DEMO=1 "$BUILD/leaky" free -p 0
    server_stop
}
TEST "a test that puts strace in front of the server" {
    server_start strace -f -o /dev/null "$BUILD/leaky" free -p 0
    server_stop
}
END
}

@test "VALGRIND=1: the leaking server fails its test with valgrind's report; the clean one passes; strace skips" {
    BUILD="$FX/build" VALGRIND=1 run bats --tap "$FX/tests/01-demo/demo.bats"
    assert_failure
    assert_line "not ok 1 a server that leaks a block"
    assert_output --partial "valgrind found errors in the server (exit status 97)"
    assert_output --partial "definitely lost"
    assert_line "ok 2 a server that frees it"
    assert_line "ok 3 a test that puts strace in front of the server # skip under VALGRIND=1: strace would count valgrind's own system calls"
}

@test "without VALGRIND=1 the same servers run as they are, and pass: the leak goes unseen" {
    BUILD="$FX/build" VALGRIND=0 run bats --tap --filter "a server that" "$FX/tests/01-demo/demo.bats"
    assert_success
    assert_line "ok 1 a server that leaks a block"
    assert_line "ok 2 a server that frees it"
    refute_output --partial "valgrind"
}

@test "VALGRIND=1 with a sanitizer build, or VALGRIND=yes, is refused with a reason" {
    BUILD="$BUILD/../san-address" VALGRIND=1 run "$TOP/common/mk/run-tests.sh" meta
    assert_failure 2
    assert_output --partial "valgrind cannot run sanitized programs"
    VALGRIND=yes run "$TOP/common/mk/run-tests.sh" meta
    assert_failure 2
    assert_output --partial "VALGRIND=yes: 1 or 0"
}
