/* SPDX-License-Identifier: MIT */
/* et-tour.c: the rules of edge-triggered epoll and EPOLLONESHOT, each checked.
 *
 *     make -C chapters/05-epoll-edge
 *     build/chapters/05-epoll-edge/et-tour
 *
 * Chapter 04's epoll-tour showed level-triggered epoll: a condition is
 * reported on every epoll_wait() while it holds. Here the other modes:
 *
 *   1. EPOLLET: reported once per change. Unread bytes are not reported
 *      again; a new arrival is a new edge, even with old bytes unread.
 *      (Sockets throughout: every arrival on a TCP socket wakes its waiters.)
 *   2. The stall: 96 KiB arrive, one read takes 64 KiB, and epoll never
 *      mentions the other 32 KiB. Reading until EAGAIN is the only cure.
 *   3. EPOLLOUT with EPOLLET: reported once, not on every call; again only
 *      when a full send buffer gets room.
 *   4. EPOLL_CTL_MOD re-checks the fd: a registration changed (or re-armed)
 *      while bytes wait reports them at once.
 *   5. EPOLLONESHOT: one event, then the fd is disabled, new bytes or not,
 *      until EPOLL_CTL_MOD re-arms it.
 *   6. Two threads, one epoll: level- and edge-triggered both hand the same
 *      fd to a second thread while the first still works on it; ONESHOT
 *      does not.
 *
 * Linux 2.6.28 or later. If the kernel does something else than the text
 * says, the program says so and exits 1.
 */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* An epoll instance watching one fd with `events`. */
static int watch_one(int fd, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.fd = fd};
    int ep = epoll_create1(EPOLL_CLOEXEC);

    if (ep < 0)
        net_die(errno, "epoll_create1");
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
        net_die(errno, "epoll_ctl(ADD, fd=%d)", fd);
    return ep;
}

static void rearm(int ep, int fd, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.fd = fd};

    if (epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev) < 0)
        net_die(errno, "epoll_ctl(MOD, fd=%d)", fd);
}

