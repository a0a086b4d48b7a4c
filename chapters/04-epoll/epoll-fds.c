/* SPDX-License-Identifier: MIT */
/* epoll-fds.c: which file descriptors epoll can watch, next to what poll() says.
 *
 *     make -C chapters/04-epoll
 *     build/chapters/04-epoll/epoll-fds
 *
 * For each kind of fd, freshly made and idle (nothing written to it yet):
 * what poll() reports at once, whether epoll_ctl(EPOLL_CTL_ADD) accepts it,
 * and if so what epoll_wait() reports at once.
 *
 * epoll can only watch a file whose driver can tell the kernel "wake me when
 * you change" (it has a poll method: sockets, pipes, terminals, eventfd,
 * timerfd, signalfd, inotify, epoll itself...). A regular file, a directory
 * or /dev/null has none: epoll_ctl() refuses it with EPERM, while poll() and
 * select() report it readable and writable, always, because it never has a
 * "not ready" state to report (chapter 01's file-readiness and chapter 03's
 * nonblock-demo time the disk read that follows such a "ready").
 *
 * Linux 2.6.27 or later (eventfd2, timerfd, signalfd4, inotify_init1).
 */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* Each opener returns the fd to look at, and may leave a second fd in *other
 * (the other end of a pipe or a connection), closed after the look. */
typedef int (*opener)(int *other);

static int open_regular(int *other)
{
    FILE *f = tmpfile(); /* a real file on disk, deleted when closed */
    int fd;

    (void)other;
    if (!f)
        return -1;
    fd = dup(fileno(f));
    fclose(f);
    return fd;
}

static int open_directory(int *other)
{
    (void)other;
    return open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static int open_dev_null(int *other)
{
    (void)other;
    return open("/dev/null", O_RDWR | O_CLOEXEC);
}

static int open_pipe(int *other)
{
    int p[2];

    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    *other = p[1];
    return p[0];
}

static int open_tcp(int *other)
{
    int lfd = net_listen("127.0.0.1", 0, 4), fd;

    if (lfd < 0)
        return -1;
    fd = net_connect("127.0.0.1", net_local_port(lfd));
    *other = fd < 0 ? -1 : accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    close(lfd);
    return fd;
}

static int open_unix(int *other)
{
    int sv[2];

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    *other = sv[1];
    return sv[0];
}

static int open_eventfd(int *other)
{
    (void)other;
    return eventfd(0, EFD_CLOEXEC);
}

static int open_timerfd(int *other)
{
    (void)other;
    return timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
}

static int open_signalfd(int *other)
{
    sigset_t mask;

    (void)other;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    return signalfd(-1, &mask, SFD_CLOEXEC);
}

static int open_inotify(int *other)
{
    (void)other;
    return inotify_init1(IN_CLOEXEC);
}

static int open_pty(int *other)
{
    (void)other;
    return posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
}

static int open_epoll(int *other)
{
    (void)other;
    return epoll_create1(EPOLL_CLOEXEC);
}

/* "POLLIN|POLLOUT" or "EPOLLOUT" (static buffer: print before the next call).
 * epoll's event bits have the values of poll()'s, so one table serves both. */
_Static_assert(EPOLLIN == POLLIN && EPOLLOUT == POLLOUT && EPOLLHUP == POLLHUP &&
                   EPOLLERR == POLLERR,
               "epoll and poll event bits differ");
static const char *names(unsigned bits, const char *prefix)
{
    static const struct {
        unsigned bit;
        const char *name;
    } known[] = {{POLLIN, "IN"}, {POLLOUT, "OUT"}, {POLLHUP, "HUP"}, {POLLERR, "ERR"}};
    static char out[64];

    out[0] = '\0';
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (bits & known[i].bit)
            snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s%s", out[0] ? "|" : "",
                     prefix, known[i].name);
    return out[0] ? out : "-";
}

/* snippet: look */
/* Print one row. Returns the errno of epoll_ctl(ADD), 0 if it accepted the fd. */
static int look(const char *kind, int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN | POLLOUT};
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT}, got = {0};
    int ep = epoll_create1(EPOLL_CLOEXEC), err = 0;

    if (ep < 0)
        net_die(errno, "epoll_create1");
    if (poll(&p, 1, 0) < 0) /* timeout 0: only ask, never wait */
        net_die(errno, "poll(%s)", kind);
    printf("  %-18s %-20s", kind, names((unsigned)p.revents, "POLL"));
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
        err = errno;
        printf(" %-9s %s\n", strerrorname_np(err), "(not watched)");
    } else {
        printf(" %-9s %s\n", "0",
               epoll_wait(ep, &got, 1, 0) == 1 ? names(got.events, "EPOLL") : "-");
    }
    close(ep);
    return err;
}
/* end snippet */

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        opener open;
        bool pollable; /* what epoll_ctl() should say: accepted, or EPERM */
    } kinds[] = {
        {"regular file", open_regular, false}, {"directory", open_directory, false},
        {"/dev/null", open_dev_null, false},   {"pipe, read end", open_pipe, true},
        {"TCP socket", open_tcp, true},        {"UNIX socket", open_unix, true},
        {"eventfd", open_eventfd, true},       {"timerfd", open_timerfd, true},
        {"signalfd", open_signalfd, true},     {"inotify", open_inotify, true},
        {"terminal (pty)", open_pty, true},    {"epoll", open_epoll, true},
    };
    int wrong = 0;

    net_cli_none(argc, argv,
                 "Shows which kinds of fd epoll can watch, next to what poll() says about them.");
    printf("  %-18s %-20s %-9s %s\n", "fd (idle)", "poll() at once", "epoll_ctl",
           "epoll_wait at once");
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        int other = -1, fd = kinds[i].open(&other), err;
        if (fd < 0) {
            printf("  %-18s (cannot make one here: %s)\n", kinds[i].name, strerror(errno));
            continue;
        }
        err = look(kinds[i].name, fd);
        if (kinds[i].pollable ? err != 0 : err != EPERM) {
            fprintf(stderr, "unexpected: epoll_ctl(ADD, %s) gave %s\n", kinds[i].name,
                    err ? strerrorname_np(err) : "0");
            wrong++;
        }
        close(fd);
        if (other >= 0)
            close(other);
    }
    if (wrong)
        return 1;
    printf("epoll refuses what has no readiness to report (EPERM); poll() calls it always ready\n");
    return 0;
}
