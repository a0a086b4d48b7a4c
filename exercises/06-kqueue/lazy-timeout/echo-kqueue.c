/* SPDX-License-Identifier: MIT */
/* echo-kqueue.c: the echo server on kqueue(2), the BSD and macOS event queue.
 *
 * Written only against the BSD API (<sys/event.h>) and POSIX, plus the
 * course's net.h and buf.h. On FreeBSD and macOS it uses the system's kqueue;
 * on Linux the same source builds against common/kqueue-linux, which maps
 * kqueue onto epoll, timerfd, signalfd and eventfd.
 *
 *     make -C chapters/06-kqueue
 *     build/chapters/06-kqueue/echo-kqueue -p 0 [-t SECS] [-L]
 *     build/common/tools/echo-client -p PORT hello      (from another terminal)
 *
 * What it shows, beyond chapter 04's epoll server:
 *   - one kevent() call both submits the changes collected while handling the
 *     last batch of events (the changelist) and waits for the next batch;
 *   - READ and WRITE are separate knotes of a socket, enabled and disabled
 *     on their own (EV_ENABLE/EV_DISABLE), each handing back the connection
 *     pointer in udata;
 *   - `data` sizes each read (bytes waiting) and each accept batch
 *     (connections waiting);
 *   - EVFILT_TIMER closes connections idle for -t seconds (0: never), and
 *     backs off when accept() runs out of fds. By default every read
 *     restarts the connection's timer; with -L the timer is left alone
 *     while the client is active, and looked at only when it fires (the
 *     lazy timeout, exercise lazy-timeout);
 *   - EVFILT_SIGNAL turns SIGINT and SIGTERM into events: no handler, no
 *     self-pipe.
 */
#include "todo.h"
#include "buf.h"
#include "clock.h"
#include "list.h"
#include "net.h"

#include <sys/event.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* macOS's <sys/event.h> has no NOTE_MSECONDS (its 0x2 means microseconds):
 * there, as on FreeBSD, a timer whose fflags name no unit counts in
 * milliseconds. FreeBSD and the Linux layer define it. */
#ifndef NOTE_MSECONDS
#define NOTE_MSECONDS 0
#endif

#define MAX_EVENTS     64
#define MAX_CHANGES    256
#define ACCEPT_BATCH   64
#define READ_MAX       (256 * 1024)  /* bytes read per event, at most */
#define PENDING_MAX    (1024 * 1024) /* backpressure: stop reading above this */
#define RETRY_TIMER    UINTPTR_MAX   /* timer ident: retry accept() after EMFILE */
#define RETRY_MS       100
#define DEFAULT_IDLE_S 60

struct conn {
    int fd;                 /* -1 once closed (its events later in the batch are stale) */
    bool peer_eof;          /* the client half-closed: send what is pending, then close */
    bool reading;           /* EVFILT_READ enabled */
    bool writing;           /* EVFILT_WRITE enabled */
    struct buf out;         /* bytes read, not yet echoed */
    int64_t last_active_ms; /* -L: clock_now_ms() at accept and at each read */
    struct list_node link;  /* in server.conns; once closed, in server.closed */
};

struct server {
    int kq;
    int listen_fd;
    int idle_s;                         /* -t; 0 = never */
    bool lazy;                          /* -L: the idle timer is not restarted by reads */
    struct kevent changes[MAX_CHANGES]; /* sent with the next kevent() */
    int nchanges;
    struct list_node conns;  /* open connections */
    struct list_node closed; /* closed during this batch, freed when it ends */
    bool accept_paused;
};

/* ---- the changelist -------------------------------------------------------- */

/* Changes wait here and go to the kernel with the next kevent() call, which
 * also collects events: one system call for both. When the list is full it
 * is sent on its own, with EV_RECEIPT so that kevent() returns one result
 * per change instead of collecting (and losing) events. */
static void server__flush_changes(struct server *s)
{
    struct kevent res[MAX_CHANGES];
    int n;

    for (int i = 0; i < s->nchanges; i++)
        s->changes[i].flags |= EV_RECEIPT;
    n = kevent(s->kq, s->changes, s->nchanges, res, s->nchanges, NULL);
    if (n < 0)
        net_die(errno, "kevent(kq=%d, %d changes)", s->kq, s->nchanges);
    for (int i = 0; i < n; i++)
        if (res[i].data != 0)
            fprintf(stderr, "kevent(change ident=%lu filter=%d): %s\n", (unsigned long)res[i].ident,
                    res[i].filter, strerror((int)res[i].data));
    s->nchanges = 0;
}

