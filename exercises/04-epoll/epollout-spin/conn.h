/* SPDX-License-Identifier: MIT */
/* conn.h: one client of echo-epoll-lt, and what epoll hands back for it.
 *
 * epoll gives every registered fd one word of our own, epoll_event.data,
 * which comes back untouched with each event. Here it is a pointer to the
 * object that owns the fd, so an event leads straight to its state, with no
 * lookup. Every watched object starts with a `struct watch`, and the loop
 * reads its `kind` to know what the pointer really points to.
 */
#ifndef CH04_CONN_H
#define CH04_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "buf.h"
#include "list.h"

/* Room asked of each read(). Level-triggered epoll reports the socket again
 * on the next epoll_wait() if more is waiting, so one read per event is
 * enough, and one busy client cannot keep the loop from the others. */
#define CONN_READ_CHUNK (64 * 1024)

/* Backpressure: no reading from a client while this much of its echo is
 * unsent. Reads happen only below the bound and ask for CONN_READ_CHUNK of
 * room, so a connection never holds more than about 2 * CONN_PENDING_MAX. */
#define CONN_PENDING_MAX (1024 * 1024)

enum watch_kind { WATCH_SIGNAL, WATCH_LISTENER, WATCH_CONN };

/* What epoll_event.data.ptr points to. Always the first member of its owner,
 * so a pointer to the watch is a pointer to the owner too. */
struct watch {
    enum watch_kind kind;
    int fd;
};

struct conn {
    struct watch w;        /* first: data.ptr points here */
    uint32_t registered;   /* the events in epoll's interest list now */
    bool peer_eof;         /* the client half-closed: send what is left, then close */
    struct buf out;        /* read from the client, not yet echoed back */
    struct list_node link; /* in the server's list of open connections, for shutdown */
};

/* The interest a connection needs, derived from its state after every event:
 * - EPOLLIN (with EPOLLRDHUP) while the client may still send and less than
 *   CONN_PENDING_MAX of its echo waits: backpressure;
 * - EPOLLOUT only while output waits. Level-triggered epoll reports EPOLLOUT
 *   on every call while the send buffer has room, which is nearly always:
 *   left armed with nothing to send, it wakes the loop at once, forever. */
static inline uint32_t conn_wanted_events(const struct conn *c)
{
    uint32_t ev = 0;

    if (!c->peer_eof && buf_len(&c->out) < CONN_PENDING_MAX)
        ev |= EPOLLIN | EPOLLRDHUP;
    ev |= EPOLLOUT; /* write whenever the socket has room */
    return ev;
}

enum conn_status {
    CONN_KEEP,  /* still open: conn_update_interest() next */
    CONN_CLOSE, /* finished or failed: conn_free() it */
};

/* Takes ownership of fd (non-blocking). NULL when out of memory. */
struct conn *conn_new(int fd);
/* close() also takes the fd out of every epoll interest list, because this
 * fd is the only reference to its socket (see epoll-dup.c for when not). */
void conn_free(struct conn *c);

/* Register the new connection with epoll: EPOLLIN | EPOLLRDHUP. -errno on failure. */
int conn_register(struct conn *c, int epfd);
/* Handle the events epoll_wait() reported for this connection. */
enum conn_status conn_on_events(struct conn *c, uint32_t events);
/* Bring the interest list in line with conn_wanted_events(): one
 * epoll_ctl(EPOLL_CTL_MOD) when it changed, none when it did not. */
int conn_update_interest(struct conn *c, int epfd);

#endif
