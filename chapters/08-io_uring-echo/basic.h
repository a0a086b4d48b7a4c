/* SPDX-License-Identifier: MIT */
/* basic.h: the state of echo-uring-basic, shared by its loop
 * (echo-uring-basic.c) and by what it does when a recv or a send completes
 * (basic-conn.c).
 *
 * Every connection has exactly one request in flight, a recv or a send, and
 * one buffer that request owns until its completion arrives:
 *
 *     accept --> recv --res > 0--> send --all sent--> recv ...
 *                 |                | ^
 *                 |                +-+ short: send the rest
 *                 +--res = 0 (EOF) or an error--> close
 */
#ifndef CH08_BASIC_H
#define CH08_BASIC_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "list.h"
#include "udata.h"

#define BASIC_BUF_SIZE (16 * 1024) /* per connection, unless -s says otherwise */

/* snippet: conn */
struct conn {
    int fd;
    bool busy;             /* its one request (recv or send) has not completed yet */
    uint64_t req_ud;       /* that request's user_data, to cancel it at shutdown */
    size_t len;            /* bytes the last recv put in buf (of server.buf_size) */
    size_t sent;           /* how many of them the kernel has sent so far */
    struct list_node link; /* in server.conns */
    /* The kernel writes into buf (recv) or reads from it (send) after the
     * submitting call has returned, until the completion arrives: the
     * struct may only be freed once no request uses it. */
    char buf[];
};
/* end snippet */

struct server {
    struct io_uring ring;
    int listen_fd, signal_fd;
    struct list_node conns;  /* every open connection (conn.link), for shutdown */
    unsigned long in_flight; /* requests submitted whose CQE has not come yet */
    bool stopping;           /* SIGINT/SIGTERM: cancel everything, then exit */
    bool accept_armed;       /* an accept request is in flight */
    bool accept_paused;      /* out of fds: wait for a close or the timer */
    bool timer_armed;        /* the accept retry timer is in flight */
    int accept_errno;        /* last accept error logged: a streak is logged once */
    size_t buf_size;         /* -s: bytes of each connection's buffer */
    int sndbuf;              /* -S: SO_SNDBUF for accepted sockets, 0 = default */
    unsigned long long accepted, recvs, sends, short_sends;
};

/* Queue a request for the connection (submitted on the next turn of the
 * loop): receive into c->buf, or send c->buf[c->sent, c->len). */
void conn_queue_recv(struct server *s, struct conn *c);
void conn_queue_send(struct server *s, struct conn *c);
/* Close the socket and free the connection; it must have nothing in flight. */
void conn_close(struct server *s, struct conn *c);
/* Log "CALL(fd=N): error" and close. */
void conn_fail(struct server *s, struct conn *c, const char *call, int err);

/* basic-conn.c: a recv or a send of this connection completed with `res`
 * (bytes, 0 at EOF, or -errno). */
void conn_on_recv(struct server *s, struct conn *c, int res);
void conn_on_send(struct server *s, struct conn *c, int res);

#endif
