/* SPDX-License-Identifier: MIT */
/* kq_check.h: what the unit tests of common/kqueue-linux share.
 *
 * The checks are common/check.h's (CHECK_RUN() reports one test); here are
 * small helpers around kevent() and loopback TCP connections. Header-only:
 * each test program includes it once.
 */
#ifndef KQ_CHECK_H
#define KQ_CHECK_H

#include <sys/event.h>

#include "check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* 1 where <sys/event.h> is common/kqueue-linux (the "Differences from BSD"
 * of its README apply), 0 on FreeBSD and macOS, where the same programs
 * check the system's own kqueue. */
#ifdef __linux__
#define KQ_LAYER 1
#else
#define KQ_LAYER 0
#endif

__attribute__((unused)) static void die(const char *what)
{
    fprintf(stderr, "%s: %s\n", what, strerror(errno));
    exit(2);
}

__attribute__((unused)) static int kq_new(void)
{
    int kq = kqueue();
    if (kq < 0)
        die("kqueue()");
    return kq;
}

/* Apply one change with EV_RECEIPT; return its errno (0 = applied). */
__attribute__((unused)) static int change(int kq, uintptr_t ident, short filter,
                                          unsigned short flags, unsigned int fflags, int64_t data,
                                          void *udata)
{
    struct kevent ch, res;
    int n;

    EV_SET(&ch, ident, filter, flags | EV_RECEIPT, fflags, data, udata);
    n = kevent(kq, &ch, 1, &res, 1, NULL);
    if (n != 1 || !(res.flags & EV_ERROR)) {
        fprintf(stderr, "kevent(one change with EV_RECEIPT) = %d (%s), expected one receipt\n", n,
                n < 0 ? strerror(errno) : "no EV_ERROR");
        check_failures++;
        return -1;
    }
    return (int)res.data;
}

/* Wait up to ms for events; returns kevent()'s result. */
__attribute__((unused)) static int wait_ms(int kq, struct kevent *evs, int n, long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    return kevent(kq, NULL, 0, evs, n, &ts);
}

/* The event for (ident, filter) among evs[0..n), or NULL. */
__attribute__((unused)) static const struct kevent *find_event(const struct kevent *evs, int n,
                                                               uintptr_t ident, short filter)
{
    for (int i = 0; i < n; i++)
        if (evs[i].ident == ident && evs[i].filter == filter)
            return &evs[i];
    return NULL;
}

__attribute__((unused)) static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

__attribute__((unused)) static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* A listening TCP socket on 127.0.0.1, kernel-chosen port. */
__attribute__((unused)) static int tcp_listener(int *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
        die("listener");
    *port = ntohs(sa.sin_port);
    return fd;
}

__attribute__((unused)) static int tcp_connect(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ||
        connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        die("connect");
    return fd;
}

/* A connected loopback TCP pair: *a is non-blocking, *b (the peer) blocking. */
__attribute__((unused)) static void tcp_pair(int *a, int *b)
{
    int port, l = tcp_listener(&port);

    *b = tcp_connect(port);
    /* accept() and two fcntl()s, not accept4(): macOS has no accept4() */
    if ((*a = accept(l, NULL, NULL)) < 0 || fcntl(*a, F_SETFD, FD_CLOEXEC) < 0 ||
        fcntl(*a, F_SETFL, O_NONBLOCK) < 0)
        die("accept");
    close(l);
}

/* The number of open fds of this process (to prove nothing leaked). */
__attribute__((unused)) static int open_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 4096; fd++)
        if (fcntl(fd, F_GETFD) >= 0)
            n++;
    return n;
}

#endif
