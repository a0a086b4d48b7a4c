/* SPDX-License-Identifier: MIT */
/* cio_impl.h: what the parts of the library share, and the backend table.
 *
 * One file per backend (cio_uring.c, cio_epoll.c, cio_kqueue.c, cio_iocp.c,
 * and the exercise's cio_poll.c), each filling one `struct cio_backend`, as
 * redis's ae_epoll.c and ae_kqueue.c fill the same set of functions. The
 * table is chosen at run time, so one binary carries several backends and
 * CIO_BACKEND picks one; nginx's event modules work the same way.
 *
 * Every backend shares cio.c (the choice of backend, submit, cancel, the
 * queue of completions, the library's timer list) and bufpool.c (the pool
 * of buffers for pooled receives, and the receives waiting for one). The
 * readiness backends share two more helpers: ready.c, which turns readiness
 * into completions, and offload.c, which reads regular files on a worker
 * thread; their backend files are left with only what differs: how to tell
 * the kernel which fds to watch, and how to wait. The POSIX backends take
 * CIO_STOP from stop.c; IOCP has its own.
 */
#ifndef CH11_CIO_IMPL_H
#define CH11_CIO_IMPL_H

#include "cio.h"

#include <stdbool.h>

/* cio_op.state */
enum { CIO__IDLE, CIO__IN_FLIGHT, CIO__DONE };
/* cio_op.flags */
enum {
    CIO__INTERNAL = 1u << 0,  /* the library's own op: not counted, never traced */
    CIO__CANCELLED = 1u << 1, /* cio_cancel() was asked for it */
    CIO__PARKED = 1u << 2,    /* RECV_POOLED waiting in the pool's queue for a buffer */
    CIO__HANDED = 1u << 3,    /* RECV_POOLED taken off that queue with a buffer of its own
                                 (op->buf): the backend receives into it */
};

/* snippet: backend */
struct cio_backend {
    const char *name;
    unsigned caps; /* enum cio_cap */
    /* Set up a->impl (and a->ready for readiness backends). 0, or -errno
     * with the reason in `why` (io_uring may be forbidden here). */
    int (*init)(struct cio *a, char *why, size_t len);
    /* Free everything init made. No op is in flight. */
    void (*fini)(struct cio *a);
    /* A new fd: non-blocking, tied to a port... 0 or -errno. */
    int (*attach)(struct cio *a, cio_fd fd);
    /* The fd is about to be closed: forget it. */
    void (*detach)(struct cio *a, cio_fd fd);
    /* Start the op. Never fails: an error completes the op (cio__complete). */
    void (*submit)(struct cio *a, struct cio_op *op);
    /* Stop the op if it can; it completes either way, now or later. */
    void (*cancel)(struct cio *a, struct cio_op *op);
    /* Sleep up to timeout_ms (-1: for ever) for the kernel's reports, and
     * turn them into completions (cio__complete). 0 or -errno. */
    int (*wait)(struct cio *a, int timeout_ms);
    /* Readiness backends only (ready.c calls it): make the kernel report fd
     * when it becomes readable (READY_IN) and/or writable (READY_OUT), as in
     * `want`; `had` is what it reports now. 0 or -errno. */
    int (*interest)(struct cio *a, int fd, unsigned had, unsigned want);
    /* Optional, for a kernel that hands out pool buffers itself (io_uring):
     * take every buffer of a->pool (0 or -errno), and take one back. NULL:
     * the pool's free stack in bufpool.c is used. */
    int (*pool_init)(struct cio *a);
    void (*pool_give)(struct cio *a, unsigned id);
};
/* end snippet */

extern const struct cio_backend cio_backend_epoll;
extern const struct cio_backend cio_backend_kqueue;
extern const struct cio_backend cio_backend_uring;
extern const struct cio_backend cio_backend_iocp;
extern const struct cio_backend cio_backend_poll;

struct ready;
struct offload;

/* snippet: pool */
/* The buffers of pooled receives: count * CIO_BUF_SIZE bytes, made at the
 * first CIO_RECV_POOLED. Buffer `id` starts at mem + id * CIO_BUF_SIZE.
 * A free buffer is in one of two places: the kernel's ring (a backend with
 * pool_give), from which the kernel hands it to whichever receive's bytes
 * come first; or the library's free stack, from which bufpool.c hands it
 * out itself. While a receive waits, freed buffers go to the stack, so that
 * they reach the waiting receives in their order. */
struct cio_pool {
    char *mem;
    unsigned count;
    unsigned nfree;           /* on the free stack */
    unsigned in_ring;         /* in the kernel's ring (pool_give), as far as the CQEs reaped say */
    unsigned held;            /* brought by a completed recv, not yet released */
    unsigned *free;           /* the free stack: the buffer given back last is taken first,
                                 while it is still in the CPU's cache */
    unsigned char *is_held;   /* per buffer: catches a double or a wrong cio_buf_release() */
    struct list_node waiting; /* parked receives (cio_op.waiting): the newest at the front,
                                 the one that has waited longest at the back */
};
/* end snippet */

