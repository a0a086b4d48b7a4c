/* conn-queue.c: the bounded queue between the acceptor and the workers.
 *
 * Exercise 02-threads/worker-pool: write conn_queue_push(), conn_queue_pop()
 * and conn_queue_stop(). conn-queue.h says what each must do; init and
 * destroy are given, and show the ring's layout: fds[head] is the oldest
 * connection, `len` slots are in use, and indexes wrap modulo `cap`.
 *
 * The rules of condition variables, in short:
 *   - change or test the state (len, stopping) only with q->lock held;
 *   - pthread_cond_wait(cond, lock) unlocks, sleeps, and locks again before
 *     it returns, so always call it in a loop that tests the condition again;
 *   - signal a condition variable after making its condition true.
 */
#include "conn-queue.h"
#include "todo.h"

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
    /* EXERCISE BEGIN: append fd, waiting while full; -ECANCELED once stopping */
    int ret = 0;

    pthread_mutex_lock(&q->lock);
    while (q->len == q->cap && !q->stopping)
        pthread_cond_wait(&q->not_full, &q->lock);
    if (q->stopping) {
        ret = -ECANCELED;
    } else {
        q->fds[(q->head + q->len) % q->cap] = fd;
        q->len++;
        pthread_cond_signal(&q->not_empty);
    }
    pthread_mutex_unlock(&q->lock);
    return ret;
    /* EXERCISE END */
}

int conn_queue_pop(struct conn_queue *q)
{
    /* EXERCISE BEGIN: take the oldest fd, waiting while empty; -ECANCELED once stopping */
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

void conn_queue_stop(struct conn_queue *q)
{
    /* EXERCISE BEGIN: set stopping and wake every thread waiting on the queue */
    pthread_mutex_lock(&q->lock);
    q->stopping = true;
    pthread_cond_broadcast(&q->not_empty);
    pthread_cond_broadcast(&q->not_full);
    pthread_mutex_unlock(&q->lock);
    /* EXERCISE END */
}