static void server__change(struct server *s, uintptr_t ident, short filter, unsigned short flags,
                           unsigned int fflags, int64_t data, void *udata)
{
    if (s->nchanges == MAX_CHANGES)
        server__flush_changes(s);
    EV_SET(&s->changes[s->nchanges++], ident, filter, flags, fflags, data, udata);
}

/* ---- connections ------------------------------------------------------------- */

/* READ while the client may still send and its echo is under the bound;
 * WRITE only while output is pending. Only changes are queued. */
static void conn_update_interest(struct server *s, struct conn *c)
{
    bool want_read = !c->peer_eof && buf_len(&c->out) < PENDING_MAX;
    bool want_write = buf_len(&c->out) > 0;

    if (want_read != c->reading)
        server__change(s, c->fd, EVFILT_READ, want_read ? EV_ENABLE : EV_DISABLE, 0, 0, c);
    if (want_write != c->writing)
        server__change(s, c->fd, EVFILT_WRITE, want_write ? EV_ENABLE : EV_DISABLE, 0, 0, c);
    c->reading = want_read;
    c->writing = want_write;
}

/* close() deletes the socket's READ and WRITE knotes. The timer is not tied
 * to the fd (its ident is just a number), so it must be deleted by hand, now:
 * queued, the deletion could hit a new connection that gets the same fd in
 * this batch (with -L, ENOENT: its one-shot timer fired and is gone
 * already). The struct lives until the batch ends: events still to be
 * handled in it may point at it (fd == -1 marks them stale). */
static void conn_close(struct server *s, struct conn *c)
{
    struct kevent del;
    int j = 0;

    if (s->idle_s > 0) {
        EV_SET(&del, c->fd, EVFILT_TIMER, EV_DELETE, 0, 0, NULL);
        if (kevent(s->kq, &del, 1, NULL, 0, NULL) < 0 && errno != ENOENT)
            fprintf(stderr, "kevent(EV_DELETE timer %d): %s\n", c->fd, strerror(errno));
    }
    for (int i = 0; i < s->nchanges; i++) /* drop its queued changes */
        if (s->changes[i].udata != c)
            s->changes[j++] = s->changes[i];
    s->nchanges = j;
    close(c->fd);
    c->fd = -1;
    list_remove(&c->link);
    list_insert(&s->closed, &c->link);
    if (s->accept_paused) { /* an fd is free again */
        server__change(s, s->listen_fd, EVFILT_READ, EV_ENABLE, 0, 0, NULL);
        s->accept_paused = false;
    }
}

static void conn_fail(struct server *s, struct conn *c, const char *call, int err)
{
    fprintf(stderr, "%s(fd=%d): %s\n", call, c->fd, strerror(err));
    conn_close(s, c);
}

/* The client was active (a read). By default its idle timer starts again:
 * adding a timer that exists restarts it. */
static void conn_touch(struct server *s, struct conn *c)
{
    if (s->idle_s == 0)
        return;
    if (!s->lazy) {
        server__change(s, c->fd, EVFILT_TIMER, EV_ADD, NOTE_SECONDS, s->idle_s, c);
        return;
    }
    TODO("remember when the client was last active, with no system call");
}

/* The connection's idle timer fired: has the client been silent for the
 * whole timeout? By default, yes: every read restarted the timer. With -L
 * the timer is one-shot, armed when the connection was accepted or when it
 * last fired, and reads did not touch it: look at when the client was last
 * active, and if that was less than the timeout ago, arm the timer again
 * for the time left. */
static bool conn_idle_expired(struct server *s, struct conn *c)
{
    if (!s->lazy)
        return true;
    TODO("idle the whole timeout: true; else re-arm for the rest: false");
}

/* Send pending output. Returns false when the connection was closed. */
static bool conn_flush(struct server *s, struct conn *c)
{
    int r = buf_flush(&c->out, c->fd);

    if (r < 0 && r != -EAGAIN) {
        conn_fail(s, c, "write", -r);
        return false;
    }
    /* Drained: an idle connection holds no buffer. */
    if (r == 0)
        buf_free(&c->out);
    if (r == 0 && c->peer_eof) { /* all echoed after the client's EOF */
        conn_close(s, c);
        return false;
    }
    return true;
}

