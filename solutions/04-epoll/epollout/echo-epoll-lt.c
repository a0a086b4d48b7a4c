/* SPDX-License-Identifier: MIT */
/* echo-epoll-lt (exercise epollout): the EPOLLOUT path of an epoll echo server.
 *
 * This is chapters/04-epoll/echo-epoll-lt.c with conn.c folded in and only
 * the pause strategy for EMFILE, so the whole server is in one file. Reading,
 * accepting, signals and the loop are done. Two parts are yours:
 *
 *   1. conn_flush_pending(): send the pending output. write() on a
 *      non-blocking socket may take all of it, part of it (a short write),
 *      or nothing (-1 EAGAIN). Keep what it did not take, in order.
 *   2. conn_update_interest(): bring epoll's interest list in line with the
 *      connection's state, with EPOLL_CTL_MOD, and only when it changed:
 *      EPOLLOUT while output waits (armed on a short write, so the loop is
 *      told when to go on) and never after it drained (level-triggered epoll
 *      reports a writable socket on every call: the loop would spin), and
 *      EPOLLIN | EPOLLRDHUP before EOF and under the backpressure bound.
 *
 *     make ex EX=04-epoll/epollout      (build and test your copy)
 *     build/exercises/04-epoll/epollout/echo-epoll-lt -p 0
 */
#include "buf.h"
#include "clock.h"
#include "list.h"
#include "net.h"
#include "todo.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define CONN_READ_CHUNK  (64 * 1024)   /* room asked for on each read */
#define CONN_PENDING_MAX (1024 * 1024) /* stop reading above this much unsent echo */
#define MAX_EVENTS       128           /* events taken per epoll_wait() */
#define ACCEPT_BATCH     64            /* accepts per turn */
#define ACCEPT_RETRY_MS  1000          /* a paused listener is tried again after this long */

enum watch_kind { WATCH_SIGNAL, WATCH_LISTENER, WATCH_CONN };

/* What epoll_event.data.ptr points to: the first member of its owner. */
struct watch {
    enum watch_kind kind;
    int fd;
};

struct conn {
    struct watch w;        /* first: data.ptr points here */
    uint32_t registered;   /* the events in epoll's interest list now */
    bool peer_eof;         /* the client half-closed: send what is left, then close */
    struct buf out;        /* read from the client, not yet echoed back */
    struct list_node link; /* in server.conns: every open connection, to close them all on exit */
};

enum conn_status { CONN_KEEP, CONN_CLOSE };

struct server {
    int epfd;
    struct watch sig, listener;
    struct list_node conns;
    bool accept_paused; /* out of fds: the listener's events are 0 */
    long long paused_at;
    int accept_errno; /* last accept() error logged */
};

static enum conn_status conn_fail(const struct conn *c, const char *call, int err)
{
    fprintf(stderr, "%s(fd=%d): %s\n", call, c->w.fd, strerror(err));
    return CONN_CLOSE;
}

/* Send pending output. Returns CONN_KEEP while the connection goes on (also
 * when the socket is full and bytes remain), CONN_CLOSE on a write error, or
 * when everything is sent and the client has half-closed. */
static enum conn_status conn_flush_pending(struct conn *c)
{
    /* EXERCISE BEGIN: write until empty or EAGAIN, keep what is left, close if drained after EOF */
    while (buf_len(&c->out) > 0) {
        ssize_t n = write(c->w.fd, buf_peek(&c->out), buf_len(&c->out));
        if (n > 0) {
            buf_consume(&c->out, (size_t)n); /* short write: the rest stays queued */
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return CONN_KEEP; /* full: conn_update_interest() arms EPOLLOUT */
        return conn_fail(c, "write", n < 0 ? errno : EIO);
    }
    return c->peer_eof ? CONN_CLOSE : CONN_KEEP;
    /* EXERCISE END */
}

/* Read once (on until EOF when EPOLLRDHUP says the client half-closed), then
 * try to echo at once. */
static enum conn_status conn_on_readable(struct conn *c, bool rdhup)
{
    do {
        ssize_t n = buf_read_from(&c->out, c->w.fd, CONN_READ_CHUNK);
        if (n == -EAGAIN)
            break;
        if (n < 0)
            return conn_fail(c, "read", (int)-n);
        if (n == 0) {
            c->peer_eof = true;
            break;
        }
    } while (rdhup && buf_len(&c->out) < CONN_PENDING_MAX);
    return conn_flush_pending(c);
}

/* Make the registered events what the connection's state needs. Returns 0,
 * or -errno if epoll_ctl() failed. c->registered holds what is registered. */
static int conn_update_interest(struct conn *c, int epfd)
{
    struct epoll_event ev = {.events = 0, .data.ptr = &c->w};

    /* EXERCISE BEGIN: EPOLLOUT only while output waits, EPOLLIN under the bound, MOD if changed */
    if (!c->peer_eof && buf_len(&c->out) < CONN_PENDING_MAX)
        ev.events |= EPOLLIN | EPOLLRDHUP;
    if (buf_len(&c->out) > 0)
        ev.events |= EPOLLOUT;
    if (ev.events == c->registered)
        return 0; /* nothing changed: no system call */
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->w.fd, &ev) < 0)
        return -errno;
    c->registered = ev.events;
    /* EXERCISE END */
    return 0;
}

static enum conn_status conn_on_events(struct conn *c, uint32_t events)
{
    enum conn_status st = CONN_KEEP;

