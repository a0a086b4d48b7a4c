/* SPDX-License-Identifier: MIT */
/* echo-epoll-lt.c: a single-threaded echo server on level-triggered epoll.
 *
 * The loop of chapter 03's echo-poll, with the question asked differently:
 * the kernel keeps the set of watched sockets (the interest list, changed
 * with epoll_ctl), and epoll_wait() hands back only the ones that are ready,
 * up to a batch of MAX_EVENTS per call. A wake-up costs the same with 10 or
 * 10,000 idle clients.
 *
 *     make -C chapters/04-epoll
 *     build/chapters/04-epoll/echo-epoll-lt -p 0 [-E pause|spare|log]
 *     build/common/tools/echo-client -p PORT hello      (from another terminal)
 *
 * Linux 2.6.28 or later (epoll_create1, signalfd, accept4, EPOLLRDHUP). What
 * the server does with one connection is in conn.c; this file is the loop,
 * accepting, and shutdown:
 *   - SIGINT and SIGTERM arrive as a readable signalfd in the same epoll set;
 *   - when accept() fails for lack of file descriptors (EMFILE), a
 *     level-triggered loop that just logs it is woken again at once, forever.
 *     -E picks what to do instead: pause accepting until a connection closes
 *     (the default), accept and close at once with a spare fd (libuv's
 *     trick), or log and carry on like chapter 03 (spins; for comparison).
 */
#include "clock.h"
#include "conn.h"
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_EVENTS      128  /* events taken per epoll_wait() */
#define ACCEPT_BATCH    64   /* accepts per turn, so a flood cannot starve the connected */
#define ACCEPT_RETRY_MS 1000 /* a paused listener is tried again after this long */

enum emfile_policy { EMFILE_PAUSE, EMFILE_SPARE, EMFILE_LOG };

struct server {
    int epfd;
    struct watch sig;       /* signalfd: SIGINT/SIGTERM */
    struct watch listener;  /* non-blocking listening socket */
    struct list_node conns; /* every open connection (conn.link), for shutdown */
    enum emfile_policy policy;
    bool accept_paused;  /* EMFILE_PAUSE: the listener is out of the interest list */
    long long paused_at; /* when, in ms (CLOCK_MONOTONIC) */
    int spare_fd;        /* EMFILE_SPARE: an fd held in reserve, -1 if none */
    int accept_errno;    /* last accept() error logged: a streak is logged once */
};

static int server__watch_add(int epfd, struct watch *w, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};

    return epoll_ctl(epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0 ? -errno : 0;
}

static void server__drop(struct conn *c)
{
    list_remove(&c->link);
    conn_free(c); /* close() removes it from the interest list: no EPOLL_CTL_DEL needed */
}

/* snippet: pause */
/* Out of fds: take the listener out of the interest list (events 0), so a
 * connection waiting in the backlog no longer wakes the loop. It comes back
 * when a connection closes, or after ACCEPT_RETRY_MS (for ENFILE or ENOMEM,
 * which other processes may relieve). */
static void server__pause_accept(struct server *s, bool pause)
{
    struct epoll_event ev = {.events = pause ? 0 : EPOLLIN, .data.ptr = &s->listener};

    if (s->accept_paused == pause)
        return;
    if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->listener.fd, &ev) < 0)
        net_die(errno, "epoll_ctl(MOD, fd=%d)", s->listener.fd);
    s->accept_paused = pause;
    s->paused_at = clock_now_ms();
}
/* end snippet */

/* How long epoll_wait() may sleep: for ever (-1), unless accepting is paused
 * and due to be tried again. */
static int server__timeout_ms(const struct server *s)
{
    long long left = s->paused_at + ACCEPT_RETRY_MS - clock_now_ms();

    if (!s->accept_paused)
        return -1;
    return left > 0 ? (int)left : 0;
}

/* snippet: spare */
/* libuv's trick: give up the spare fd, accept every waiting connection and
 * close it at once (the client sees EOF instead of waiting), then take the
 * spare back. Returns false if there was no spare to give. */
static bool server__shed_with_spare(struct server *s)
{
    int fd;

    /* EXERCISE BEGIN spare-fd: close the spare, accept and close the waiting ones, reopen it */
    if (s->spare_fd < 0)
        return false;
    close(s->spare_fd);
    while ((fd = accept4(s->listener.fd, NULL, NULL, SOCK_CLOEXEC)) >= 0 || errno == EINTR)
        if (fd >= 0)
            close(fd);
    s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return true;
    /* EXERCISE END */
}
/* end snippet */

/* snippet: accept-error */
static void server__on_accept_error(struct server *s, int err)
{
    bool shed = s->policy == EMFILE_SPARE && (err == EMFILE || err == ENFILE);
    bool pause = s->policy != EMFILE_LOG && !shed;

    if (err != s->accept_errno) /* log the first of a streak, not every retry */
        fprintf(stderr, "accept(fd=%d): %s%s\n", s->listener.fd, strerror(err),
                shed    ? ": closing waiting connections at once"
                : pause ? ": not accepting until a connection closes"
                        : "");
    s->accept_errno = err;
    if (shed && server__shed_with_spare(s))
        return;
    if (s->policy != EMFILE_LOG)
        server__pause_accept(s, true);
    /* EMFILE_LOG, chapter 03's way: nothing. The connection stays in the
     * backlog, the listener stays readable, and the next epoll_wait()
     * returns at once: a busy loop until an fd is freed. */
}
/* end snippet */

