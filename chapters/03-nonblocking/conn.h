/* SPDX-License-Identifier: MIT */
/* conn.h: one client of this chapter's echo servers.
 *
 * echo-select.c and echo-poll.c differ only in how they ask the kernel which
 * sockets are ready. What they do with a socket once it is ready is the same,
 * so it lives here: read what is there, try to write it back, keep what the
 * kernel would not take, and say what to wait for next.
 */
#ifndef CH03_CONN_H
#define CH03_CONN_H

#include <stdbool.h>

#include "buf.h"

/* Ask read() for at least this much room. Level-triggered readiness reports
 * the socket again on the next turn of the loop if more is waiting, so one
 * read per turn is enough, and it keeps a busy client from starving the rest. */
#define CONN_READ_CHUNK (64 * 1024)

/* Backpressure: stop reading from a client while this much of its echo is
 * still unsent. Reads only happen below the bound and buf_read_from() asks for
 * CONN_READ_CHUNK of room, so the buffer never grows past 2 * CONN_PENDING_MAX. */
#define CONN_PENDING_MAX (1024 * 1024)

/* snippet: state */
struct conn {
    int fd;         /* non-blocking, close-on-exec */
    bool peer_eof;  /* the client half-closed: send what is pending, then close */
    struct buf out; /* bytes read from the client, not yet echoed back */
};

/* The interest the loop must register, derived from the state every time:
 * readable while the client may still send and we are under the bound,
 * writable only while output is pending. Asking for writability with nothing
 * to write makes poll()/select() return at once, forever: a busy loop. */
static inline bool conn_wants_read(const struct conn *c)
{
    return !c->peer_eof && buf_len(&c->out) < CONN_PENDING_MAX;
}
static inline bool conn_wants_write(const struct conn *c)
{
    return buf_len(&c->out) > 0;
}
/* end snippet */

/* What the event loop does with the connection after a call below. */
enum conn_status {
    CONN_KEEP,  /* still open: wait for what conn_wants_read/write say */
    CONN_CLOSE, /* finished or failed: conn_free() it */
};

/* Takes ownership of fd. Returns NULL when out of memory (fd stays open). */
struct conn *conn_new(int fd);
/* Closes the socket and frees everything. */
void conn_free(struct conn *c);

/* The socket was reported readable: read once, then try to echo. */
enum conn_status conn_on_readable(struct conn *c);
/* The socket was reported writable: send pending output. */
enum conn_status conn_on_writable(struct conn *c);

#endif