    if (events & (EPOLLERR | EPOLLHUP)) /* the next read() or write() reports it */
        events |= c->registered;
    if (events & EPOLLIN)
        st = conn_on_readable(c, events & EPOLLRDHUP);
    else if (events & EPOLLOUT)
        st = conn_flush_pending(c);
    /* Drained: give the buffer back, so an idle connection holds none (the
     * page its first read touched would otherwise stay resident for as long
     * as the connection lives). */
    if (st == CONN_KEEP && buf_len(&c->out) == 0)
        buf_free(&c->out);
    return st;
}

static void conn_free(struct conn *c)
{
    close(c->w.fd); /* also leaves the interest list: this fd is the socket's only one */
    buf_free(&c->out);
    free(c);
}

static void server_pause_accept(struct server *s, bool pause)
{
    struct epoll_event ev = {.events = pause ? 0 : EPOLLIN, .data.ptr = &s->listener};

    if (s->accept_paused == pause)
        return;
    if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->listener.fd, &ev) < 0)
        net_die(errno, "epoll_ctl(MOD, fd=%d)", s->listener.fd);
    s->accept_paused = pause;
    s->paused_at = clock_now_ms();
}

static void server_drop(struct server *s, struct conn *c)
{
    list_remove(&c->link);
    conn_free(c);
    server_pause_accept(s, false); /* an fd was freed: accept again */
}

static void server_accept(struct server *s)
{
    for (int k = 0; k < ACCEPT_BATCH; k++) {
        int fd = accept4(s->listener.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
            continue;
        if (fd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            s->accept_errno = 0;
            return;
        }
        if (fd < 0) { /* EMFILE and the like: pause, or the loop spins on the listener */
            if (errno != s->accept_errno)
                fprintf(stderr, "accept(fd=%d): %s: not accepting until a connection closes\n",
                        s->listener.fd, strerror(errno));
            s->accept_errno = errno;
            server_pause_accept(s, true);
            return;
        }
        net_set_nodelay(fd);
        struct conn *c = calloc(1, sizeof(*c));
        if (!c) {
            fprintf(stderr, "accept(fd=%d): no memory for client fd=%d, closing it\n",
                    s->listener.fd, fd);
            close(fd);
            continue;
        }
        *c = (struct conn){.w = {WATCH_CONN, fd}, .registered = EPOLLIN | EPOLLRDHUP};
        buf_init(&c->out);
        struct epoll_event ev = {.events = c->registered, .data.ptr = &c->w};
        if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
            fprintf(stderr, "epoll_ctl(ADD, fd=%d): %s, closing it\n", fd, strerror(errno));
            conn_free(c);
            continue;
        }
        list_insert(&s->conns, &c->link);
    }
}

static void server_serve(struct server *s, struct conn *c, uint32_t events)
{
    int err;

    if (conn_on_events(c, events) == CONN_CLOSE) {
        server_drop(s, c);
    } else if ((err = conn_update_interest(c, s->epfd)) < 0) {
        fprintf(stderr, "epoll_ctl(MOD, fd=%d): %s, closing it\n", c->w.fd, strerror(-err));
        server_drop(s, c);
    }
}

int main(int argc, char **argv)
{
    struct server s = {0};
    struct list_node *pos, *tmp;
    struct epoll_event events[MAX_EVENTS];
    struct epoll_event in = {.events = EPOLLIN};
    struct net_cli cli;
    int err;

    net_cli_parse(&cli, argc, argv, "A single-threaded echo server on level-triggered epoll.",
                  NULL);
    list_init(&s.conns);
    s.sig = (struct watch){WATCH_SIGNAL, net_signalfd_or_die(SFD_NONBLOCK)};
    s.listener = (struct watch){WATCH_LISTENER, net_listen_or_die(&cli, SOMAXCONN)};
    if ((err = net_set_nonblocking(s.listener.fd)) < 0)
        net_die(-err, "fcntl(fd=%d, F_SETFL, O_NONBLOCK)", s.listener.fd);
    if ((s.epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
        net_die(errno, "epoll_create1");
    in.data.ptr = &s.sig;
    if (epoll_ctl(s.epfd, EPOLL_CTL_ADD, s.sig.fd, &in) < 0)
        net_die(errno, "epoll_ctl(ADD, fd=%d)", s.sig.fd);
    in.data.ptr = &s.listener;
    if (epoll_ctl(s.epfd, EPOLL_CTL_ADD, s.listener.fd, &in) < 0)
        net_die(errno, "epoll_ctl(ADD, fd=%d)", s.listener.fd);

    for (bool stop = false; !stop;) {
        long long left = s.paused_at + ACCEPT_RETRY_MS - clock_now_ms();
        int n = epoll_wait(s.epfd, events, MAX_EVENTS,
                           !s.accept_paused ? -1
                           : left > 0       ? (int)left
                                            : 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            net_die(errno, "epoll_wait(epfd=%d, %d)", s.epfd, MAX_EVENTS);
        for (int i = 0; i < n; i++) {
            struct watch *w = events[i].data.ptr;
            if (w->kind == WATCH_CONN)
                server_serve(&s, (struct conn *)w, events[i].events);
            else if (w->kind == WATCH_LISTENER)
                server_accept(&s);
            else
                stop = true;
        }
        if (s.accept_paused && clock_now_ms() - s.paused_at >= ACCEPT_RETRY_MS)
            server_pause_accept(&s, false);
    }

    list_for_each_safe(pos, tmp, &s.conns)
        conn_free(list_entry(pos, struct conn, link));
    close(s.epfd);
    close(s.listener.fd);
    close(s.sig.fd);
    return 0;
}