static void conn_on_readable(struct server *s, struct conn *c, const struct kevent *ev)
{
    /* data: the bytes waiting. Read them in one go (up to a bound). */
    size_t want = ev->data > 0 ? (size_t)ev->data : 1;
    ssize_t n;

    if ((ev->flags & EV_EOF) && ev->fflags != 0) { /* reset: fflags is the error */
        conn_fail(s, c, "read", (int)ev->fflags);
        return;
    }
    n = buf_read_from(&c->out, c->fd, want < READ_MAX ? want : READ_MAX);
    if (n == -EAGAIN)
        return;
    if (n < 0) {
        conn_fail(s, c, "read", (int)-n);
        return;
    }
    if (n == 0)
        c->peer_eof = true;
    else
        conn_touch(s, c);
    if (conn_flush(s, c)) /* write at once: the socket is almost always writable */
        conn_update_interest(s, c);
}

/* ---- accepting --------------------------------------------------------------- */

/* Out of fds: stop watching the listener (level-triggered, it would report
 * the waiting connections at once, forever) and retry in RETRY_MS, or as soon
 * as a connection closes. The retry timer exists from the start: on Linux
 * a kqueue's first timer opens the one timerfd all its timers share, which
 * could not be opened now. */
static void server__pause_accept(struct server *s)
{
    server__change(s, s->listen_fd, EVFILT_READ, EV_DISABLE, 0, 0, NULL);
    server__change(s, RETRY_TIMER, EVFILT_TIMER, EV_ADD | EV_ENABLE, 0, RETRY_MS, NULL);
    s->accept_paused = true;
}

/* A new connection's knotes, in one call: READ, WRITE (disabled until there
 * is output), and its idle timer. EV_RECEIPT gives one result per change.
 * Returns false when the socket itself cannot be watched. When only the
 * timer fails (ENOMEM; or EMFILE, had the retry timer not opened the
 * timers' one timerfd at startup), the client is kept and served without
 * one (its next read adds one), and *out_of_fds pauses accepting: closing it
 * would reset it, and the next accept() would take the freed fd and fail the
 * same way. */
static bool server__register(struct server *s, struct conn *c, bool *out_of_fds)
{
    struct kevent ch[3], res[3];
    int n = 0, got;

    EV_SET(&ch[n++], c->fd, EVFILT_READ, EV_ADD | EV_RECEIPT, 0, 0, c);
    EV_SET(&ch[n++], c->fd, EVFILT_WRITE, EV_ADD | EV_DISABLE | EV_RECEIPT, 0, 0, c);
    if (s->idle_s > 0)
        EV_SET(&ch[n++], c->fd, EVFILT_TIMER, EV_ADD | EV_RECEIPT | (s->lazy ? EV_ONESHOT : 0),
               NOTE_SECONDS, s->idle_s, c);
    if ((got = kevent(s->kq, ch, n, res, n, NULL)) < 0)
        net_die(errno, "kevent(kq=%d, register fd=%d)", s->kq, c->fd);
    *out_of_fds = false;
    for (int i = 0; i < got; i++) {
        if (res[i].data == 0)
            continue;
        fprintf(stderr, "kevent(EV_ADD filter=%d fd=%d): %s\n", res[i].filter, c->fd,
                strerror((int)res[i].data));
        if (res[i].filter != EVFILT_TIMER)
            return false;
        *out_of_fds = true;
    }
    c->reading = true;
    return true;
}

static void server__accept(struct server *s, const struct kevent *ev)
{
    /* data: how many connections wait in the backlog */
    int64_t todo = ev->data < ACCEPT_BATCH ? ev->data : ACCEPT_BATCH;
    bool out_of_fds;

    for (int64_t k = 0; k < (todo > 0 ? todo : 1); k++) {
        int fd = accept(s->listen_fd, NULL, NULL);
        if (fd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED))
            return;
        if (fd < 0 && errno == EINTR)
            continue;
        if (fd < 0) {
            fprintf(stderr, "accept(fd=%d): %s\n", s->listen_fd, strerror(errno));
            if (errno == EMFILE || errno == ENFILE)
                server__pause_accept(s);
            return;
        }
        struct conn *c = calloc(1, sizeof(*c));
        if (!c || net_set_nonblocking(fd) < 0 || net_set_nodelay(fd) < 0) {
            fprintf(stderr, "accept(fd=%d): cannot set up client fd=%d, closing it\n", s->listen_fd,
                    fd);
            free(c);
            close(fd);
            continue;
        }
        c->fd = fd;
        c->last_active_ms = s->lazy ? clock_now_ms() : 0;
        buf_init(&c->out);
        list_insert(&s->conns, &c->link);
        if (!server__register(s, c, &out_of_fds)) {
            conn_close(s, c);
            continue;
        }
        if (out_of_fds) {
            server__pause_accept(s);
            return;
        }
    }
}

