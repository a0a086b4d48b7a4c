/* SPDX-License-Identifier: MIT */
/* conn-queue.h: a bounded queue that hands accepted connections from the
 * accepting thread to the workers of a pool.
 *
 * One mutex guards the ring; two condition variables say what a thread waits
 * for. The acceptor waits on `not_full` when every slot is taken; a worker
 * waits on `not_empty` when there is nothing to serve. conn_queue_stop() wakes
 * both kinds of waiter for good: after it, push and pop return -ECANCELED at
 * once, whatever is left in the ring.
 *
 * pthread_cond_wait() may return without a signal (a "spurious wake-up"), and
 * another thread may take the slot between the signal and the wake-up, so
 * every wait sits in a loop that tests the condition again.
 */
#ifndef CONN_QUEUE_H
#define CONN_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct conn_queue {
    pthread_mutex_t lock;
    pthread_cond_t not_empty; /* a worker waits here for a connection */
    pthread_cond_t not_full;  /* the acceptor waits here for a free slot */
    int *fds;                 /* ring: fds[head] is the oldest, `len` slots in use */
    size_t cap, head, len;
    bool stopping; /* set once by conn_queue_stop(), never cleared */
};

/* Returns 0, or -ENOMEM. cap must be at least 1. */
int conn_queue_init(struct conn_queue *q, size_t cap);

/* Close every connection still queued and free the ring. No thread may be
 * using the queue any more. */
void conn_queue_destroy(struct conn_queue *q);

/* Append fd, waiting while the queue is full. Returns 0, or -ECANCELED once
 * the queue is stopping (fd was not taken: the caller still owns it). */
int conn_queue_push(struct conn_queue *q, int fd);

/* Take the oldest fd, waiting while the queue is empty. Returns the fd, or
 * -ECANCELED once the queue is stopping. */
int conn_queue_pop(struct conn_queue *q);

/* Make every waiting and future push and pop return -ECANCELED. */
void conn_queue_stop(struct conn_queue *q);

#endif
