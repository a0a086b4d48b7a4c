/* SPDX-License-Identifier: MIT */
/* test-net.c: unit tests of common/net.c, the helpers every server uses.
 *
 *   make -C common/tests && build/common/tests/test-net
 *
 * What it proves: listening on port 0 gives a real port that accepts
 * connections; bad addresses and busy ports give the right -errno;
 * net_write_all() and net_read_exact() move 8 MiB intact through blocking and
 * non-blocking sockets and stop at EOF with a short count; net_parse_int()
 * refuses junk; the stop pipe wakes up on SIGTERM/SIGINT; and net_cli_parse()
 * keeps the server contract (-h: usage on stdout, exit 0; bad arguments: usage
 * on stderr, exit 2), checked in forked children since it exits.
 *
 * Prints "ok - ..." or "not ok - ..." per test on stdout, and for every failed
 * check the expected and the actual value on stderr. Exit 0 when all pass,
 * 1 otherwise, 77 (skip) when this machine has no IPv4 loopback.
 */
#include "check.h"
#include "net.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* the checks are common/check.h's, and one more */
#define CHECK_CONTAINS(haystack, needle)                                                           \
    CHECK_MSG(strstr((haystack), (needle)) != NULL, "%s: expected to contain \"%s\", got \"%s\"",  \
              #haystack, (needle), (haystack))

/* ---- helpers ------------------------------------------------------------- */

static unsigned char pattern_byte(uint64_t i)
{
    return (unsigned char)((i * 0x9E3779B97F4A7C15ULL) >> 56);
}

/* Open file descriptors of this process, or -1 without /proc. */
static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own fd */
}

/* Wait for a child and turn its status into an exit code (128+N for signal N). */
static int wait_child(pid_t pid)
{
    int status;

    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

/* ---- the tests ------------------------------------------------------------- */

static void test_listen_port_zero(int lfd)
{
    const int before = check_failures;
    int port = net_local_port(lfd), cfd, afd, lfd2;
    char buf[8] = {0};

    CHECK(port > 0 && port <= 65535);
    cfd = net_connect("127.0.0.1", port);
    if (!CHECK(cfd >= 0)) {
        CHECK_EQ(0, cfd);
        goto out;
    }
    afd = accept(lfd, NULL, NULL);
    CHECK(afd >= 0);
    CHECK_EQ(port, net_local_port(afd)); /* the accepted side lives on the same port */

    /* Both directions, so it really is this connection. */
    CHECK_EQ(4, net_write_all(cfd, "ping", 4));
    CHECK_EQ(4, net_read_exact(afd, buf, 4));
    CHECK(memcmp(buf, "ping", 4) == 0);
    CHECK_EQ(4, net_write_all(afd, "pong", 4));
    CHECK_EQ(4, net_read_exact(cfd, buf, 4));
    CHECK(memcmp(buf, "pong", 4) == 0);

    /* SO_REUSEADDR lets a restarted server rebind past TIME_WAIT, but never
     * lets a second live listener share the port. */
    lfd2 = net_listen("127.0.0.1", port, 16);
    CHECK_EQ(-EADDRINUSE, lfd2);
    if (lfd2 >= 0)
        close(lfd2);

    /* Nobody listening any more: the kernel answers a connect with RST. */
    close(lfd);
    lfd2 = net_connect("127.0.0.1", port);
    CHECK_EQ(-ECONNREFUSED, lfd2);
    if (lfd2 >= 0)
        close(lfd2);
    close(afd);
    close(cfd);
out:
    check_report("net_listen on port 0 gets a real port that net_connect reaches", before);
}

static void test_bad_addresses(void)
{
    static const char *const bad[] = {"256.0.0.1", "localhost", "", "::1", "127.0.0.1 ", "1.2.3"};
    const int before = check_failures;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (!CHECK_EQ(-EINVAL, net_listen(bad[i], 0, 16)))
            fprintf(stderr, "  ...for net_listen(\"%s\")\n", bad[i]);
        if (!CHECK_EQ(-EINVAL, net_connect(bad[i], 80)))
            fprintf(stderr, "  ...for net_connect(\"%s\")\n", bad[i]);
    }
    check_report("net_listen and net_connect refuse what is not an IPv4 address with -EINVAL",
                 before);
}