/* snippet: accept */
static void server__accept(struct server *s)
{
    for (int k = 0; k < ACCEPT_BATCH; k++) {
        int fd = accept4(s->listener.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
            continue;
        if (fd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            s->accept_errno = 0; /* the backlog is empty: the streak is over */
            return;
        }
        if (fd < 0) {
            server__on_accept_error(s, errno); /* EMFILE, ENFILE, ENOBUFS, ENOMEM */
            return;
        }
        net_set_nodelay(fd); /* echo small messages at once, no Nagle delay */
        struct conn *c = conn_new(fd);
        int err = c ? conn_register(c, s->epfd) : -ENOMEM;
        if (err < 0) {
            fprintf(stderr, "accept(fd=%d): client fd=%d: %s, closing it\n", s->listener.fd, fd,
                    strerror(-err));
            if (c)
                conn_free(c);
            else
                close(fd);
            continue;
        }
        list_insert(&s->conns, &c->link);
    }
}
/* end snippet */

/* snippet: serve */
static void server__serve(struct server *s, struct conn *c, uint32_t events)
{
    int err;

    if (conn_on_events(c, events) == CONN_CLOSE) {
        server__drop(c);
        server__pause_accept(s, false); /* an fd was freed: accept again */
        return;
    }
    if ((err = conn_update_interest(c, s->epfd)) < 0) {
        fprintf(stderr, "epoll_ctl(MOD, fd=%d): %s, closing it\n", c->w.fd, strerror(-err));
        server__drop(c);
    }
}
/* end snippet */

static int server__on_opt(int opt, const char *arg, void *ctx)
{
    enum emfile_policy *p = ctx;

    if (opt != 'E')
        return -1;
    if (strcmp(arg, "pause") == 0)
        *p = EMFILE_PAUSE;
    else if (strcmp(arg, "spare") == 0)
        *p = EMFILE_SPARE;
    else if (strcmp(arg, "log") == 0)
        *p = EMFILE_LOG;
    else
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    struct server s = {.policy = EMFILE_PAUSE, .spare_fd = -1};
    struct net_cli_extra extra = {
        .optstring = "E:",
        .usage = "  -E MODE   when out of fds: pause (default), spare, or log (spins)\n",
        .on_opt = server__on_opt,
        .ctx = &s.policy,
    };
    struct epoll_event events[MAX_EVENTS];
    struct net_cli cli;
    int err;

    net_cli_parse(&cli, argc, argv, "A single-threaded echo server on level-triggered epoll.",
                  &extra);
    list_init(&s.conns);
    /* Before listening: a test may send SIGTERM as soon as it sees the port. */
    s.sig = (struct watch){WATCH_SIGNAL, net_signalfd_or_die(SFD_NONBLOCK)};
    s.listener = (struct watch){WATCH_LISTENER, net_listen_or_die(&cli, SOMAXCONN)};
    if ((err = net_set_nonblocking(s.listener.fd)) < 0)
        net_die(-err, "fcntl(fd=%d, F_SETFL, O_NONBLOCK)", s.listener.fd);
    /* EXERCISE BEGIN spare-fd: with -E spare, hold one fd in reserve, open on /dev/null */
    if (s.policy == EMFILE_SPARE && (s.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
        net_die(errno, "open(/dev/null)");
    /* EXERCISE END */
    if ((s.epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
        net_die(errno, "epoll_create1");
    if ((err = server__watch_add(s.epfd, &s.sig, EPOLLIN)) < 0 ||
        (err = server__watch_add(s.epfd, &s.listener, EPOLLIN)) < 0)
        net_die(-err, "epoll_ctl(ADD)");

    /* snippet: loop */
    for (bool stop = false; !stop;) {
        int n = epoll_wait(s.epfd, events, MAX_EVENTS, server__timeout_ms(&s));

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            net_die(errno, "epoll_wait(epfd=%d, %d)", s.epfd, MAX_EVENTS);
        for (int i = 0; i < n; i++) {
            struct watch *w = events[i].data.ptr;
            if (w->kind == WATCH_CONN)
                server__serve(&s, (struct conn *)w, events[i].events);
            else if (w->kind == WATCH_LISTENER)
                server__accept(&s);
            else
                stop = true; /* the signalfd: finish this batch, then leave */
        }
        if (s.accept_paused && server__timeout_ms(&s) == 0)
            server__pause_accept(&s, false); /* time to try the listener again */
    }
    /* end snippet */

    while (!list_empty(&s.conns))
        server__drop(list_first_entry(&s.conns, struct conn, link));
    close(s.epfd);
    if (s.spare_fd >= 0)
        close(s.spare_fd);
    close(s.listener.fd);
    close(s.sig.fd);
    return 0;
}