/* ---- the loop ------------------------------------------------------------------ */

/* Returns false when the server must stop. */
static bool server__handle(struct server *s, const struct kevent *ev)
{
    struct conn *c = ev->udata;

    if (ev->flags & EV_ERROR) { /* a queued change failed */
        fprintf(stderr, "kevent(change ident=%lu filter=%d): %s\n", (unsigned long)ev->ident,
                ev->filter, strerror((int)ev->data));
        return true;
    }
    switch (ev->filter) {
    case EVFILT_SIGNAL:
        return false;
    case EVFILT_TIMER:
        if (ev->ident == RETRY_TIMER) {
            server__change(s, RETRY_TIMER, EVFILT_TIMER, EV_DISABLE, 0, 0, NULL);
            server__change(s, s->listen_fd, EVFILT_READ, EV_ENABLE, 0, 0, NULL);
            s->accept_paused = false;
        } else if (c->fd >= 0 && conn_idle_expired(s, c)) {
            fprintf(stderr, "closing fd=%d: idle for %d s\n", c->fd, s->idle_s);
            conn_close(s, c);
        }
        return true;
    case EVFILT_READ:
        if (!c)
            server__accept(s, ev);
        else if (c->fd >= 0)
            conn_on_readable(s, c, ev);
        return true;
    case EVFILT_WRITE:
        if (c->fd >= 0 && conn_flush(s, c))
            conn_update_interest(s, c);
        return true;
    default:
        return true;
    }
}

static void server__free_closed(struct server *s)
{
    while (!list_empty(&s->closed)) {
        struct conn *c = list_first_entry(&s->closed, struct conn, link);
        list_remove(&c->link);
        buf_free(&c->out);
        free(c);
    }
}

static int server__on_opt(int opt, const char *arg, void *ctx)
{
    struct server *s = ctx;
    long v;

    if (opt == 'L') {
        s->lazy = true;
        return 0;
    }
    if (opt != 't' || net_parse_int(arg, 0, 86400, &v) < 0)
        return -1;
    s->idle_s = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    struct server server = {0}, *s = &server;
    struct kevent events[MAX_EVENTS];
    struct net_cli cli;
    struct net_cli_extra extra = {
        .optstring = "t:L",
        .usage = "  -t SECS   close connections idle this long (default 60, 0 = never)\n"
                 "  -L        lazy idle timeouts: reads do not restart the timer; when it\n"
                 "            fires, it is armed again for what is left if the client was active\n",
        .on_opt = server__on_opt,
    };
    int status = 0;

    s->idle_s = DEFAULT_IDLE_S;
    list_init(&s->conns);
    list_init(&s->closed);
    extra.ctx = s;
    net_cli_parse(&cli, argc, argv, "An echo server on kqueue.", &extra);
    if ((s->kq = kqueue()) < 0)
        net_die(errno, "kqueue()");

    /* The BSD way to catch signals with kqueue: ignore them (so they do not
     * kill us), and watch them with EVFILT_SIGNAL, which still sees them.
     * Registered now, not queued with the other changes: once the port is
     * printed a signal may come at any moment, and an ignored signal that
     * no filter watches yet is simply gone. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    server__change(s, SIGINT, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL);
    server__change(s, SIGTERM, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL);
    server__flush_changes(s);
    s->listen_fd = net_listen_or_die(&cli, SOMAXCONN);
    if (net_set_nonblocking(s->listen_fd) < 0)
        net_die(errno, "fcntl(fd=%d, O_NONBLOCK)", s->listen_fd);
    server__change(s, s->listen_fd, EVFILT_READ, EV_ADD, 0, 0, NULL);
    server__change(s, RETRY_TIMER, EVFILT_TIMER, EV_ADD | EV_DISABLE, 0, RETRY_MS, NULL);
    server__flush_changes(s);

    for (bool running = true; running;) {
        int n = kevent(s->kq, s->changes, s->nchanges, events, MAX_EVENTS, NULL);
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "kevent(kq=%d): %s\n", s->kq, strerror(errno));
            status = 1;
            break;
        }
        s->nchanges = 0; /* applied, even when a signal interrupted the wait */
        for (int i = 0; i < n && running; i++)
            running = server__handle(s, &events[i]);
        server__free_closed(s);
    }

    /* Shut down: every connection, then the listener and the queue. */
    while (!list_empty(&s->conns))
        conn_close(s, list_first_entry(&s->conns, struct conn, link));
    server__free_closed(s);
    close(s->listen_fd);
    close(s->kq);
    return status;
}