/* The reader half of the 8 MiB test, in a child: read until EOF, then check
 * that exactly `len` bytes came, all of them in order. Its exit status is the
 * verdict (0 intact, 1 not), details on stderr. */
static _Noreturn void reader_child(int fd, size_t len)
{
    unsigned char *p = malloc(len + 1);
    int verdict = 0;
    ssize_t n;

    if (!p)
        _exit(3);
    /* Ask for one byte more than will come: net_read_exact must stop at EOF. */
    n = net_read_exact(fd, p, len + 1);
    if (n != (ssize_t)len) {
        fprintf(stderr, "reader: net_read_exact: expected %zu (short, at EOF), got %zd\n", len, n);
        verdict = 1;
    }
    for (size_t i = 0; i < len && verdict == 0; i++) {
        if (p[i] != pattern_byte(i)) {
            fprintf(stderr, "reader: byte %zu: expected 0x%02x, got 0x%02x\n", i, pattern_byte(i),
                    p[i]);
            verdict = 1;
        }
    }
    free(p);
    close(fd);
    _exit(verdict);
}

static void test_write_all_8mib(int nonblocking)
{
    const size_t len = 8u << 20; /* dozens of times a socket buffer */
    const int before = check_failures;
    unsigned char *data = malloc(len);
    int sv[2], flags = SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0);
    pid_t pid;

    if (!CHECK(data != NULL))
        goto out;
    for (size_t i = 0; i < len; i++)
        data[i] = pattern_byte(i);
    if (!CHECK_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | flags, 0, sv)))
        goto out_free;

    fflush(NULL); /* or the child would print our buffered output again */
    pid = fork();
    if (pid == 0) {
        free(data); /* the writer's copy: freed so leak checkers see a clean child */
        close(sv[0]);
        reader_child(sv[1], len);
    }
    close(sv[1]);
    if (!CHECK(pid > 0)) {
        close(sv[0]);
        goto out_free;
    }
    /* Non-blocking, the kernel says EAGAIN each time the buffer is full and
     * net_write_all must poll; blocking, it sleeps in write(). */
    CHECK_EQ(len, net_write_all(sv[0], data, len));
    close(sv[0]); /* EOF for the reader */
    CHECK_EQ(0, wait_child(pid));
out_free:
    free(data);
out:
    check_report(nonblocking
                     ? "net_write_all gets 8 MiB intact through a non-blocking socket (EAGAIN)"
                     : "net_write_all gets 8 MiB intact through a blocking socket",
                 before);
}

static void test_read_exact_eof_and_errors(void)
{
    const int before = check_failures;
    char data[100], got[1000];
    int sv[2];

    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (char)pattern_byte(i);
    if (!CHECK_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)))
        goto out;
    CHECK_EQ(100, net_write_all(sv[0], data, sizeof(data)));
    CHECK_EQ(0, shutdown(sv[0], SHUT_WR));
    CHECK_EQ(100, net_read_exact(sv[1], got, sizeof(got))); /* short: EOF came first */
    CHECK(memcmp(got, data, sizeof(data)) == 0);
    CHECK_EQ(0, net_read_exact(sv[1], got, sizeof(got))); /* and then nothing */
    CHECK_EQ(0, net_read_exact(sv[1], got, 0));
    CHECK_EQ(0, net_write_all(sv[0], data, 0));

    close(sv[1]); /* SIGPIPE is ignored in main: a write to a closed peer is -EPIPE */
    CHECK_EQ(-EPIPE, net_write_all(sv[0], data, sizeof(data)));
    close(sv[0]);
    CHECK_EQ(-EBADF, net_read_exact(-1, got, 1));
    CHECK_EQ(-EBADF, net_write_all(-1, data, 1));
