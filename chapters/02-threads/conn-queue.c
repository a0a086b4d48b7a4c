/* SPDX-License-Identifier: MIT */
/* conn-queue.c: see conn-queue.h. */
#include "conn-queue.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

int conn_queue_init(struct conn_queue *q, size_t cap)
{
    q->fds = calloc(cap, sizeof(*q->fds));
    if (!q->fds)
        return -ENOMEM;
    q->cap = cap;
    q->head = 0;
    q->len = 0;
    q->stopping = false;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->not_empty, NULL);
    pthread_cond_init(&q->not_full, NULL);
    return 0;
}

void conn_queue_destroy(struct conn_queue *q)
{
    /* Clients accepted but never served: closing them is all we can do. */
    for (; q->len > 0; q->len--, q->head = (q->head + 1) % q->cap)
        close(q->fds[q->head]);
    pthread_cond_destroy(&q->not_full);
    pthread_cond_destroy(&q->not_empty);
    pthread_mutex_destroy(&q->lock);
    free(q->fds);
    q->fds = NULL;
}

/* snippet: push */
int conn_queue_push(struct conn_queue *q, int fd)
{
    /* EXERCISE BEGIN worker-pool: append fd, waiting while full; -ECANCELED once stopping */
    int ret = 0;

    pthread_mutex_lock(&q->lock);
    while (q->len == q->cap && !q->stopping)
        pthread_cond_wait(&q->not_full, &q->lock); /* unlocks while asleep */
    if (q->stopping) {
        ret = -ECANCELED;
    } else {
        q->fds[(q->head + q->len) % q->cap] = fd;
        q->len++;
        pthread_cond_signal(&q->not_empty); /* one connection: one worker */
    }
    pthread_mutex_unlock(&q->lock);
    return ret;
    /* EXERCISE END */
}
/* end snippet */

/* snippet: pop */
int conn_queue_pop(struct conn_queue *q)
{
    /* EXERCISE BEGIN worker-pool: take the oldest fd, wait while empty; -ECANCELED once stopping */
    int fd;

    pthread_mutex_lock(&q->lock);
    while (q->len == 0 && !q->stopping)
        pthread_cond_wait(&q->not_empty, &q->lock);
    if (q->stopping) {
        fd = -ECANCELED;
    } else {
        fd = q->fds[q->head];
        q->head = (q->head + 1) % q->cap;
        q->len--;
        pthread_cond_signal(&q->not_full);
    }
    pthread_mutex_unlock(&q->lock);
    return fd;
    /* EXERCISE END */
}
/* end snippet */

/* snippet: stop */
void conn_queue_stop(struct conn_queue *q)
{
    /* EXERCISE BEGIN worker-pool: set stopping and wake every thread waiting on the queue */
    pthread_mutex_lock(&q->lock);
    q->stopping = true;
    /* Broadcast, not signal: every waiter must wake, not just one. */
    pthread_cond_broadcast(&q->not_empty);
    pthread_cond_broadcast(&q->not_full);
    pthread_mutex_unlock(&q->lock);
    /* EXERCISE END */
}
/* end snippet */
