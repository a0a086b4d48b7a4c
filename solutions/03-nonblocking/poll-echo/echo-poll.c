/* SPDX-License-Identifier: MIT */
/* echo-poll (exercise poll-echo): the write path of a poll() echo server.
 *
 * This is chapters/03-nonblocking/echo-poll.c with conn.c folded in, so the
 * whole server is in one file. Two parts are yours:
 *
 *   1. conn_flush_pending(): send the pending output. write() on a
 *      non-blocking socket may take all of it, part of it (a short write),
 *      or nothing (-1 EAGAIN). Keep what it did not take, in order.
 *   2. conn_poll_events(): what poll() must watch for this client. POLLOUT
 *      only while output is pending (asking for it with nothing to write
 *      wakes poll() at once, forever), and POLLIN only while the client may
 *      still send and its pending output is under the bound (backpressure).
 *
 *     make ex EX=03-nonblocking/poll-echo      (build and test your copy)
 *     build/exercises/03-nonblocking/poll-echo/echo-poll -p 0
 */
#include "buf.h"
#include "net.h"
#include "todo.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CONN_READ_CHUNK  (64 * 1024)   /* room asked for on each read */
#define CONN_PENDING_MAX (1024 * 1024) /* stop reading above this much unsent echo */

#define SLOT_STOP       0
#define SLOT_LISTEN     1
#define SLOT_FIRST_CONN 2
#define ACCEPT_BATCH    64

struct conn {
    int fd;         /* non-blocking, close-on-exec */
    bool peer_eof;  /* the client half-closed: send what is pending, then close */
    struct buf out; /* bytes read from the client, not yet echoed back */
};

enum conn_status { CONN_KEEP, CONN_CLOSE };

struct server {
    struct pollfd *pfds; /* what poll() watches; pfds[i] belongs to conns[i] */
    struct conn **conns; /* NULL in the stop and listener slots */
    size_t n, cap;
    int accept_errno; /* last accept() error logged */
};

static struct conn *conn_new(int fd)
{
    struct conn *c = calloc(1, sizeof(*c));

    if (c) {
        c->fd = fd;
        buf_init(&c->out);
    }
    return c;
}

static void conn_free(struct conn *c)
{
    close(c->fd);
    buf_free(&c->out);
    free(c);
}

static enum conn_status conn_fail(const struct conn *c, const char *call, int err)
{
    fprintf(stderr, "%s(fd=%d): %s\n", call, c->fd, strerror(err));
    return CONN_CLOSE;
}

/* Send pending output. Returns CONN_KEEP while the connection goes on (also
 * when the socket is full and bytes remain), CONN_CLOSE on a write error, or
 * when everything is sent and the client has half-closed. */
static enum conn_status conn_flush_pending(struct conn *c)
{
    /* EXERCISE BEGIN: write until empty or EAGAIN, keep the rest, close on a write error */
    while (buf_len(&c->out) > 0) {
        ssize_t n = write(c->fd, buf_peek(&c->out), buf_len(&c->out));
        if (n > 0) {
            buf_consume(&c->out, (size_t)n); /* short write: the rest stays queued */
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return CONN_KEEP; /* full: conn_poll_events() asks for POLLOUT */
        return conn_fail(c, "write", n < 0 ? errno : EIO);
    }
    /* EXERCISE END */
    /* Drained: give the buffer back, so an idle connection holds none
     * (common/buf.c keeps its allocation otherwise), and after the client's
     * EOF nothing more will come: close. */
    buf_free(&c->out);
    return c->peer_eof ? CONN_CLOSE : CONN_KEEP;
}

static enum conn_status conn_on_readable(struct conn *c)
{
    ssize_t n = buf_read_from(&c->out, c->fd, CONN_READ_CHUNK);

