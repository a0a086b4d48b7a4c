/* SPDX-License-Identifier: MIT */
/* bufpool.c: the pool of buffers that pooled receives (CIO_RECV_POOLED) are
 * handed, and the queue of receives that wait for one.
 *
 * A pooled receive takes a buffer only once its bytes have come: the
 * kernel takes one from its ring as they land (io_uring), or the backend
 * takes one from the free stack here when the socket is readable (epoll,
 * kqueue, poll) or a zero-byte receive completes (IOCP). With every buffer
 * held, a receive whose bytes have come is parked: it waits in the pool's
 * queue until a caller releases a buffer.
 *
 * The queue is first in, first out, and a released buffer reaches it before
 * anyone else: while a receive waits, freed buffers go to the free stack,
 * not back into the kernel's ring, and only cio__unpark hands them out, one
 * to each waiting receive in the order they came, with the buffer named
 * (CIO__HANDED). A new receive whose bytes come meanwhile finds the ring
 * empty and no buffer it may take, and queues behind. Without that, a
 * buffer went to whichever receive asked next: a connection whose turn had
 * come could be passed over again and again, and at 500 connections on a
 * pool of 256 the slowest echoes waited more than ten times longer than the
 * median (the chapter's README has the figures).
 */
#include "cio_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* snippet: pool-make */
int cio__pool_create(struct cio *a)
{
    struct cio_pool *p = calloc(1, sizeof(*p));
    unsigned n = a->pool_count ? a->pool_count : CIO_BUF_COUNT;
    int err = -ENOMEM;

    /* Memory the pool never touches costs address space, not RAM: a page
     * becomes resident the first time bytes land in it. */
    if (!p || !(p->mem = malloc((size_t)n * CIO_BUF_SIZE)) ||
        !(p->free = malloc(n * sizeof(unsigned))) || !(p->is_held = calloc(n, 1)))
        goto fail;
    p->count = n;
    list_init(&p->waiting);
    a->pool = p;
    if (a->be->pool_init) {
        if ((err = a->be->pool_init(a)) < 0)
            goto fail;
    } else {
        for (unsigned id = n; id-- > 0;)
            cio__buf_give(a, id); /* buffer 0 on top */
    }
    return 0;

fail:
    a->pool = NULL;
    if (p) {
        free(p->mem);
        free(p->free);
        free(p->is_held);
        free(p);
    }
    return err;
}
/* end snippet */

void cio__pool_free(struct cio *a)
{
    if (!a->pool)
        return;
    free(a->pool->mem);
    free(a->pool->free);
    free(a->pool->is_held);
    free(a->pool);
    a->pool = NULL;
}

int cio_buf_pool(struct cio *a, unsigned count)
{
    if (a->pool)
        return -EBUSY;
    if (count == 0 || count > 32768 || (count & (count - 1)))
        return -EINVAL; /* io_uring's buffer ring wants a power of two, at most 2^15 */
    a->pool_count = count;
    return 0;
}

unsigned cio_buf_held(const struct cio *a)
{
    return a->pool ? a->pool->held : 0;
}

/* snippet: take */
bool cio__buf_take(struct cio *a, struct cio_op *op, unsigned *id)
{
    struct cio_pool *p = a->pool;

    if (op->flags & CIO__HANDED) { /* its turn came: this one is its own */
        op->flags &= ~CIO__HANDED;
        *id = cio__buf_id(a, op->buf);
        return true;
    }
    if (!list_empty(&p->waiting) || p->nfree == 0)
        return false; /* the receives that wait come first */
    *id = p->free[--p->nfree];
    return true;
}
/* end snippet */

void cio__buf_give(struct cio *a, unsigned id)
{
    struct cio_pool *p = a->pool;

    if (a->be->pool_give && list_empty(&p->waiting)) {
        a->be->pool_give(a, id); /* nobody waits: the kernel may hand it to anyone */
        p->in_ring++;
    } else {
        p->free[p->nfree++] = id;
    }
}

void cio__buf_taken(struct cio *a)
{
    a->pool->in_ring--;
}

/* snippet: release */
void cio_buf_release(struct cio *a, void *buf)
{
    struct cio_pool *p = a->pool;
    uintptr_t off = p ? (uintptr_t)buf - (uintptr_t)p->mem : 0;
    unsigned id = (unsigned)(off / CIO_BUF_SIZE);

    if (!p || off % CIO_BUF_SIZE != 0 || off / CIO_BUF_SIZE >= p->count || !p->is_held[id]) {
        fprintf(stderr, "cio_buf_release(%p): not a pool buffer the caller holds\n", buf);
        abort(); /* a double release would hand one buffer to two receives */
    }
    p->is_held[id] = 0;
    p->held--;
    cio__buf_give(a, id); /* a parked op gets it in the next cio_run() */
}
/* end snippet */

void cio__complete_pooled(struct cio *a, struct cio_op *op, unsigned id, int res)
{
    a->pool->is_held[id] = 1;
    a->pool->held++;
    op->flags &= ~CIO__HANDED;
    op->buf = cio__buf(a, id);
    cio__complete(a, op, res);
}

void cio__unhand(struct cio *a, struct cio_op *op)
{
    op->flags &= ~CIO__HANDED;
    cio__buf_give(a, cio__buf_id(a, op->buf));
    op->buf = NULL;
}

/* snippet: park */
void cio__park(struct cio *a, struct cio_op *op)
{
    if (op->flags & CIO__CANCELLED) { /* asked to stop while it looked for a buffer */
        cio__complete(a, op, -ECANCELED);
        return;
    }
    if (a->pool->in_ring > 0) {
        /* io_uring: the ring was empty when its bytes came, but a buffer
         * went back into it before this CQE was reaped (nobody waited
         * then). Parked, the op would wait for the free stack while that
         * buffer sat in the ring: ask the kernel again. */
        a->be->submit(a, op);
        return;
    }
    op->flags |= CIO__PARKED;
    list_insert(&a->pool->waiting, &op->waiting); /* at the front: the back has waited longest */
}
/* end snippet */

void cio__unpark_cancel(struct cio *a, struct cio_op *op)
{
    list_remove(&op->waiting);
    op->flags &= ~CIO__PARKED;
    cio__complete(a, op, -ECANCELED);
}

/* snippet: unpark */
/* Before waiting: each free buffer to the receive that has waited longest,
 * named (op->buf, CIO__HANDED), and the receive submitted again. Its bytes
 * are there: a readiness backend takes them at once; io_uring receives
 * into that buffer; IOCP's zero-byte receive completes at once. An op that
 * finds no bytes after all (IOCP, a spurious wake-up) gives the buffer back,
 * to the next in line. Once nobody waits, the rest go back to the ring. */
void cio__unpark(struct cio *a)
{
    struct cio_pool *p = a->pool;

    if (!p)
        return;
    while (!list_empty(&p->waiting) && p->nfree > 0) {
        struct cio_op *op = list_entry(p->waiting.prev, struct cio_op, waiting);

        list_remove(&op->waiting);
        op->flags = (op->flags & ~CIO__PARKED) | CIO__HANDED;
        op->buf = cio__buf(a, p->free[--p->nfree]);
        a->be->submit(a, op);
    }
    while (a->be->pool_give && list_empty(&p->waiting) && p->nfree > 0) {
        a->be->pool_give(a, p->free[--p->nfree]);
        p->in_ring++;
    }
}
/* end snippet */
