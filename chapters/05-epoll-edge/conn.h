/* SPDX-License-Identifier: MIT */
/* conn.h: one client of this chapter's servers, for edge-triggered epoll.
 *
 * Chapter 04's conn.h, evolved. Level-triggered epoll answered "can I read
 * now?" on every epoll_wait(), so a connection kept no memory of readiness:
 * it read once per event and asked again. Edge-triggered epoll reports a
 * change once, then says nothing until the next change, so the connection
 * itself must remember what it was told: `readable` and `writable` below.
 * The rule that keeps them honest: set by an event, cleared only when the
 * kernel says EAGAIN. tokio keeps the same two bits per socket, and .NET the
 * same "data may be available" state per operation queue.
 */
#ifndef CH05_CONN_H
#define CH05_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "buf.h"
#include "list.h"

/* Room asked of each read(), as in chapter 04. */
#define CONN_READ_CHUNK (64 * 1024)

/* Backpressure, as in chapter 04: no reading while this much echo is unsent. */
#define CONN_PENDING_MAX (1024 * 1024)

/* snippet: watch */
enum watch_kind { WATCH_SIGNAL, WATCH_LISTENER, WATCH_CONN };

/* What epoll_event.data.ptr points to, first member of its owner. New since
 * chapter 04: the links of the loop's own ready list (loop.c), where a
 * socket that still has work but will get no new edge waits for its turn. */
struct watch {
    enum watch_kind kind;
    int fd;
    bool queued;              /* on the loop's ready list now */
    struct watch *ready_next; /* next on that list */
};

struct conn {
    struct watch w;        /* first: data.ptr points here */
    bool readable;         /* an EPOLLIN edge came, and no read() has said EAGAIN since */
    bool writable;         /* no write() has said EAGAIN since the last EPOLLOUT edge */
    bool peer_eof;         /* the client half-closed: send what is left, then close */
    struct buf out;        /* read from the client, not yet echoed back */
    int turn_reads;        /* read() calls in the last conn_run(), for statistics */
    struct list_node link; /* in the loop's list of open connections, for shutdown */
};
/* end snippet */

enum conn_status {
    CONN_KEEP,  /* still open */
    CONN_CLOSE, /* finished or failed: conn_close() it */
};

/* fd: a connected, non-blocking socket, now owned by c. */
void conn_init(struct conn *c, int fd);
/* close() the socket (which also leaves every epoll interest list, since
 * this fd is its only reference) and free the pending output. */
void conn_close(struct conn *c);

/* Record the readiness epoll_wait() reported. Does no I/O. */
void conn_on_events(struct conn *c, uint32_t events);

/* One turn: send pending output, then read and echo while the socket has
 * data, the echo is under CONN_PENDING_MAX, and fewer than `reads` reads
 * were made (0: no limit, read until EAGAIN). Stops early only on that
 * budget; conn_has_work() then says the turn ended with data left. */
enum conn_status conn_run(struct conn *c, int reads);

/* snippet: has-work */
/* Can this connection make progress without hearing from epoll again? True
 * after a turn cut short by its read budget: the socket still holds data,
 * and with EPOLLET no new event will come for it. */
static inline bool conn_has_work(const struct conn *c)
{
    bool can_read = c->readable && !c->peer_eof && buf_len(&c->out) < CONN_PENDING_MAX;
    bool can_write = c->writable && buf_len(&c->out) > 0;

    return can_read || can_write;
}
/* end snippet */

/* The interest chapter 04 derived from a connection's state, for servers
 * that re-arm after every event (echo-epoll-oneshot): EPOLLIN before EOF and
 * under the backpressure bound, EPOLLOUT only while output waits. */
static inline uint32_t conn_wanted_events(const struct conn *c)
{
    uint32_t ev = 0;

    if (!c->peer_eof && buf_len(&c->out) < CONN_PENDING_MAX)
        ev |= EPOLLIN;
    if (buf_len(&c->out) > 0)
        ev |= EPOLLOUT;
    return ev;
}

#endif
