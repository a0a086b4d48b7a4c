/* SPDX-License-Identifier: MIT */
/* loop.c: an edge-triggered epoll loop with a ready list of its own.
 *
 * Every fd is registered once and never modified:
 *   listener     EPOLLIN | EPOLLET
 *   connection   EPOLLIN | EPOLLOUT | EPOLLET   (what .NET registers, too)
 *   signalfd     EPOLLIN, level-triggered: it stays readable (nobody reads
 *                it), so every loop watching it sees it, however many there are
 *
 * With EPOLLET the kernel reports a change once. A loop that stops short of
 * EAGAIN, because a client used up its read budget or the accept batch was
 * spent, must itself remember that work is left: no second event will come.
 * That memory is the ready list, a FIFO of watches. One turn:
 *   1. epoll_wait(): sleep (timeout -1) only when the ready list is empty,
 *      otherwise just look (timeout 0) and go on;
 *   2. every event records its readiness and appends its watch to the list;
 *   3. every watch on the list gets one turn, and whatever still has work
 *      goes to the back, behind the others.
 * libuv, tokio and .NET all keep such a list (see the README).
 */
#include "loop.h"
#include "clock.h"
#include "net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_EVENTS      128  /* events taken per epoll_wait() */
#define ACCEPT_BATCH    64   /* accepts per turn, so a flood of clients cannot starve the others */
#define ACCEPT_RETRY_MS 1000 /* out of fds: try accept() again after this long anyway */

/* snippet: push */
/* Append w to the ready list, unless it is on it already. */
static void loop__push(struct loop *l, struct watch *w)
{
    /* EXERCISE BEGIN ready-list: append w to the ready list unless it is on it already */
    if (w->queued)
        return;
    w->queued = true;
    w->ready_next = NULL;
    *l->ready_tail = w;
    l->ready_tail = &w->ready_next;
    /* EXERCISE END */
}
/* end snippet */

/* Out of fds, accept() stopped; try again now. */
static void loop__retry_accept(struct loop *l)
{
    l->accept_blocked = false;
    loop__push(l, &l->listener);
}

static void loop__drop(struct loop *l, struct conn *c)
{
    list_remove(&c->link);
    conn_close(c);
    free(c);
    /* An fd is free again. The clients waiting in the backlog since EMFILE
     * will bring no new edge: go and accept them. */
    if (l->accept_blocked)
        loop__retry_accept(l);
}

static void loop__add_conn(struct loop *l, int fd)
{
    struct conn *c = malloc(sizeof(*c));
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET};

    if (!c) {
        fprintf(stderr, "accept(fd=%d): no memory for client fd=%d, closing it\n", l->listener.fd,
                fd);
        close(fd);
        return;
    }
    conn_init(c, fd);
    ev.data.ptr = &c->w;
    /* ADD reports what is already true, edge-triggered or not: bytes that
     * arrived before this call come as the first event, not never. */
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        fprintf(stderr, "epoll_ctl(ADD, fd=%d): %s, closing it\n", fd, strerror(errno));
        conn_close(c);
        free(c);
        return;
    }
    list_insert(&l->conns, &c->link);
    l->stats.accepted++;
}

/* snippet: accept */
/* Accept until EAGAIN, at most ACCEPT_BATCH at a time. */
static void loop__accept(struct loop *l)
{
    /* EXERCISE BEGIN accept-drain: accept until EAGAIN, at most ACCEPT_BATCH, then requeue */
    for (int k = 0; k < ACCEPT_BATCH; k++) {
        int fd = accept4(l->listener.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            net_set_nodelay(fd); /* echo small messages at once, no Nagle delay */
            loop__add_conn(l, fd);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            l->accept_errno = 0; /* the backlog is empty: the next client brings a new edge */
            return;
        }
        /* EMFILE, ENFILE, ENOBUFS, ENOMEM. No busy loop to fear here: with
         * EPOLLET the listener is not reported again for the clients already
         * waiting. The danger is the opposite, forgetting them: retry when a
         * connection closes (loop__drop), or after ACCEPT_RETRY_MS. */
        if (errno != l->accept_errno)
            fprintf(stderr, "accept(fd=%d): %s: retrying when a connection closes\n",
                    l->listener.fd, strerror(errno));
        l->accept_errno = errno;
        l->accept_blocked = true;
        l->blocked_at = clock_now_ms();
        return;
    }
    loop__push(l, &l->listener); /* batch spent, more may wait: no edge will say so */
    /* EXERCISE END */
}
/* end snippet */

