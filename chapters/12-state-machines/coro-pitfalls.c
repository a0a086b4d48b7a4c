/* SPDX-License-Identifier: MIT */
/* coro-pitfalls.c: the two rules stackless coroutines impose, broken on purpose.
 *
 *     make -C chapters/12-state-machines
 *     build/chapters/12-state-machines/coro-pitfalls
 *
 * 1. A local variable does not survive an AWAIT. count_bytes() reads a pipe
 *    in bursts and counts the bytes twice: in a field of its frame, and in a
 *    local variable. AWAIT returns from the function, so each resume is a new
 *    call with a new stack frame, and the local starts again from its
 *    initializer. The field counts every byte; the local, only the last burst.
 *    (A local declared after ASYNC_BEGIN is worse: the switch jumps over its
 *    initializer, and reading it is undefined behaviour. This program keeps
 *    to defined behaviour so the tests can check its output.)
 *
 * 2. No AWAIT inside a switch of your own. The case label AWAIT leaves
 *    behind belongs to the innermost switch, so the coroutine's own switch
 *    has no case for that line: the resume falls to ASYNC_END's default:,
 *    which reports it, and the code after the AWAIT never runs.
 *
 * No loop here: main() plays the event loop, resuming each coroutine by hand
 * after it writes the next burst, so every run does the same thing.
 */
#include "coro.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "net.h"

/* snippet: count */
struct count_co {
    int line;
    int fd;
    long total;            /* in the frame: survives every AWAIT */
    long total_local_seen; /* what the local held when the count ended */
};

static void count_bytes(struct count_co *co)
{
    long total_local = 0; /* WRONG: set to 0 again by every resume */
    char buf[64];
    ssize_t n;

    ASYNC_BEGIN(co);
    for (;;) {
        n = read(co->fd, buf, sizeof(buf));
        if (n > 0) {
            co->total += n;
            total_local += n;
        } else if (n == 0) {
            break; /* EOF */
        } else if (errno == EAGAIN) {
            AWAIT(co, (void)0); /* main() resumes us when it has written more */
        } else if (errno != EINTR) {
            net_die(errno, "read(fd=%d)", co->fd);
        }
    }
    co->total_local_seen = total_local;
    ASYNC_END(co);
}
/* end snippet */

/* snippet: nested */
struct nested_co {
    int line;
    int kind;
    int reached; /* the last step that ran */
};

static void nested_switch(struct nested_co *co)
{
    ASYNC_BEGIN(co);
    co->reached = 1;
    switch (co->kind) {
    case 1:
        AWAIT(co, (void)0); /* its case label lands in THIS switch, not ASYNC_BEGIN's */
        co->reached = 2;
        break;
    default:
        break;
    }
    co->reached = 3;
    ASYNC_END(co);
}
/* end snippet */

static void write_burst(int fd, const char *s)
{
    if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
        net_die(errno, "write(fd=%d)", fd);
}

int main(int argc, char **argv)
{
    static const char *const bursts[] = {"first burst, ", "second, ", "last"};
    struct count_co count = {0};
    struct nested_co nested = {.kind = 1};
    long sent = 0;
    int p[2], resumes = 0;

    net_cli_none(argc, argv,
                 "Shows a local losing its value across an AWAIT, and an AWAIT inside a nested "
                 "switch.");
    if (pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0)
        net_die(errno, "pipe2");
    count.fd = p[0];

    printf("1. a local variable across AWAIT\n");
    count_bytes(&count); /* runs to its first AWAIT: the pipe is empty */
    for (size_t i = 0; i < sizeof(bursts) / sizeof(bursts[0]); i++) {
        write_burst(p[1], bursts[i]);
        sent += (long)strlen(bursts[i]);
        if (i == sizeof(bursts) / sizeof(bursts[0]) - 1)
            close(p[1]); /* then EOF */
        count_bytes(&count);
        resumes++;
    }
    close(p[0]);
    printf("  %ld bytes written in %d bursts, the coroutine resumed %d times\n", sent, resumes,
           resumes);
    printf("  counted in a field of the frame: %ld bytes\n", count.total);
    printf("  counted in a local variable:     %ld bytes (only the last burst: every resume "
           "started it at 0)\n",
           count.total_local_seen);

    printf("2. an AWAIT inside a nested switch\n");
    nested_switch(&nested);
    printf("  first call: suspended at line %d after step %d\n", nested.line, nested.reached);
    fflush(stdout);
    nested_switch(&nested); /* the resume: coro_lost() reports on stderr */
    printf("  resumed: %s; last step run: %d of 3\n",
           nested.line == CORO_LOST ? "no case for that line, the coroutine is lost" : "it went on",
           nested.reached);
    return 0;
}