/* How many events one epoll_wait() returns (0 or 1 here), waiting up to ms. */
static int events_in(int ep, int ms)
{
    struct epoll_event ev;
    int n;

    while ((n = epoll_wait(ep, &ev, 1, ms)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        net_die(errno, "epoll_wait(epfd=%d)", ep);
    return n;
}

static void send_bytes(int fd, const char *bytes)
{
    if (write(fd, bytes, strlen(bytes)) != (ssize_t)strlen(bytes))
        net_die(errno, "write(fd=%d)", fd);
}

/* A connected loopback TCP pair; *srv is non-blocking. */
static void tcp_pair(int *cli, int *srv)
{
    int lfd = net_listen("127.0.0.1", 0, 1), err;

    if (lfd < 0)
        net_die(-lfd, "listen(127.0.0.1:0)");
    if ((*cli = net_connect("127.0.0.1", net_local_port(lfd))) < 0)
        net_die(-*cli, "connect to port %d", net_local_port(lfd));
    if ((*srv = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) < 0)
        net_die(errno, "accept(fd=%d)", lfd);
    if ((err = net_set_nonblocking(*cli)) < 0)
        net_die(-err, "fcntl(fd=%d, O_NONBLOCK)", *cli);
    close(lfd);
}

/* Read everything there is, until EAGAIN. Returns the byte count. */
static long drain(int fd)
{
    char buf[64 * 1024];
    long total = 0;
    ssize_t n;

    while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
        total += n > 0 ? n : 0;
    if (n < 0 && errno != EAGAIN)
        net_die(errno, "read(fd=%d)", fd);
    return total;
}

static void step_edge(void)
{
    int cli, srv, ep, n = 0;
    char c;

    tcp_pair(&cli, &srv);
    ep = watch_one(srv, EPOLLIN | EPOLLET);
    send_bytes(cli, "abc");
    for (int i = 0; i < 3; i++)
        n += events_in(ep, i == 0 ? 1000 : 0);
    printf("  3 bytes in a socket, nothing read: reported by %d of 3 epoll_wait() calls\n", n);
    if (n != 1)
        net_unexpected("edge-triggered epoll reported unread bytes %d times of 3", n);
    if (read(srv, &c, 1) != 1)
        net_die(errno, "read(fd=%d)", srv);
    n = events_in(ep, 0);
    printf("  1 byte read, 2 left: epoll_wait() = %d, reading makes no edge\n", n);
    if (n != 0)
        net_unexpected("a read() produced an edge");
    send_bytes(cli, "d");
    n = events_in(ep, 1000);
    printf("  1 more byte sent: epoll_wait() = %d, a new arrival is a new edge;"
           " read() then finds %ld bytes\n",
           n, drain(srv));
    if (n != 1)
        net_unexpected("a new arrival with old bytes unread was not reported");
    close(cli);
    close(srv);
    close(ep);
}

/* Wait until `bytes` have arrived in fd's receive queue (loopback is quick,
 * but not instantaneous). */
static void wait_queued(int fd, int bytes)
{
    int queued = 0;

    for (int i = 0; i < 1000 && queued < bytes; i++) {
        if (ioctl(fd, FIONREAD, &queued) < 0)
            net_die(errno, "ioctl(fd=%d, FIONREAD)", fd);
        if (queued < bytes)
            usleep(1000);
    }
    if (queued < bytes)
        net_unexpected("only %d of %d bytes arrived within a second", queued, bytes);
}

/* snippet: stall */
static void step_stall(void)
{
    static char big[96 * 1024], buf[64 * 1024];
    int cli, srv, ep, waiting = 0, n;
    ssize_t got;

    tcp_pair(&cli, &srv);
    ep = watch_one(srv, EPOLLIN | EPOLLET);
    memset(big, 'x', sizeof(big));
    if (write(cli, big, sizeof(big)) != (ssize_t)sizeof(big))
        net_die(errno, "write(fd=%d, 96 KiB)", cli);
    wait_queued(srv, (int)sizeof(big));
    n = events_in(ep, 0);
    got = read(srv, buf, sizeof(buf)); /* one read, as a level-triggered server would */
    if (ioctl(srv, FIONREAD, &waiting) < 0)
        net_die(errno, "ioctl(fd=%d, FIONREAD)", srv);
    printf("  96 KiB sent in one write: %d event, one read() took %zd bytes\n", n, got);
    n = events_in(ep, 500);
    printf("  %d bytes still in the socket, and epoll_wait(500 ms) = %d: nothing will say so\n",
           waiting, n);
    if (got != (ssize_t)sizeof(buf) || waiting != (int)(sizeof(big) - sizeof(buf)) || n != 0)
        net_unexpected("expected 65536 bytes read, 32768 waiting and no event");
    printf("  read until EAGAIN: %ld more bytes, then EAGAIN\n", drain(srv));
    /* end snippet */
    close(cli);
    close(srv);
    close(ep);
}

static void step_epollout(void)
{
    static char buf[64 * 1024];
    int cli, srv, ep, n = 0;
    long sent = 0;
    ssize_t w;

    tcp_pair(&cli, &srv);
    ep = watch_one(srv, EPOLLOUT | EPOLLET);
    for (int i = 0; i < 100000; i++)
        n += events_in(ep, 0);
    printf("  EPOLLOUT|EPOLLET, nothing to send: reported by %d of 100000 calls\n", n);
    if (n != 1)
        net_unexpected("an idle writable socket was reported %d times", n);
    for (int round = 0; round < 2; round++) {
        /* The peer reads nothing: write until the socket is full. A late ACK
         * may still free a little room, so settle, then fill it again. */
        while ((w = write(srv, buf, sizeof(buf))) > 0)
            sent += w;
        if (errno != EAGAIN)
            net_die(errno, "write(fd=%d)", srv);
        while (round == 0 && events_in(ep, 100) > 0)
            ;
    }
    n = events_in(ep, 0);
    printf("  %ld bytes written until EAGAIN: epoll_wait() = %d\n", sent, n);
    for (int queued = 1; queued > 0;) { /* the peer reads everything, until none is left */
        drain(cli);
        if (ioctl(srv, SIOCOUTQ, &queued) < 0)
            net_die(errno, "ioctl(fd=%d, SIOCOUTQ)", srv);
        usleep(1000);
    }
    n = events_in(ep, 0) + events_in(ep, 0);
    printf("  the peer reads everything: EPOLLOUT reported again (%d), room came back\n", n);
    if (n < 1)
        net_unexpected("no EPOLLOUT edge once the full socket drained");
    close(cli);
    close(srv);
    close(ep);
}

static void step_mod(void)
{
    int cli, srv, ep, before, after;

    tcp_pair(&cli, &srv);
    ep = watch_one(srv, EPOLLIN | EPOLLET);
    send_bytes(cli, "abc");
    before = events_in(ep, 1000) + events_in(ep, 0);
    rearm(ep, srv, EPOLLIN | EPOLLET); /* the same events; nothing sent, nothing read */
    after = events_in(ep, 0);
    printf("  unread bytes, reported %d time; EPOLL_CTL_MOD with the same events:"
           " epoll_wait() = %d\n",
           before, after);
    if (before != 1 || after != 1)
        net_unexpected("expected one edge before the MOD and one after, got %d and %d", before,
                       after);
    close(cli);
    close(srv);
    close(ep);
}

static void step_oneshot(void)
{
    int cli, srv, ep, first, after, rearmed;

    tcp_pair(&cli, &srv);
    ep = watch_one(srv, EPOLLIN | EPOLLONESHOT);
    send_bytes(cli, "a");
    first = events_in(ep, 1000);
    send_bytes(cli, "b"); /* a new edge, but the fd is disabled now */
    after = events_in(ep, 200) + events_in(ep, 0);
    rearm(ep, srv, EPOLLIN | EPOLLONESHOT);
    rearmed = events_in(ep, 0);
    printf("  first byte: %d event; another byte: %d events (disabled); EPOLL_CTL_MOD re-arms:"
           " %d event at once\n",
           first, after, rearmed);
    if (first != 1 || after != 0 || rearmed != 1)
        net_unexpected("EPOLLONESHOT did not disable the fd until re-armed");
    close(cli);
    close(srv);
    close(ep);
}

/* A second thread waits on the same epoll instance, up to 200 ms. */
static void *second_thread(void *arg)
{
    return (void *)(intptr_t)events_in(*(int *)arg, 200);
}

static int second_thread_events(int ep)
{
    pthread_t t;
    void *n;
    int err;

    if ((err = pthread_create(&t, NULL, second_thread, &ep)) != 0)
        net_die(err, "pthread_create");
    pthread_join(t, &n);
    return (int)(intptr_t)n;
}

/* snippet: threads */
/* Thread A (this one) takes an event for a socket and is still "working" on
 * it (has read nothing yet) when more bytes arrive, or not; then thread B,
 * waiting on the same epoll instance, is asked. */
static void two_threads(const char *mode, uint32_t events, bool more_arrives, int expect_b)
{
    int cli, srv, ep, a, b;

    tcp_pair(&cli, &srv);
    ep = watch_one(srv, events);
    send_bytes(cli, "x");
    a = events_in(ep, 1000);
    if (more_arrives)
        send_bytes(cli, "y");
    b = second_thread_events(ep);
    printf("  %-28s thread A got %d event; then thread B got %d%s\n", mode, a, b,
           b ? ": two threads on one fd" : "");
    if (a != 1 || b != expect_b)
        net_unexpected("%s: expected thread B to get %d event(s), got %d", mode, expect_b, b);
    if (events & EPOLLONESHOT) {
        rearm(ep, srv, events); /* A is done: hand it back */
        b = second_thread_events(ep);
        printf("  %-28s A re-arms it: thread B gets %d event\n", "", b);
        if (b != 1)
            net_unexpected("after the re-arm thread B got %d events", b);
    }
    close(cli);
    close(srv);
    close(ep);
}
/* end snippet */

int main(int argc, char **argv)
{
    net_cli_none(argc, argv,
                 "Shows edge-triggered epoll and EPOLLONESHOT, one step at a time, each checked.");
    printf("step 1: edge-triggered: reported once per change\n");
    step_edge();
    printf("step 2: the stall: one read per edge leaves bytes nobody reports\n");
    step_stall();
    printf("step 3: EPOLLOUT, edge-triggered\n");
    step_epollout();
    printf("step 4: EPOLL_CTL_MOD looks at the fd again\n");
    step_mod();
    printf("step 5: EPOLLONESHOT: one event, then disabled until re-armed\n");
    step_oneshot();
    printf("step 6: two threads, one epoll instance\n");
    two_threads("level-triggered:", EPOLLIN, false, 1);
    two_threads("edge-triggered, more data:", EPOLLIN | EPOLLET, true, 1);
    two_threads("EPOLLONESHOT, more data:", EPOLLIN | EPOLLONESHOT, true, 0);
    printf("every step behaved as described\n");
    return 0;
}
