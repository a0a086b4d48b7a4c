/* SPDX-License-Identifier: MIT */
/* offload.c: file reads for the readiness backends, on chapter 10's pool.
 *
 * epoll refuses a regular file outright (epoll_ctl: EPERM, chapter 04) and
 * poll() calls it always ready: neither can say when a read from disk would
 * not block. So, as .NET and libuv do, the read runs on another thread and
 * its result comes back to the loop:
 *
 *   loop thread                          pool thread (chapters/10-threadpool)
 *   offload_submit(op) --pool_submit-->  offload__work: pread(fd, buf, len, offset)
 *   pool_fd() readable  <--eventfd-----  pool__complete()
 *   notify op completes: pool_drain() -> offload__done -> cio__complete(op)
 *
 * The pool's eventfd is read by an ordinary stream read through ready.c (an
 * internal op), so the hand-back needs nothing new from the backend. The
 * pool starts with the first file read: a server that never reads a file
 * never has its threads.
 *
 * A read the pool has taken cannot be stopped (a thread inside pread()
 * cannot be interrupted, only waited for), so cio_cancel() of a file read
 * lets it finish: the op completes with the read's own result.
 */
#include "cio_impl.h"
#include "pool.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define OFFLOAD_THREADS 2
#define OFFLOAD_QUEUE   256 /* reads queued in the pool; more wait in `backlog` */

struct offload {
    struct pool pool;
    struct cio *a;
    uint64_t count;       /* where the notify op's read of the eventfd lands */
    struct cio_op notify; /* internal: a read of pool_fd(), through ready.c */
    struct cio_op *backlog_head, *backlog_tail; /* the pool's queue was full */
};

/* One read in the pool. */
struct offload_job {
    struct pool_job job; /* first: the pool hands back &job */
    struct offload *o;
    struct cio_op *op;
    int res;
};

/* snippet: work */
/* On a pool thread: the blocking call. */
static void offload__work(struct pool_job *job)
{
    struct offload_job *j = (struct offload_job *)job;
    struct cio_op *op = j->op;
    ssize_t n;

    do {
        n = pread(op->fd, op->buf, op->len, (off_t)op->offset);
    } while (n < 0 && errno == EINTR);
    j->res = n < 0 ? -errno : (int)n;
}
/* end snippet */

static void offload__queue(struct offload *o, struct cio_op *op);

/* On the loop thread (pool_drain): the read is over. */
static void offload__done(struct pool_job *job, int status)
{
    struct offload_job *j = (struct offload_job *)job;
    struct offload *o = j->o;

    cio__complete(o->a, j->op, status < 0 ? status : j->res);
    free(j);
    if (o->backlog_head) { /* room in the pool again */
        struct cio_op *op = o->backlog_head;
        if (!(o->backlog_head = op->next))
            o->backlog_tail = NULL;
        offload__queue(o, op);
    }
}

static void offload__queue(struct offload *o, struct cio_op *op)
{
    struct offload_job *j = calloc(1, sizeof(*j));
    int err;

    if (!j) {
        cio__complete(o->a, op, -ENOMEM);
        return;
    }
    j->o = o;
    j->op = op;
    if ((err = pool_submit(&o->pool, &j->job, offload__work, offload__done)) == 0)
        return;
    free(j);
    if (err != -EAGAIN) {
        cio__complete(o->a, op, err);
        return;
    }
    op->next = NULL; /* the pool's queue is full: wait for a done */
    if (o->backlog_tail)
        o->backlog_tail->next = op;
    else
        o->backlog_head = op;
    o->backlog_tail = op;
}

/* snippet: notify */
/* The pool's eventfd was readable: run the done callback of every read
 * finished so far, then wait for the next. */
static void offload__on_notify(struct cio *a, struct cio_op *notify)
{
    struct offload *o = notify->user_data;

    pool_drain(&o->pool);
    if (notify->res == -ECANCELED)
        return;
    if (notify->res < 0)
        abort(); /* the eventfd failed: nothing could be handed back any more */
    cio_submit(a, notify);
}
/* end snippet */

static struct offload *offload__start(struct cio *a)
{
    struct offload *o = calloc(1, sizeof(*o));

    if (!o)
        return NULL;
    if (pool_init(&o->pool, OFFLOAD_THREADS, OFFLOAD_QUEUE) < 0) {
        free(o);
        return NULL;
    }
    if (ready_attach(a, pool_fd(&o->pool)) < 0) {
        pool_shutdown(&o->pool, POOL_CANCEL);
        free(o);
        return NULL;
    }
    o->a = a;
    o->notify = (struct cio_op){.kind = CIO_READ_FILE,
                                .fd = pool_fd(&o->pool),
                                .buf = &o->count,
                                .len = sizeof(o->count),
                                .offset = -1,
                                .cb = offload__on_notify,
                                .user_data = o,
                                .flags = CIO__INTERNAL};
    cio_submit(a, &o->notify);
    return o;
}

void offload_submit(struct cio *a, struct cio_op *op)
{
    if (!a->offload && !(a->offload = offload__start(a))) {
        cio__complete(a, op, -ENOMEM);
        return;
    }
    offload__queue(a->offload, op);
}

bool offload_cancel(struct cio *a, struct cio_op *op)
{
    struct offload *o = a->offload;
    struct cio_op **p;

    /* Only a read still in our own backlog can be taken back. */
    for (p = o ? &o->backlog_head : NULL; p && *p; p = &(*p)->next) {
        if (*p == op) {
            *p = op->next;
            o->backlog_tail = NULL;
            for (struct cio_op *t = o->backlog_head; t; t = t->next)
                o->backlog_tail = t;
            return true;
        }
    }
    return false;
}

void offload_fini(struct cio *a)
{
    struct offload *o = a->offload;

    if (!o)
        return;
    ready_detach(a, pool_fd(&o->pool));
    pool_shutdown(&o->pool, POOL_CANCEL); /* closes the eventfd */
    free(o);
    a->offload = NULL;
}