struct cio {
    const struct cio_backend *be;
    void *impl;               /* the backend's own state */
    struct ready *ready;      /* readiness backends: the adapter's per-fd queues */
    struct offload *offload;  /* readiness backends: the file worker, once needed */
    struct cio_op *done_head; /* completed, callbacks not yet run (FIFO) */
    struct cio_op *done_tail;
    struct cio_op *timers; /* TIMEOUTs the library keeps, soonest first */
    struct cio_pool *pool; /* pooled receives' buffers, once one is submitted */
    unsigned pool_count;   /* the pool's size when it is made (cio_buf_pool) */
    struct cio_stop *stop; /* CIO_STOP's source (stop.c, or the IOCP backend), once made */
    unsigned in_flight;    /* submitted, not yet called back (internal ops aside) */
    bool trace;            /* CIO_TRACE=1 */
};

/* cio.c: an op is over; its callback runs in cio_run(), in this order. */
void cio__complete(struct cio *a, struct cio_op *op, int res);
/* The library's list of timeouts, for backends without kernel timers. */
void cio__timer_add(struct cio *a, struct cio_op *op);
bool cio__timer_remove(struct cio *a, struct cio_op *op);

/* bufpool.c: the pool of pooled receives (see struct cio_pool). */
int cio__pool_create(struct cio *a);
void cio__pool_free(struct cio *a);
/* A buffer for op, whose bytes have come: the one handed to it (CIO__HANDED),
 * else one from the free stack, unless another receive waits for a buffer
 * (it comes first). false: none; the op is to be parked. */
bool cio__buf_take(struct cio *a, struct cio_op *op, unsigned *id);
/* Buffer id is free again: to the free stack while a receive waits (for
 * cio__unpark to hand out), else to where buffers are handed out from. */
void cio__buf_give(struct cio *a, unsigned id);
static inline char *cio__buf(const struct cio *a, unsigned id)
{
    return a->pool->mem + (size_t)id * CIO_BUF_SIZE;
}
static inline unsigned cio__buf_id(const struct cio *a, const void *buf)
{
    return (unsigned)(((const char *)buf - a->pool->mem) / CIO_BUF_SIZE);
}
/* The kernel took a buffer from its ring (a CQE with IORING_CQE_F_BUFFER). */
void cio__buf_taken(struct cio *a);
/* A pooled recv brought res > 0 bytes in buffer id: complete it. */
void cio__complete_pooled(struct cio *a, struct cio_op *op, unsigned id, int res);
/* The bytes have come, no buffer for op: it waits at the back of the pool's
 * queue (or, cancelled, completes). */
void cio__park(struct cio *a, struct cio_op *op);
/* A handed op gives its buffer back unused (no bytes after all, an error,
 * cancelled): op->buf is NULL again. */
void cio__unhand(struct cio *a, struct cio_op *op);
/* Cancel a parked op: off the queue, completed with -ECANCELED. */
void cio__unpark_cancel(struct cio *a, struct cio_op *op);
/* Before waiting: hand each free buffer of the stack to the receive that
 * has waited longest, and resubmit it. */
void cio__unpark(struct cio *a);

/* stop.c (POSIX) or cio_iocp.c (Windows): CIO_STOP. */
struct cio_stop;
void cio__stop_submit(struct cio *a, struct cio_op *op); /* errors: through the callback */
void cio__stop_cancel(struct cio *a, struct cio_op *op);
void cio__stop_fini(struct cio *a);

/* ready.c: the readiness-to-completion adapter (readiness backends only). */
enum { READY_IN = 1u << 0, READY_OUT = 1u << 1 };
int ready_init(struct cio *a);
void ready_fini(struct cio *a);
int ready_attach(struct cio *a, cio_fd fd);
void ready_detach(struct cio *a, cio_fd fd);
void ready_submit(struct cio *a, struct cio_op *op);
void ready_cancel(struct cio *a, struct cio_op *op);
/* The kernel reported fd (READY_IN and/or READY_OUT; an error or hang-up
 * is both): try the ops waiting for it. */
void ready_on_event(struct cio *a, int fd, unsigned events);
/* Before sleeping: hand the interest changes made since the last wait to
 * the backend (one call per fd whose wish changed). Returns the timeout to
 * sleep with: timeout_ms, or 0 if a refused change completed ops. */
int ready_flush(struct cio *a, int timeout_ms);

/* offload.c: file reads on a worker thread, handed back through an eventfd. */
void offload_submit(struct cio *a, struct cio_op *op);
/* Take the op back if the worker has not started it; false if it has. */
bool offload_cancel(struct cio *a, struct cio_op *op);
void offload_fini(struct cio *a);

#endif
