/* SPDX-License-Identifier: MIT */
/* conn.h: one client of file-server, and the server they share.
 *
 * The loop thread owns every field here. A connection's file_job is lent to
 * the pool between pool_submit() and its done callback, and in that time
 * only the pool thread running it touches c->fj (see conn_close()).
 */
#ifndef CH10_CONN_H
#define CH10_CONN_H

#include "buf.h"
#include "file-job.h"
#include "list.h"
#include "pool.h"

#include <stdbool.h>
#include <stdint.h>

enum watch_kind { WATCH_SIGNAL, WATCH_LISTENER, WATCH_POOL, WATCH_CONN };
struct watch { /* what epoll_event.data.ptr points to: the first member of its owner */
    enum watch_kind kind;
    int fd;
};

enum conn_state {
    CONN_READING, /* waiting for a complete request line */
    CONN_WORKING, /* its file_job is in the pool: nothing to read or write */
    CONN_WRITING, /* sending a reply */
};

struct server;
struct conn {
    struct watch w; /* first */
    struct server *srv;
    enum conn_state state;
    bool peer_eof;    /* the client half-closed: finish, then close */
    bool close_after; /* a BADREQ reply: close once it is sent */
    bool orphaned;    /* the socket was closed while its job was in the pool */
    uint32_t registered;
    struct buf in, out;
    struct file_job fj;    /* the request in flight (one per connection at a time) */
    struct list_node link; /* in server.conns while the socket is open */
};

struct server {
    int epfd;
    struct watch sig, listener, pool_w;
    struct pool pool;
    int threads; /* 0: file reads run on the loop thread */
    struct file_root root;
    struct list_node conns; /* every open connection (conn.link) */
    bool stopping;
};

/* Handle the events epoll reported for this connection. */
void conn_on_events(struct conn *c, uint32_t events);
/* Close the socket; free the connection now, or when its job comes back. */
void conn_close(struct conn *c);

#endif
