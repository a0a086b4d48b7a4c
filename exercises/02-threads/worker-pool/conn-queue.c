/* SPDX-License-Identifier: MIT */
/* conn-queue.c: see conn-queue.h. */
#include "todo.h"
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

int conn_queue_push(struct conn_queue *q, int fd)
{
    TODO("append fd, waiting while full; -ECANCELED once stopping");
}

int conn_queue_pop(struct conn_queue *q)
{
    TODO("take the oldest fd, wait while empty; -ECANCELED once stopping");
}

void conn_queue_stop(struct conn_queue *q)
{
    TODO("set stopping and wake every thread waiting on the queue");
}