out:
    check_report("net_read_exact stops at EOF with a short count; errors come back as -errno",
                 before);
}

static void test_parse_int(void)
{
    static const struct {
        const char *s;
        long min, max;
    } bad[] = {
        {"", 0, 65535},
        {"abc", 0, 65535},
        {"12abc", 0, 65535},
        {"12 ", 0, 65535},
        {"0x10", 0, 65535},
        {"1.5", 0, 65535},
        {"65536", 0, 65535},
        {"-1", 0, 65535},
        {"99999999999999999999999", 0, 65535},
        {"-99999999999999999999999", -10, 10},
        {"11", -10, 10},
        /* Out of a long's range even with the widest bounds: strtol() clamps
         * to LONG_MAX/LONG_MIN, and only errno tells it overflowed. */
        {"99999999999999999999999", LONG_MIN, LONG_MAX},
        {"-99999999999999999999999", LONG_MIN, LONG_MAX},
    };
    const int before = check_failures;
    long v;

    CHECK_EQ(0, net_parse_int("0", 0, 65535, &v));
    CHECK_EQ(0, v);
    CHECK_EQ(0, net_parse_int("65535", 0, 65535, &v));
    CHECK_EQ(65535, v);
    CHECK_EQ(0, net_parse_int("-10", -10, 10, &v));
    CHECK_EQ(-10, v);
    CHECK_EQ(0, net_parse_int("8080", 0, 65535, &v));
    CHECK_EQ(8080, v);

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        v = 12345;
        if (!CHECK_EQ(-EINVAL, net_parse_int(bad[i].s, bad[i].min, bad[i].max, &v)))
            fprintf(stderr, "  ...for \"%s\" in [%ld, %ld]\n", bad[i].s, bad[i].min, bad[i].max);
        CHECK_EQ(12345, v); /* untouched on failure */
    }
    CHECK_EQ(-EINVAL, net_parse_int(NULL, 0, 1, &v));
    check_report("net_parse_int refuses junk, overflow and values out of range", before);
}

static void test_stop_pipe(void)
{
    const int before = check_failures;
    struct pollfd pfd = {.events = POLLIN};
    struct sigaction sa;
    char c = 0;
    int rfd;

    net_stop_requested = 0;
    rfd = net_stop_pipe();
    if (!CHECK(rfd >= 0)) {
        CHECK_EQ(0, rfd);
        goto out;
    }
    CHECK(fcntl(rfd, F_GETFL) & O_NONBLOCK);
    CHECK(fcntl(rfd, F_GETFD) & FD_CLOEXEC);
    CHECK_EQ(-EBUSY, net_stop_pipe()); /* only one stop pipe at a time */

    pfd.fd = rfd;
    CHECK_EQ(0, poll(&pfd, 1, 0)); /* quiet before the signal */
    CHECK_EQ(0, net_stop_requested);

    CHECK_EQ(0, raise(SIGTERM)); /* the handler runs before raise() returns */
    CHECK_EQ(1, poll(&pfd, 1, 1000));
    CHECK(pfd.revents & POLLIN);
    CHECK_EQ(1, net_stop_requested);
    CHECK_EQ(1, read(rfd, &c, 1));
    CHECK_EQ(SIGTERM, c);

    /* No SA_RESTART, or a blocking accept() would never see the flag; and
     * SIGPIPE ignored, or a write to a reset client would kill the server. */
    CHECK_EQ(0, sigaction(SIGTERM, NULL, &sa));
    CHECK_EQ(0, sa.sa_flags & SA_RESTART);
    CHECK_EQ(0, sigaction(SIGPIPE, NULL, &sa));
    CHECK(sa.sa_handler == SIG_IGN);

    net_stop_pipe_close(rfd);

    /* After closing, a new stop pipe can be made, and SIGINT works too. */
    net_stop_requested = 0;
    rfd = net_stop_pipe();
    if (CHECK(rfd >= 0)) {
        pfd.fd = rfd;
        CHECK_EQ(0, raise(SIGINT));
        CHECK_EQ(1, poll(&pfd, 1, 1000));
        CHECK_EQ(1, net_stop_requested);
        CHECK_EQ(1, read(rfd, &c, 1));
        CHECK_EQ(SIGINT, c);
        net_stop_pipe_close(rfd);
    }
    net_stop_requested = 0;
out:
    check_report("the stop pipe becomes readable on SIGTERM and SIGINT and sets net_stop_requested",
                 before);
}

