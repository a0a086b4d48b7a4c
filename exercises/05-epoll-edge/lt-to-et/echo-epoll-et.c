/* SPDX-License-Identifier: MIT */
/* echo-epoll-et (exercise lt-to-et): a level-triggered server, converted to EPOLLET.
 *
 * This is chapter 04's echo-epoll-lt in one file, with the mechanical part
 * of the conversion done: every socket is registered once, with EPOLLET,
 * and never modified (no EPOLLOUT to arm and drop); an event now only
 * records readiness (c->readable, c->writable); and the loop keeps a ready
 * list of its own for work that no edge will announce. Three parts are
 * yours, the loops that edge-triggered epoll demands:
 *
 *   1. server_accept(): accept until EAGAIN. One accept per event leaves
 *      the rest of a burst in the backlog for ever: no new edge comes for
 *      connections already waiting. At most ACCEPT_BATCH per turn; if the
 *      batch runs out, put the listener back on the ready list.
 *   2. conn_turn(): read until EAGAIN (or EOF), echoing as you go, but at
 *      most READ_BUDGET reads per turn, so that one busy client cannot keep
 *      the loop from the others. A connection stopped by its budget still
 *      has data and will get no new edge: put it back on the ready list.
 *   3. conn_flush(): write until the output is gone or write() says EAGAIN.
 *      After EAGAIN the kernel sends an EPOLLOUT edge when room comes back.
 *
 *     make ex EX=05-epoll-edge/lt-to-et      (build and test your copy)
 *     build/exercises/05-epoll-edge/lt-to-et/echo-epoll-et -p 0
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

#define READ_CHUNK       (16 * 1024)   /* room asked for on each read: small, so tests see it */
#define READ_BUDGET      4             /* reads per connection per turn */
#define CONN_PENDING_MAX (1024 * 1024) /* stop reading above this much unsent echo */
#define MAX_EVENTS       128           /* events taken per epoll_wait() */
#define ACCEPT_BATCH     64            /* accepts per turn */
#define ACCEPT_RETRY_MS  1000          /* out of fds: try accept() again after this long */

enum watch_kind { WATCH_SIGNAL, WATCH_LISTENER, WATCH_CONN };

/* What epoll_event.data.ptr points to: the first member of its owner. */
struct watch {
    enum watch_kind kind;
    int fd;
    bool queued;              /* on the server's ready list */
    struct watch *ready_next; /* next on that list */
};

struct conn {
    struct watch w;        /* first: data.ptr points here */
    bool readable;         /* an EPOLLIN edge came, and no read() has said EAGAIN since */
    bool writable;         /* no write() has said EAGAIN since the last EPOLLOUT edge */
    bool peer_eof;         /* the client half-closed: send what is left, then close */
    struct buf out;        /* read from the client, not yet echoed back */
    struct list_node link; /* in server.conns: every open connection, to close them all on exit */
};

enum conn_status { CONN_KEEP, CONN_CLOSE };

struct server {
    int epfd;
    struct watch sig, listener;
    struct list_node conns;
    struct watch *ready, **ready_tail; /* the ready list: FIFO, so turns are fair */
    bool accept_blocked;               /* out of fds: retry when one is freed */
    long long blocked_at;
    int accept_errno; /* last accept() error logged */
};

/* Put w on the ready list (once): it gets a turn soon, with no event. */
static void ready_push(struct server *s, struct watch *w)
{
    if (w->queued)
        return;
    w->queued = true;
    w->ready_next = NULL;
    *s->ready_tail = w;
    s->ready_tail = &w->ready_next;
}

static enum conn_status conn_fail(const struct conn *c, const char *call, int err)
{
    fprintf(stderr, "%s(fd=%d): %s\n", call, c->w.fd, strerror(err));
    return CONN_CLOSE;
}

/* Send pending output. Returns CONN_KEEP while the connection goes on (also
 * when the socket is full and bytes remain), CONN_CLOSE on a write error. */
static enum conn_status conn_flush(struct conn *c)
{
    TODO("write until the output is gone or EAGAIN (then clear c->writable)");
}

/* One turn for a connection taken off the ready list. */
static enum conn_status conn_turn(struct server *s, struct conn *c)
{
    if (c->writable && buf_len(&c->out) > 0 && conn_flush(c) == CONN_CLOSE)
        return CONN_CLOSE;
    TODO("read and echo until EAGAIN or EOF; after READ_BUDGET reads, requeue c");
    return c->peer_eof && buf_len(&c->out) == 0 ? CONN_CLOSE : CONN_KEEP;
}

static void server_drop(struct server *s, struct conn *c)
{
    list_remove(&c->link);
    close(c->w.fd); /* also leaves the interest list: this fd is the socket's only one */
    buf_free(&c->out);
    free(c);
    if (s->accept_blocked) { /* an fd is free: the clients waiting will bring no new edge */
        s->accept_blocked = false;
        ready_push(s, &s->listener);
    }
}

