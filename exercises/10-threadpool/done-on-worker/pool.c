/* SPDX-License-Identifier: MIT */
/* pool.c: the pool's threads and its submit queue. See pool.h.
 *
 * One mutex and one condition variable, as in chapter 02's conn-queue: the
 * loop thread pushes jobs, the pool threads pop them. The loop never waits on
 * this queue (a full queue is -EAGAIN, not a sleep), so a slow pool can make
 * requests wait but can never stop the loop. Finished jobs go the other way
 * through handoff.c.
 */
#include "pool.h"

#include "clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void *pool__worker(void *arg)
{
    struct pool *p = arg;

    pthread_mutex_lock(&p->lock);
    for (;;) {
        struct pool_job *job;
        long long waited;

        while (!p->head && !p->stopping)
            pthread_cond_wait(&p->work_ready, &p->lock);
        if (!p->head)
            break; /* stopping, and nothing left to run */
        job = p->head;
        p->head = job->next;
        if (!p->head)
            p->tail = NULL;
        p->queued--;
        p->busy++;
        job->started_ns = clock_now_ns();
        waited = job->started_ns - job->queued_ns;
        if (waited > p->longest_wait_ns)
            p->longest_wait_ns = waited;
        pthread_mutex_unlock(&p->lock);

        job->work(job); /* the blocking part, with no lock held */

        pthread_mutex_lock(&p->lock);
        p->busy--;
        p->completed++; /* counted before the loop can see the job done */
        pthread_mutex_unlock(&p->lock);
        job->done(job, 0); /* finished: report it right away */
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int pool_init(struct pool *p, int threads, size_t queue_cap)
{
    int err;

    if (threads < 1 || queue_cap < 1)
        return -EINVAL;
    memset(p, 0, sizeof(*p));
    p->queue_cap = queue_cap;
    p->wake_fd = p->wake_wfd = -1;
    if (!(p->threads = calloc((size_t)threads, sizeof(*p->threads))))
        return -ENOMEM;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work_ready, NULL);
    pthread_mutex_init(&p->done_lock, NULL);
    if ((err = pool__handoff_init(p)) < 0)
        goto fail_handoff;
    for (; p->nthreads < threads; p->nthreads++) {
        if ((err = pthread_create(&p->threads[p->nthreads], NULL, pool__worker, p)) != 0) {
            err = -err;
            goto fail_threads;
        }
    }
    return 0;

fail_threads:
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->work_ready);
    pthread_mutex_unlock(&p->lock);
    while (p->nthreads > 0)
        pthread_join(p->threads[--p->nthreads], NULL);
    pool__handoff_close(p);
fail_handoff:
    pthread_mutex_destroy(&p->done_lock);
    pthread_cond_destroy(&p->work_ready);
    pthread_mutex_destroy(&p->lock);
    free(p->threads);
    return err;
}

int pool_fd(const struct pool *p)
{
    return p->wake_fd;
}

int pool_submit(struct pool *p, struct pool_job *job, pool_work_fn work, pool_done_fn done)
{
    int ret = 0;

    job->work = work;
    job->done = done;
    job->next = NULL;
    job->started_ns = 0;
    job->queued_ns = clock_now_ns();
    pthread_mutex_lock(&p->lock);
    if (p->stopping) {
        ret = -ESHUTDOWN;
    } else if (p->queued >= p->queue_cap) {
        p->rejected++;
        ret = -EAGAIN; /* the caller decides: refuse, or retry later */
    } else {
        if (p->tail)
            p->tail->next = job;
        else
            p->head = job;
        p->tail = job;
        p->queued++;
        p->submitted++;
        pthread_cond_signal(&p->work_ready); /* one job: one thread is enough */
    }
    pthread_mutex_unlock(&p->lock);
    return ret;
}

void pool_get_stats(struct pool *p, struct pool_stats *st)
{
    long long now = clock_now_ns();

    pthread_mutex_lock(&p->lock);
    st->threads = p->nthreads;
    st->busy = p->busy;
    st->idle = p->nthreads - p->busy;
    st->queued = p->queued;
    st->queue_cap = p->queue_cap;
    st->submitted = p->submitted;
    st->completed = p->completed;
    st->rejected = p->rejected;
    st->longest_wait_ns = p->longest_wait_ns;
    st->oldest_queued_ns = p->head ? now - p->head->queued_ns : 0;
    pthread_mutex_unlock(&p->lock);
}

void pool_shutdown(struct pool *p, enum pool_stop how)
{
    struct pool_job *cancelled = NULL;

    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    if (how == POOL_CANCEL) { /* take the jobs no thread has started */
        cancelled = p->head;
        p->head = p->tail = NULL;
        p->queued = 0;
    }
    pthread_cond_broadcast(&p->work_ready); /* every idle thread must see it */
    pthread_mutex_unlock(&p->lock);

    /* A thread inside a work function cannot be stopped, only waited for:
     * pthread_cancel() in the middle of a read() would leak its fd and leave
     * the job half done. This is why work functions must not block forever. */
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);

    pool_drain(p); /* the jobs that finished, in order */
    while (cancelled) {
        struct pool_job *job = cancelled;
        cancelled = job->next;
        job->done(job, -ECANCELED); /* on the loop thread, like every other done */
    }
    pool__handoff_close(p);
    pthread_mutex_destroy(&p->done_lock);
    pthread_cond_destroy(&p->work_ready);
    pthread_mutex_destroy(&p->lock);
    free(p->threads);
    p->threads = NULL;
    p->nthreads = 0;
}