/* ---- net_cli_parse, in children ------------------------------------------- */

#define CLI_RETURNED 40 /* the child's exit code when net_cli_parse returned */

struct cli_run {
    int status;
    char out[4096], err[4096];
};

static int cli_workers;

static int cli_on_opt(int opt, const char *arg, void *ctx)
{
    long v;

    if (opt != 'w' || net_parse_int(arg, 1, 64, &v) < 0)
        return -1;
    *(int *)ctx = (int)v;
    return 0;
}

static const struct net_cli_extra cli_extra = {
    .optstring = "w:",
    .usage = "  -w N      worker threads, 1-64\n",
    .on_opt = cli_on_opt,
    .ctx = &cli_workers,
};

static void read_all(int fd, char *out, size_t size)
{
    size_t len = 0;
    ssize_t n;

    while (len + 1 < size &&
           ((n = read(fd, out + len, size - 1 - len)) > 0 || (n < 0 && errno == EINTR)))
        if (n > 0)
            len += (size_t)n;
    out[len] = '\0';
}

/* Run net_cli_parse(args...) in a child whose stdout and stderr are pipes:
 * it exits (as -h and bad arguments must) or returns, and then the child
 * prints what it parsed and exits with CLI_RETURNED. argv[0] has a directory,
 * so the messages must use its base name. */
static void cli_run(struct cli_run *r, const struct net_cli_extra *extra, char **args)
{
    char *argv[16] = {(char *)"/usr/local/bin/echod"};
    int argc = 1, out[2], err[2];
    pid_t pid;

    while (args[argc - 1] && argc < 15) {
        argv[argc] = args[argc - 1];
        argc++;
    }
    memset(r, 0, sizeof(*r));
    r->status = -1;
    if (pipe(out) < 0 || pipe(err) < 0) {
        perror("pipe");
        return;
    }
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        struct net_cli cli;
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        close(out[0]);
        close(out[1]);
        close(err[0]);
        close(err[1]);
        net_cli_parse(&cli, argc, argv, "echo server for tests", extra);
        printf("addr=%s port=%d workers=%d\n", cli.addr, cli.port, cli_workers);
        exit(CLI_RETURNED);
    }
    close(out[1]);
    close(err[1]);
    /* Outputs are a usage text at most, far below a pipe's 64 KiB: reading one
     * pipe to EOF before the other cannot deadlock. */
    if (pid > 0) {
        read_all(out[0], r->out, sizeof(r->out));
        read_all(err[0], r->err, sizeof(r->err));
        r->status = wait_child(pid);
    }
    close(out[0]);
    close(err[0]);
}

#define ARGS(...) ((char *[]){__VA_ARGS__, NULL})

