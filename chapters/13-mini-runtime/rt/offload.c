/* SPDX-License-Identifier: MIT */
/* offload.c: blocking work on chapter 10's thread pool.
 *
 * rt_run_blocking(fn) is Task.Run: fn runs on a pool thread; its return
 * value comes back to the loop thread through the pool's eventfd, which the
 * runtime reads with an ordinary cio operation (a read at offset -1), so
 * the hand-back needs nothing from the backend but a read:
 *
 *     loop thread                         pool thread
 *     rt_run_blocking ──pool_submit──►    job__work: fn(arg)
 *     notify read completes ◄─eventfd──   pool__complete
 *     pool_drain ─► job__done ─► the future completes, its awaiter queued
 *
 * rt_read_file() picks per backend, as .NET on Linux reads files on the
 * thread pool because epoll cannot wait for a disk: io_uring reads the file
 * in the kernel (a cio READ_FILE op); epoll and kqueue send a pread() to the
 * pool. RT_TRACE=1 prints the choice.
 */
#include "pool.h" /* chapter 10 */
#include "rt_impl.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define RT_POOL_THREADS 4
#define RT_POOL_QUEUE   4096 /* jobs waiting for a thread; beyond: -EAGAIN */

struct rt_pool {
    struct pool pool;
    struct cio_op notify; /* a read of pool_fd(): the pool has finished jobs */
    uint64_t count;
    bool notify_busy;
};

struct rt_job {
    struct pool_job job; /* first: the pool hands back &job */
    struct rt_future f;
    long (*fn)(void *arg);
    void *arg;
    long res;              /* fn's result, written on the pool thread */
    atomic_bool cancelled; /* set by the token: skip fn if not started */
    struct rt_reg reg;
    int fd; /* rt_read_file on the pool: pread's arguments */
    void *buf;
    size_t len;
    int64_t offset;
};

static void pool__on_notify(struct cio *a, struct cio_op *op)
{
    struct rt_pool *p = op->user_data;

    p->notify_busy = false;
    pool_drain(&p->pool); /* every finished job's done(), on this thread */
    if (op->res == -ECANCELED)
        return;
    if (op->res < 0) { /* the eventfd failed: no result could come back any more */
        fprintf(stderr, "rt: read(pool eventfd): %ld\n", (long)op->res);
        abort();
    }
    p->notify_busy = cio_submit(a, op) == 0;
}

static struct rt_pool *pool__get(struct rt *rt)
{
    struct rt_pool *p = rt->pool;
    int err;

    if (p)
        return p;
    p = rt__alloc(sizeof(*p));
    if ((err = pool_init(&p->pool, RT_POOL_THREADS, RT_POOL_QUEUE)) < 0 ||
        (err = cio_attach(rt->io, pool_fd(&p->pool))) < 0) {
        fprintf(stderr, "rt: starting the thread pool: %d\n", err);
        exit(1);
    }
    p->notify = (struct cio_op){.kind = CIO_READ_FILE,
                                .fd = pool_fd(&p->pool),
                                .buf = &p->count,
                                .len = sizeof(p->count),
                                .offset = -1,
                                .cb = pool__on_notify,
                                .user_data = p};
    p->notify_busy = cio_submit(rt->io, &p->notify) == 0;
    return rt->pool = p;
}

void rt__pool_stop(struct rt *rt)
{
    struct rt_pool *p = rt->pool;

    if (!p)
        return;
    if (p->notify_busy)
        cio_cancel(rt->io, &p->notify);
    while (p->notify_busy)
        if (cio_run(rt->io, -1) < 0)
            break;
    cio_detach(rt->io, pool_fd(&p->pool));
    pool_shutdown(&p->pool, POOL_CANCEL); /* closes the eventfd */
    free(p);
    rt->pool = NULL;
}

/* snippet: job */
static void job__work(struct pool_job *job) /* on a pool thread */
{
    struct rt_job *j = (struct rt_job *)job;

    j->res = atomic_load(&j->cancelled) ? -ECANCELED : j->fn(j->arg);
}

static void job__done(struct pool_job *job, int status) /* on the loop thread */
{
    struct rt_job *j = (struct rt_job *)job;

    j->f.rt->pending--;
    rt__token_unregister(&j->reg);
    rt__future_complete(&j->f, status < 0 ? status : j->res);
    rt_future_release(&j->f);
}

static void job__cancel(struct rt_reg *r)
{
    /* A thread inside fn cannot be stopped, only not started. */
    atomic_store(&RT_CONTAINER(r, struct rt_job, reg)->cancelled, true);
}
/* end snippet */

static void job__free(struct rt_future *f)
{
    free(RT_CONTAINER(f, struct rt_job, f));
}

static struct rt_job *job__new(struct rt *rt, const char *name)
{
    struct rt_job *j = rt__alloc(sizeof(*j));

    rt__future_init(&j->f, rt, name, 2, job__free);
    atomic_init(&j->cancelled, false);
    return j;
}

static struct rt_future *job__submit(struct rt *rt, struct rt_job *j, struct rt_token *tok)
{
    struct rt_pool *p = pool__get(rt);
    int err;

    if (tok && !rt__token_register(tok, &j->reg, job__cancel))
        err = -ECANCELED;
    else if ((err = pool_submit(&p->pool, &j->job, job__work, job__done)) == 0) {
        rt->pending++;
        return &j->f;
    }
    rt__token_unregister(&j->reg);
    rt__future_complete(&j->f, err); /* -EAGAIN: the pool's queue is full */
    rt_future_release(&j->f);
    return &j->f;
}

struct rt_future *rt_run_blocking(struct rt *rt, long (*fn)(void *arg), void *arg,
                                  struct rt_token *tok)
{
    struct rt_job *j = job__new(rt, "run_blocking");

    j->fn = fn;
    j->arg = arg;
    if (rt->trace)
        fprintf(stderr, "rt[%s]: run_blocking -> pool thread\n", rt_backend_name(rt));
    return job__submit(rt, j, tok);
}

static long job__pread(void *arg)
{
    struct rt_job *j = arg;
    ssize_t n;

    while ((n = pread(j->fd, j->buf, j->len, (off_t)j->offset)) < 0 && errno == EINTR)
        ;
    return n < 0 ? -errno : (long)n;
}

/* snippet: read-file */
struct rt_future *rt_read_file(struct rt *rt, int fd, void *buf, size_t len, int64_t offset,
                               struct rt_token *tok)
{
    if (rt_files_native(rt)) { /* io_uring: the kernel reads, no thread waits */
        struct rt_io *io = rt__alloc(sizeof(*io));

        if (rt->trace)
            fprintf(stderr,
                    "rt[%s]: read-file fd=%d len=%zu offset=%lld -> native (in the kernel)\n",
                    rt_backend_name(rt), fd, len, (long long)offset);
        io->op = (struct cio_op){
            .kind = CIO_READ_FILE, .fd = fd, .buf = buf, .len = len, .offset = offset};
        return rt__io_start(rt, io, tok);
    }
    struct rt_job *j = job__new(rt, "read-file");

    if (rt->trace)
        fprintf(stderr, "rt[%s]: read-file fd=%d len=%zu offset=%lld -> pool thread (pread)\n",
                rt_backend_name(rt), fd, len, (long long)offset);
    j->fn = job__pread;
    j->arg = j;
    j->fd = fd;
    j->buf = buf;
    j->len = len;
    j->offset = offset;
    return job__submit(rt, j, tok);
}
/* end snippet */
