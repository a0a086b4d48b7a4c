/* SPDX-License-Identifier: MIT */
/* cio_impl.h: what the parts of the library share, and the backend table.
 *
 * One file per backend (cio_uring.c, cio_epoll.c, cio_kqueue.c, cio_iocp.c,
 * and the exercise's cio_poll.c), each filling one `struct cio_backend`, as
 * redis's ae_epoll.c and ae_kqueue.c fill the same set of functions. The
 * table is chosen at run time, so one binary carries several backends and
 * AIO_BACKEND picks one; nginx's event modules work the same way.
 *
 * The readiness backends share two helpers: ready.c, which turns readiness
 * into completions, and offload.c, which reads regular files on a worker
 * thread. Their backend files are left with only what differs: how to tell
 * the kernel which fds to watch, and how to wait.
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
    CIO__PARKED = 1u << 2,    /* RECV_POOLED waiting in the pool's list for a buffer */
    CIO__RESUMED = 1u << 3,   /* RECV_POOLED taken off that list; the backend has not said
                                 yet whether it got a buffer (completion backends) */
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
     * the pool's free stack in cio.c is used. */
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
 * first CIO_RECV_POOLED. Buffer `id` starts at mem + id * CIO_BUF_SIZE. */
struct cio_pool {
    char *mem;
    unsigned count;
    unsigned avail;         /* can be handed out now: on the free stack, or in the kernel's ring */
    unsigned held;          /* brought by a completed recv, not yet released */
    unsigned promised;      /* parked ops resubmitted to a completion backend, not yet settled */
    unsigned *free;         /* the free stack (no pool_give): the buffer given back last is taken
                               first, while it is still in the CPU's cache */
    unsigned char *is_held; /* per buffer: catches a double or a wrong cio_buf_release() */
    struct cio_op *parked_head, *parked_tail; /* waiting for a buffer, oldest first */
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
    unsigned in_flight;    /* submitted, not yet called back (internal ops aside) */
    bool trace;            /* AIO_TRACE=1 */
};

/* cio.c: an op is over; its callback runs in cio_run(), in this order. */
void cio__complete(struct cio *a, struct cio_op *op, int res);
/* The library's list of timeouts, for backends without kernel timers. */
void cio__timer_add(struct cio *a, struct cio_op *op);
bool cio__timer_remove(struct cio *a, struct cio_op *op);

/* cio.c: the pool of pooled receives (see struct cio_pool).
 * A buffer from the free stack (false: none free). */
bool cio__buf_take(struct cio *a, unsigned *id);
/* Buffer id goes back to where buffers are handed out from (no op is woken:
 * cio_run() resubmits parked ops before it waits). */
void cio__buf_give(struct cio *a, unsigned id);
/* The kernel handed buffer id out (io_uring): one fewer to hand out. */
void cio__buf_taken(struct cio *a, unsigned id);
static inline char *cio__buf(const struct cio *a, unsigned id)
{
    return a->pool->mem + (size_t)id * CIO_BUF_SIZE;
}
/* A pooled recv brought res > 0 bytes in buffer id: complete it. */
void cio__complete_pooled(struct cio *a, struct cio_op *op, unsigned id, int res);
/* No buffer for op: it waits in the pool's list (or, cancelled, completes). */
void cio__park(struct cio *a, struct cio_op *op);
/* A resumed op found no bytes after all and waits for them again (IOCP). */
void cio__settled(struct cio *a, struct cio_op *op);

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