/* A new connection: registered once, edge-triggered, for both directions. */
static void server_add_conn(struct server *s, int fd)
{
    struct conn *c = calloc(1, sizeof(*c));
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET};

    net_set_nodelay(fd);
    if (!c) {
        fprintf(stderr, "accept(fd=%d): no memory for client fd=%d, closing it\n", s->listener.fd,
                fd);
        close(fd);
        return;
    }
    *c = (struct conn){.w = {.kind = WATCH_CONN, .fd = fd}, .writable = true};
    buf_init(&c->out);
    ev.data.ptr = &c->w;
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        fprintf(stderr, "epoll_ctl(ADD, fd=%d): %s, closing it\n", fd, strerror(errno));
        close(fd);
        free(c);
        return;
    }
    list_insert(&s->conns, &c->link);
}

/* accept() failed for lack of fds or memory: log it (once per streak) and
 * retry when a connection closes, or after ACCEPT_RETRY_MS. */
static void server_accept_failed(struct server *s, int err)
{
    if (err != s->accept_errno)
        fprintf(stderr, "accept(fd=%d): %s: retrying when a connection closes\n", s->listener.fd,
                strerror(err));
    s->accept_errno = err;
    s->accept_blocked = true;
    s->blocked_at = clock_now_ms();
}

static void server_accept(struct server *s)
{
    TODO("accept until EAGAIN; after ACCEPT_BATCH accepts, requeue the listener");
}

int main(int argc, char **argv)
{
    struct server s = {0};
    struct list_node *pos, *tmp;
    struct epoll_event events[MAX_EVENTS];
    struct epoll_event ev = {.events = EPOLLIN};
    struct net_cli cli;
    int err;

    net_cli_parse(&cli, argc, argv, "A single-threaded echo server on edge-triggered epoll.", NULL);
    s.ready_tail = &s.ready;
    list_init(&s.conns);
    s.sig = (struct watch){.kind = WATCH_SIGNAL, .fd = net_signalfd_or_die(SFD_NONBLOCK)};
    s.listener = (struct watch){.kind = WATCH_LISTENER, .fd = net_listen_or_die(&cli, SOMAXCONN)};
    if ((err = net_set_nonblocking(s.listener.fd)) < 0)
        net_die(-err, "fcntl(fd=%d, F_SETFL, O_NONBLOCK)", s.listener.fd);
    if ((s.epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
        net_die(errno, "epoll_create1");
    ev.data.ptr = &s.sig;
    if (epoll_ctl(s.epfd, EPOLL_CTL_ADD, s.sig.fd, &ev) < 0)
        net_die(errno, "epoll_ctl(ADD, fd=%d)", s.sig.fd);
    ev = (struct epoll_event){.events = EPOLLIN | EPOLLET, .data.ptr = &s.listener};
    if (epoll_ctl(s.epfd, EPOLL_CTL_ADD, s.listener.fd, &ev) < 0)
        net_die(errno, "epoll_ctl(ADD, fd=%d)", s.listener.fd);

    for (bool stop = false; !stop;) {
        long long left = s.blocked_at + ACCEPT_RETRY_MS - clock_now_ms();
        int timeout = s.ready            ? 0 /* work waits: only look */
                      : s.accept_blocked ? (left > 0 ? (int)left : 0)
                                         : -1;
        int n = epoll_wait(s.epfd, events, MAX_EVENTS, timeout);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            net_die(errno, "epoll_wait(epfd=%d, %d)", s.epfd, MAX_EVENTS);
        for (int i = 0; i < n; i++) {
            struct watch *w = events[i].data.ptr;
            uint32_t e = events[i].events;
            if (w->kind == WATCH_SIGNAL) {
                stop = true;
                continue;
            }
            if (w->kind == WATCH_CONN) { /* record what the edge said; the turn acts on it */
                struct conn *c = (struct conn *)w;
                if (e & (EPOLLERR | EPOLLHUP)) /* the next read() or write() reports it */
                    e |= EPOLLIN | EPOLLOUT;
                c->readable |= (e & EPOLLIN) != 0;
                c->writable |= (e & EPOLLOUT) != 0;
            }
            ready_push(&s, w);
        }
        if (s.accept_blocked && clock_now_ms() - s.blocked_at >= ACCEPT_RETRY_MS) {
            s.accept_blocked = false;
            ready_push(&s, &s.listener);
        }
        /* One turn for each watch on the ready list now; requeued ones wait. */
        struct watch *w = s.ready;
        s.ready = NULL;
        s.ready_tail = &s.ready;
        while (w) {
            struct watch *next = w->ready_next;
            w->queued = false;
            if (w->kind == WATCH_LISTENER)
                server_accept(&s);
            else if (conn_turn(&s, (struct conn *)w) == CONN_CLOSE)
                server_drop(&s, (struct conn *)w);
            else if (buf_len(&((struct conn *)w)->out) == 0)
                buf_free(&((struct conn *)w)->out); /* drained: an idle connection holds none */
            w = next;
        }
    }

    list_for_each_safe(pos, tmp, &s.conns) {
        struct conn *c = list_entry(pos, struct conn, link);
        close(c->w.fd);
        buf_free(&c->out);
        free(c);
    }
    close(s.epfd);
    close(s.listener.fd);
    close(s.sig.fd);
    return 0;
}