/* snippet: serve */
/* One turn for one watch taken off the ready list. */
static void loop__serve(struct loop *l, struct watch *w)
{
    if (w->kind == WATCH_LISTENER) {
        loop__accept(l);
        return;
    }
    struct conn *c = (struct conn *)w;
    enum conn_status st = conn_run(c, l->read_budget);

    if (c->turn_reads > l->stats.longest_turn)
        l->stats.longest_turn = c->turn_reads;
    if (st == CONN_CLOSE) {
        loop__drop(l, c);
        return;
    }
    if (!conn_has_work(c))
        return; /* drained to EAGAIN, or waiting for EPOLLOUT: the next edge wakes it */
    if (l->forget) {
        c->readable = false; /* -S: treat the event as used up, like a level-triggered loop */
        return;
    }
    l->stats.requeued++;
    loop__push(l, w); /* the budget ran out with data left: no edge will come for it */
}
/* end snippet */

/* How long epoll_wait() may sleep: not at all while work waits on the ready
 * list; until the retry time while accept() is blocked; else for ever. */
static int loop__timeout_ms(const struct loop *l)
{
    long long left = l->blocked_at + ACCEPT_RETRY_MS - clock_now_ms();

    if (l->ready)
        return 0;
    if (!l->accept_blocked)
        return -1;
    return left > 0 ? (int)left : 0;
}

void loop_init(struct loop *l, int listen_fd, int sig_fd, int read_budget, bool forget)
{
    struct epoll_event ev = {.events = EPOLLIN};
    int err;

    *l = (struct loop){
        .listener = {.kind = WATCH_LISTENER, .fd = listen_fd},
        .sig = {.kind = WATCH_SIGNAL, .fd = sig_fd},
        .read_budget = read_budget,
        .forget = forget,
    };
    l->ready_tail = &l->ready;
    list_init(&l->conns);
    if ((err = net_set_nonblocking(listen_fd)) < 0)
        net_die(-err, "fcntl(fd=%d, F_SETFL, O_NONBLOCK)", listen_fd);
    if ((l->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
        net_die(errno, "epoll_create1");
    ev.data.ptr = &l->sig;
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, sig_fd, &ev) < 0)
        net_die(errno, "epoll_ctl(ADD, fd=%d)", sig_fd);
    ev = (struct epoll_event){.events = EPOLLIN | EPOLLET, .data.ptr = &l->listener};
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, listen_fd, &ev) < 0)
        net_die(errno, "epoll_ctl(ADD, fd=%d)", listen_fd);
}

/* snippet: run */
void loop_run(struct loop *l)
{
    struct epoll_event events[MAX_EVENTS];

    for (bool stop = false; !stop;) {
        int n = epoll_wait(l->epfd, events, MAX_EVENTS, loop__timeout_ms(l));

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            net_die(errno, "epoll_wait(epfd=%d, %d)", l->epfd, MAX_EVENTS);
        for (int i = 0; i < n; i++) {
            struct watch *w = events[i].data.ptr;
            if (w->kind == WATCH_SIGNAL) {
                stop = true; /* finish this turn, then leave */
                continue;
            }
            if (w->kind == WATCH_CONN)
                conn_on_events((struct conn *)w, events[i].events);
            loop__push(l, w);
        }
        if (l->accept_blocked && clock_now_ms() - l->blocked_at >= ACCEPT_RETRY_MS)
            loop__retry_accept(l); /* ENFILE and the like: time to try again */

        /* One turn for each watch queued now; those requeued wait for the next. */
        /* EXERCISE BEGIN ready-list: take the whole ready list, give each watch one turn */
        struct watch *w = l->ready;
        l->ready = NULL;
        l->ready_tail = &l->ready;
        while (w) {
            struct watch *next = w->ready_next;
            w->queued = false;
            loop__serve(l, w); /* may free w, never another watch */
            w = next;
        }
        /* EXERCISE END */
    }
}
/* end snippet */

void loop_close(struct loop *l)
{
    struct list_node *n, *next;

    list_for_each_safe(n, next, &l->conns) {
        struct conn *c = list_entry(n, struct conn, link);
        conn_close(c);
        free(c);
    }
    close(l->epfd);
    close(l->listener.fd);
}
