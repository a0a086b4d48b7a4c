/* SPDX-License-Identifier: MIT */
/* rt_impl.h: what the runtime's modules share (see rt.h for the API).
 *
 *   loop.c     struct rt, the run queue, rt_block_on/rt_run, shutdown signals
 *   future.c   futures and promises: completing one queues its continuations
 *   task.c     tasks: frames, resuming, unobserved failures
 *   timer.c    the min-heap of deadlines, rt_delay
 *   when.c     rt_when_all, rt_when_any
 *   cancel.c   tokens: registrations, parent/child links, cancel_after
 *   io.c       sockets on chapter 11's cio
 *   offload.c  chapter 10's pool: rt_run_blocking, rt_read_file
 */
#ifndef CH13_RT_IMPL_H
#define CH13_RT_IMPL_H

#include "cio/cio.h" /* chapter 11 */
#include "rt.h"

#include <pthread.h>
#include <stddef.h>
#include <sys/signalfd.h>

#define RT_CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* snippet: timer */
/* One deadline in the heap. The heap orders by (deadline, seq): of two
 * timers due at the same millisecond, the one armed first fires first. */
struct rt_timer {
    int64_t deadline_ms;
    uint64_t seq;
    size_t slot;                      /* index in rt.heap; RT_TIMER_IDLE when not in it */
    void (*fire)(struct rt_timer *t); /* runs on the loop thread when due */
};
/* end snippet */
#define RT_TIMER_IDLE ((size_t)-1)

/* snippet: reg */
/* Something to stop when a token is cancelled: an operation in flight, a
 * timer, a child token. Linked into the token until it is over. */
struct rt_reg {
    void (*cancel)(struct rt_reg *r);
    struct rt_token *tok;       /* NULL: not registered */
    struct rt_reg *prev, *next; /* by hand, not list.h: exercise cancel-token walks it */
};

struct rt_token {
    struct rt *rt;
    bool cancelled;
    struct rt_token *parent;
    struct rt_reg link;       /* in the parent's list: cancels this one with it */
    struct rt_reg *regs;      /* what this token cancels */
    struct rt_timer deadline; /* cancel_after */
};
/* end snippet */

/* An operation on cio: a future around a cio_op. */
struct rt_io {
    struct rt_future f;
    struct cio_op op;
    struct rt_reg reg;
    void **bufp; /* rt_recv_pooled: where the pool buffer's address goes */
};

struct rt_pool; /* offload.c */

/* snippet: rt */
struct rt {
    struct cio *io;                          /* chapter 11: the backend */
    struct rt_cont *ready_head, *ready_tail; /* the run queue (FIFO) */
    bool inline_conts; /* RT_INLINE_CONTINUATIONS=1: no trampoline (to show the bug) */
    bool trace;        /* RT_TRACE=1 */

    struct rt_timer **heap; /* min-heap of deadlines */
    size_t nheap, heap_cap;
    uint64_t timer_seq;

    struct rt_token *root;  /* cancelled by SIGINT/SIGTERM */
    struct list_node tasks; /* live (rt_task.link): started, not returned */
    unsigned ntasks;
    unsigned pending;  /* operations and pool jobs in flight (not the signal read) */
    unsigned nfutures; /* futures allocated and not yet freed: a leak shows here */

    bool running; /* inside rt_block_on/rt_run, on loop_thread */
    pthread_t loop_thread;

    int sig_fd; /* signalfd, or -1 */
    bool sig_busy;
    struct cio_op sig_op;
    struct signalfd_siginfo sig_info;

    struct rt_pool *pool; /* started by the first blocking call */
};
/* end snippet */

void *rt__alloc(size_t size); /* calloc, or exit on ENOMEM */

/* loop.c: queue a continuation on the run queue. */
void rt__post(struct rt *rt, struct rt_cont *c);

/* future.c */
void rt__future_init(struct rt_future *f, struct rt *rt, const char *name, unsigned refs,
                     void (*free_fn)(struct rt_future *));
void rt__future_complete(struct rt_future *f, long res);
/* Queue c when f completes (now, if it has). */
void rt__future_on_done(struct rt_future *f, struct rt_cont *c);

/* timer.c */
void rt__timer_add(struct rt *rt, struct rt_timer *t, unsigned ms);
bool rt__timer_remove(struct rt *rt, struct rt_timer *t);
/* Milliseconds until the next deadline: 0 if due, -1 if there is none. */
int rt__timer_wait_ms(struct rt *rt);
void rt__timers_expire(struct rt *rt);

/* cancel.c: false when tok is already cancelled (then nothing is registered). */
bool rt__token_register(struct rt_token *tok, struct rt_reg *r, void (*cancel)(struct rt_reg *));
void rt__token_unregister(struct rt_reg *r);
void rt__tokens_init(struct rt *rt);

/* io.c: submit io->op (kind, fd, buf, len, offset set) under tok. */
struct rt_future *rt__io_start(struct rt *rt, struct rt_io *io, struct rt_token *tok);

/* offload.c: stop the pool (no job may be in flight). */
void rt__pool_stop(struct rt *rt);

#endif
