/* SPDX-License-Identifier: MIT */
/* conn.c: what this chapter's servers do with a connection (see conn.h).
 *
 * Chapter 04's conn.c, evolved for EPOLLET. What changed:
 *   - an event no longer triggers a read; it only records readiness
 *     (conn_on_events), and the reading happens in conn_run();
 *   - conn_run() reads until read() says EAGAIN, not once: with EPOLLET a
 *     byte left unread is a byte nobody will report again;
 *   - a read budget stops one client from keeping the loop to itself; the
 *     caller must then remember the connection (conn_has_work);
 *   - no interest list to keep in line with the state: echo-epoll-et
 *     registers a connection once, edge-triggered, and never changes it
 *     (conn_wanted_events() in conn.h stays for echo-epoll-oneshot, which
 *     re-arms after every event).
 */
#include "conn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void conn_init(struct conn *c, int fd)
{
    *c = (struct conn){.w = {.kind = WATCH_CONN, .fd = fd}, .writable = true};
    buf_init(&c->out);
}

void conn_close(struct conn *c)
{
    close(c->w.fd);
    buf_free(&c->out);
}

/* snippet: on-events */
void conn_on_events(struct conn *c, uint32_t events)
{
    /* EPOLLERR and EPOLLHUP come unasked: let the next read() or write()
     * meet the error or the EOF, and end the connection the ordinary way. */
    if (events & (EPOLLERR | EPOLLHUP))
        events |= EPOLLIN | EPOLLOUT;
    if (events & EPOLLIN)
        c->readable = true;
    if (events & EPOLLOUT)
        c->writable = true;
}
/* end snippet */

/* A reset or a broken pipe is ordinary for a server: log why the connection
 * ended, and carry on. */
static enum conn_status conn__fail(const struct conn *c, const char *call, int err)
{
    fprintf(stderr, "%s(fd=%d): %s\n", call, c->w.fd, strerror(err));
    return CONN_CLOSE;
}

/* snippet: flush */
/* Write until the output is gone or write() says EAGAIN. EAGAIN clears
 * `writable`: the rest waits for the EPOLLOUT edge that the kernel sends
 * when room comes back (it remembers that a write found the socket full). */
static enum conn_status conn__flush(struct conn *c)
{
    int err = buf_flush(&c->out, c->w.fd);

    if (err == -EAGAIN) {
        c->writable = false;
        return CONN_KEEP;
    }
    if (err < 0)
        return conn__fail(c, "write", -err);
    buf_free(&c->out); /* drained: an idle connection holds no buffer */
    return CONN_KEEP;
}
/* end snippet */

/* snippet: run */
enum conn_status conn_run(struct conn *c, int reads)
{
    for (c->turn_reads = 0;; c->turn_reads++) {
        if (c->writable && buf_len(&c->out) > 0 && conn__flush(c) == CONN_CLOSE)
            return CONN_CLOSE;
        if (c->peer_eof && buf_len(&c->out) == 0)
            return CONN_CLOSE; /* every byte echoed after the client's EOF */
        if (!c->readable || c->peer_eof || buf_len(&c->out) >= CONN_PENDING_MAX)
            return CONN_KEEP; /* nothing to read, or backpressure */
        /* end snippet */
        if (reads > 0 && c->turn_reads == reads)
            return CONN_KEEP; /* budget spent, data left: conn_has_work() is true */

        ssize_t n = buf_read_from(&c->out, c->w.fd, CONN_READ_CHUNK);
        if (n == -EAGAIN) {
            c->readable = false; /* drained: the next byte brings a new edge */
            if (buf_len(&c->out) == 0)
                buf_free(&c->out); /* and an idle connection holds no buffer */
        } else if (n < 0)
            return conn__fail(c, "read", (int)-n);
        else if (n == 0)
            c->peer_eof = true; /* echo what we have, then close */
    }
}
/* end snippet */