static void test_cli_parse(void)
{
    const int before = check_failures;
    struct cli_run r;

    cli_run(&r, NULL, ARGS("-p", "99999"));
    CHECK_EQ(2, r.status);
    CHECK_CONTAINS(r.err, "echod: -p 99999: not a port number");
    CHECK_CONTAINS(r.err, "usage: echod");
    CHECK_EQ(0, strlen(r.out));

    cli_run(&r, NULL, ARGS("-h"));
    CHECK_EQ(0, r.status);
    CHECK_CONTAINS(r.out, "usage: echod [-b ADDR] [-p PORT]");
    CHECK_CONTAINS(r.out, "echo server for tests");
    CHECK_EQ(0, strlen(r.err));

    cli_run(&r, NULL, ARGS("-b", "0.0.0.0x"));
    CHECK_EQ(2, r.status);
    CHECK_CONTAINS(r.err, "-b 0.0.0.0x: not an IPv4 address");

    cli_run(&r, NULL, (char *[]){NULL});
    CHECK_EQ(CLI_RETURNED, r.status);
    CHECK_CONTAINS(r.out, "addr=127.0.0.1 port=8080"); /* never 0.0.0.0 by default */

    cli_run(&r, NULL, ARGS("-b", "0.0.0.0", "-p", "0"));
    CHECK_EQ(CLI_RETURNED, r.status);
    CHECK_CONTAINS(r.out, "addr=0.0.0.0 port=0");

    cli_run(&r, NULL, ARGS("-p"));
    CHECK_EQ(2, r.status);
    CHECK_CONTAINS(r.err, "-p needs a value");

    cli_run(&r, NULL, ARGS("-z"));
    CHECK_EQ(2, r.status);
    CHECK_CONTAINS(r.err, "unknown option -z");

    cli_run(&r, NULL, ARGS("stray"));
    CHECK_EQ(2, r.status);
    CHECK_CONTAINS(r.err, "unexpected argument 'stray'");

    /* A program's own options go through the same parser. */
    cli_run(&r, &cli_extra, ARGS("-w", "4", "-p", "9000"));
    CHECK_EQ(CLI_RETURNED, r.status);
    CHECK_CONTAINS(r.out, "port=9000 workers=4");

    cli_run(&r, &cli_extra, ARGS("-w", "0"));
    CHECK_EQ(2, r.status);
    CHECK_CONTAINS(r.err, "-w N      worker threads");

    cli_run(&r, &cli_extra, ARGS("-h"));
    CHECK_EQ(0, r.status);
    CHECK_CONTAINS(r.out, "-w N      worker threads");

    cli_run(&r, NULL, ARGS("-w", "4")); /* unknown without the extra */
    CHECK_EQ(2, r.status);
    check_report(
        "net_cli_parse: -h prints usage and exits 0, bad arguments exit 2 with usage on stderr",
        before);
}

int main(void)
{
    int fds_before = count_fds(), fds_after, lfd;

    /* A hang is a failure too: die loudly rather than let the runner wait. */
    alarm(120);
    signal(SIGPIPE, SIG_IGN);

    lfd = net_listen("127.0.0.1", 0, 16);
    if (lfd == -EADDRNOTAVAIL || lfd == -EAFNOSUPPORT || lfd == -EACCES || lfd == -EPERM) {
        fprintf(stderr, "no usable IPv4 loopback here (net_listen on 127.0.0.1: %s)\n",
                strerror(-lfd));
        return CHECK_SKIP;
    }
    if (lfd < 0) {
        CHECK_EQ(0, lfd);
        check_report("net_listen on port 0 gets a real port that net_connect reaches", 0);
    } else {
        test_listen_port_zero(lfd);
    }
    test_bad_addresses();
    test_write_all_8mib(0);
    test_write_all_8mib(1);
    test_read_exact_eof_and_errors();
    test_parse_int();
    test_stop_pipe();
    test_cli_parse();

    /* Every failure path above closes what it opened: so must net.c. */
    fds_after = count_fds();
    if (fds_before >= 0 && !CHECK_EQ(fds_before, fds_after))
        fprintf(stderr, "  ...file descriptors open at the start and at the end\n");

    if (check_failures)
        fprintf(stderr, "test-net: %d check(s) failed\n", check_failures);
    return check_exit();
}
