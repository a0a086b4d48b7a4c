/* SPDX-License-Identifier: MIT */
/* conn.c: what this chapter's echo servers do with a ready socket (see conn.h).
 *
 * Every call here is made on a non-blocking socket, so none of them can put
 * the one thread of the server to sleep: a call either does some work or
 * fails at once with EAGAIN, and the event loop moves on to other clients.
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
    c->fd = fd;
    buf_init(&c->out);
    return c;
}

void conn_free(struct conn *c)
{
    close(c->fd);
    buf_free(&c->out);
    free(c);
}

/* A client that resets its connection is ordinary; it is logged so the
 * reason a connection ended is visible, and the server carries on. */
static enum conn_status conn__fail(const struct conn *c, const char *call, int err)
{
    fprintf(stderr, "%s(fd=%d): %s\n", call, c->fd, strerror(err));
    return CONN_CLOSE;
}

/* snippet: flush */
/* Write pending output until it is all out or the kernel will take no more.
 * common/buf.c has the same loop as buf_flush(); it is spelled out here
 * because it is what this chapter is about. */
static enum conn_status conn__flush_pending(struct conn *c)
{
    while (buf_len(&c->out) > 0) {
        ssize_t n = write(c->fd, buf_peek(&c->out), buf_len(&c->out));
        if (n > 0) {
            buf_consume(&c->out, (size_t)n); /* short write: the rest stays queued */
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return CONN_KEEP; /* send buffer full: conn_wants_write() is now true */
        return conn__fail(c, "write", n < 0 ? errno : EIO);
    }
    /* Drained: give the buffer back, so an idle connection holds none. */
    buf_free(&c->out);
    /* After the client's EOF nothing more will come: close. */
    return c->peer_eof ? CONN_CLOSE : CONN_KEEP;
}
/* end snippet */

/* snippet: readable */
enum conn_status conn_on_readable(struct conn *c)
{
    ssize_t n = buf_read_from(&c->out, c->fd, CONN_READ_CHUNK);

    if (n == -EAGAIN)
        return CONN_KEEP; /* readiness is a hint, not a promise: try again later */
    if (n < 0)
        return conn__fail(c, "read", (int)-n);
    if (n == 0)
        c->peer_eof = true; /* half-close: echo what we have, then close */
    /* Write at once instead of waiting for POLLOUT: the socket is almost
     * always writable, and this saves a trip through poll(). */
    return conn__flush_pending(c);
}
/* end snippet */

enum conn_status conn_on_writable(struct conn *c)
{
    return conn__flush_pending(c);
}
