/* SPDX-License-Identifier: MIT */
/* uring-server.h: the server core that echo-uring and echo-uring-sqpoll share.
 *
 * Both programs are this core with one setting apart: echo-uring enters the
 * kernel to submit, echo-uring-sqpoll lets a kernel thread poll the
 * submission queue (IORING_SETUP_SQPOLL). The loop, accepting and shutdown
 * are in uring-server.c; what a connection does with its completions
 * (multishot recv into the buffer ring, one send at a time, backpressure)
 * is in uring-conn.c.
 */
#ifndef CH08_URING_SERVER_H
#define CH08_URING_SERVER_H

#include "bufring.h"
#include "list.h"
#include "udata.h"

#include <liburing.h>
#include <stdbool.h>

#define BGID 1 /* the one buffer group: the provided buffer ring */

/* Backpressure: a connection may hold this many buffers of the ring
 * (received, not yet echoed); at this many chunks waiting, its recv is
 * cancelled, and it is armed again at half. The cancel comes late: a
 * multishot recv keeps taking buffers for as long as the socket has bytes,
 * so what arrives beyond this many is copied out (struct chunk) and its
 * buffer goes back to the ring at once. A client that never reads therefore
 * pins at most this many buffers of the ring. */
#define CONN_MAX_BUFS 8

/* Bytes received beyond CONN_MAX_BUFS, copied out of the ring; they are
 * echoed after the queued buffers, in order. */
struct chunk {
    struct chunk *next;
    unsigned len;
    char data[];
};

/* snippet: conn */
struct conn {
    int fd;
    bool recv_armed; /* the multishot recv is in flight (no CQE without F_MORE yet) */
    bool send_armed; /* a send is in flight: never more than one per socket */
    bool throttled;  /* too many buffers held: recv cancelled until the queue drains */
    bool starved;    /* the recv ended with -ENOBUFS: on the starved list */
    bool peer_eof;   /* the client half-closed: echo the queue, then close */
    bool closing;    /* done or failed: cancel what is in flight, then free */
    bool cancelling; /* a cancel naming this connection is in flight */
    int q_head;      /* buffer ids waiting to be echoed, in order (-1: none); */
    int q_tail;      /*   linked through server.next_bid[] */
    unsigned q_len;  /* how many */
    /* past CONN_MAX_BUFS: bytes copied out, echoed after the queue */
    struct chunk *spill_head, *spill_tail;
    unsigned spill_len;    /* how many chunks */
    unsigned q_off;        /* bytes of the head sent (a buffer; a chunk once the queue is empty) */
    struct list_node link; /* in server.conns */
    /* while starved: the next on the server's starved list (a FIFO of its own) */
    struct conn *starved_next;
};
/* end snippet */

struct server {
    struct io_uring ring;
    struct bufring bufs;
    int *next_bid;    /* per buffer id: the next one in its connection's queue */
    unsigned *len_of; /* per buffer id: the bytes received into it */
    int listen_fd, signal_fd;
    struct list_node conns; /* every connection not yet freed (conn.link) */
    struct conn *starved_head, *starved_tail;
    unsigned long in_flight; /* requests that will still post a CQE */
    bool stopping, accept_armed, accept_paused, timer_armed;
    int accept_errno;
    int sndbuf;
    struct {
        unsigned long long accepted, recvs, sends, short_sends, enobufs, rearms, throttled;
        unsigned long long copied, most_held, loops, cqes;
    } st;
};

/* A new SQE about connection c (NULL for the server's own) and operation
 * op, counted in in_flight until its last CQE. */
struct io_uring_sqe *server_sqe(struct server *s, const struct conn *c, enum op op);
/* Accept again (one multishot accept for as long as it lasts). */
void server_arm_accept(struct server *s);

/* uring-conn.c */
struct conn *conn_new(struct server *s, int fd); /* NULL when out of memory */
void conn_on_recv(struct server *s, struct conn *c, const struct io_uring_cqe *cqe);
void conn_on_send(struct server *s, struct conn *c, int res);
/* Decide what must be in flight now; may free c. */
void conn_update(struct server *s, struct conn *c);
void conn_free(struct server *s, struct conn *c);

/* Parse the server contract's options and this server's own, then serve
 * until SIGINT/SIGTERM. `setup_flags` is 0 or IORING_SETUP_SQPOLL (which
 * adds the -I option). Returns the exit status. */
int userver_main(int argc, char **argv, const char *prog, const char *summary,
                 unsigned setup_flags);

#endif