    if (n == -EAGAIN)
        return CONN_KEEP;
    if (n < 0)
        return conn_fail(c, "read", (int)-n);
    if (n == 0)
        c->peer_eof = true;
    return conn_flush_pending(c); /* the socket is usually writable: try now */
}

/* What poll() must watch for this client, from its state after every event. */
static short conn_poll_events(const struct conn *c)
{
    short events = 0;

    /* EXERCISE BEGIN: POLLIN before EOF and under the bound, POLLOUT only while output waits */
    if (!c->peer_eof && buf_len(&c->out) < CONN_PENDING_MAX)
        events |= POLLIN;
    if (buf_len(&c->out) > 0)
        events |= POLLOUT;
    /* EXERCISE END */
    return events;
}

static int server_add_slot(struct server *s, int fd, struct conn *c, short events)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct pollfd *pfds = realloc(s->pfds, cap * sizeof(*pfds));
        if (!pfds)
            return -ENOMEM;
        s->pfds = pfds;
        struct conn **conns = realloc(s->conns, cap * sizeof(*conns));
        if (!conns)
            return -ENOMEM;
        s->conns = conns;
        s->cap = cap;
    }
    s->pfds[s->n] = (struct pollfd){.fd = fd, .events = events};
    s->conns[s->n] = c;
    s->n++;
    return 0;
}

/* Close slot i's connection and fill the hole with the last slot. */
static void server_drop(struct server *s, size_t i)
{
    conn_free(s->conns[i]);
    s->n--;
    s->pfds[i] = s->pfds[s->n];
    s->conns[i] = s->conns[s->n];
}

static void server_accept(struct server *s)
{
    int lfd = s->pfds[SLOT_LISTEN].fd;

    for (int k = 0; k < ACCEPT_BATCH; k++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && errno == EINTR)
            continue;
        if (fd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (fd < 0) { /* EMFILE and the like: see the chapter, and chapter 04 */
            if (errno != s->accept_errno)
                fprintf(stderr, "accept(fd=%d): %s\n", lfd, strerror(errno));
            s->accept_errno = errno;
            return;
        }
        s->accept_errno = 0;
        struct conn *c = conn_new(fd);
        if (!c || server_add_slot(s, fd, c, conn_poll_events(c)) < 0) {
            fprintf(stderr, "accept(fd=%d): no memory for client fd=%d, closing it\n", lfd, fd);
            if (c)
                conn_free(c);
            else
                close(fd);
        }
    }
}

static void server_serve(struct server *s, size_t i)
{
    struct pollfd *p = &s->pfds[i];
    short re = p->revents;
    enum conn_status st = CONN_KEEP;

    if (re & POLLNVAL) {
        fprintf(stderr, "poll: fd=%d is not open\n", p->fd);
        server_drop(s, i);
        return;
    }
    if (re & (POLLERR | POLLHUP)) /* the next read() or write() reports it */
        re |= p->events;
    if (re & POLLIN)
        st = conn_on_readable(s->conns[i]);
    else if (re & POLLOUT)
        st = conn_flush_pending(s->conns[i]);

    if (st == CONN_CLOSE)
        server_drop(s, i);
    else
        p->events = conn_poll_events(s->conns[i]);
}

int main(int argc, char **argv)
{
    struct net_cli cli;
    struct server s = {0};
    int stop_fd, lfd, err, status = 0;

    net_cli_parse(&cli, argc, argv, "A single-threaded echo server on poll().", NULL);
    if ((stop_fd = net_stop_pipe()) < 0)
        net_die(-stop_fd, "pipe2(stop pipe)");
    lfd = net_listen_or_die(&cli, SOMAXCONN);
    if ((err = net_set_nonblocking(lfd)) < 0)
        net_die(-err, "fcntl(fd=%d, F_SETFL, O_NONBLOCK)", lfd);
    if (server_add_slot(&s, stop_fd, NULL, POLLIN) < 0 ||
        server_add_slot(&s, lfd, NULL, POLLIN) < 0)
        net_die(ENOMEM, "pollfd array");

    for (;;) {
        if (poll(s.pfds, s.n, -1) < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "poll(%zu fds): %s\n", s.n, strerror(errno));
            status = 1;
            break;
        }
        if (s.pfds[SLOT_STOP].revents)
            break;
        for (size_t i = s.n; i-- > SLOT_FIRST_CONN;) /* from the end: see server_drop() */
            if (s.pfds[i].revents)
                server_serve(&s, i);
        if (s.pfds[SLOT_LISTEN].revents & POLLIN)
            server_accept(&s);
    }

    for (size_t i = SLOT_FIRST_CONN; i < s.n; i++)
        conn_free(s.conns[i]);
    free(s.pfds);
    free(s.conns);
    close(lfd);
    net_stop_pipe_close(stop_fd);
    return status;
}
