/* SPDX-License-Identifier: MIT */
/* conn.c: what echo-epoll-lt does with a connection epoll reported (see conn.h).
 *
 * Every socket is non-blocking: a call either does some work or fails at
 * once with EAGAIN, and the loop goes on with the other clients.
 */
#include "conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct conn *conn_new(int fd)
{
    struct conn *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->w.kind = WATCH_CONN;
    c->w.fd = fd;
    buf_init(&c->out);
    return c;
}

void conn_free(struct conn *c)
{
    close(c->w.fd);
    buf_free(&c->out);
    free(c);
}

int conn_register(struct conn *c, int epfd)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = &c->w};

    if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->w.fd, &ev) < 0)
        return -errno;
    c->registered = ev.events;
    return 0;
}

/* A reset or a broken pipe is ordinary for a server: log why the connection
 * ended, and carry on. */
static enum conn_status conn__fail(const struct conn *c, const char *call, int err)
{
    fprintf(stderr, "%s(fd=%d): %s\n", call, c->w.fd, strerror(err));
    return CONN_CLOSE;
}

/* snippet: flush */
/* Send pending output until it is all out or the socket is full. A short
 * write keeps the rest in c->out, in order; conn_wanted_events() then asks
 * for EPOLLOUT. buf_flush() is chapter 03's write loop, from common/buf.c. */
static enum conn_status conn__flush(struct conn *c)
{
    int err = buf_flush(&c->out, c->w.fd);

    if (err == -EAGAIN)
        return CONN_KEEP; /* the rest waits for EPOLLOUT */
    if (err < 0)
        return conn__fail(c, "write", -err);
    /* Drained: give the buffer back, so an idle connection holds none. */
    buf_free(&c->out);
    /* After the client's EOF nothing more will come: close. */
    return c->peer_eof ? CONN_CLOSE : CONN_KEEP;
}
/* end snippet */

/* snippet: readable */
/* Read once, then try to echo at once: the socket is almost always writable,
 * and writing now saves a trip through epoll_wait().
 *
 * EPOLLRDHUP says the client has half-closed: everything it will ever send
 * is already here, followed by EOF. Then reading on until EOF (within the
 * backpressure bound) finishes the connection in this turn instead of the
 * next. It is a hint that saves a wake-up; read() returning 0 stays the one
 * sure sign of EOF, and this server would be correct without EPOLLRDHUP. */
static enum conn_status conn__on_readable(struct conn *c, bool rdhup)
{
    do {
        ssize_t n = buf_read_from(&c->out, c->w.fd, CONN_READ_CHUNK);
        if (n == -EAGAIN)
            break; /* readiness is a hint, not a promise */
        if (n < 0)
            return conn__fail(c, "read", (int)-n);
        if (n == 0) {
            c->peer_eof = true; /* echo what we have, then close */
            break;
        }
    } while (rdhup && buf_len(&c->out) < CONN_PENDING_MAX);
    return conn__flush(c);
}
/* end snippet */

/* snippet: events */
enum conn_status conn_on_events(struct conn *c, uint32_t events)
{
    /* EPOLLERR and EPOLLHUP come whether asked for or not. Treat them as the
     * events we did ask for: the read() or write() then returns the error or
     * the EOF, and the connection ends the ordinary way. */
    if (events & (EPOLLERR | EPOLLHUP))
        events |= c->registered;
    if (events & EPOLLIN)
        return conn__on_readable(c, events & EPOLLRDHUP); /* reads, then writes */
    if (events & EPOLLOUT)
        return conn__flush(c);
    return CONN_KEEP;
}
/* end snippet */

/* snippet: interest */
int conn_update_interest(struct conn *c, int epfd)
{
    struct epoll_event ev = {.events = conn_wanted_events(c), .data.ptr = &c->w};

    if (ev.events == c->registered)
        return 0; /* the common case: echoed at once, still EPOLLIN: no system call */
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->w.fd, &ev) < 0)
        return -errno;
    c->registered = ev.events;
    return 0;
}
/* end snippet */
