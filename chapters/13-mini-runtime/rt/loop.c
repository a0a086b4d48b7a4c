/* SPDX-License-Identifier: MIT */
/* loop.c: the runtime itself: the run queue, the loop, shutdown.
 *
 * One turn of the loop:
 *
 *     run queue: [resume t3][when_all arm][resume t1]   run each, in order
 *          │        (taken whole: what they queue waits for the next turn)
 *          ▼
 *     cio_run(timeout)      chapter 11: completions of I/O become futures
 *          │                completed, their continuations queued
 *          ▼                timeout = 0 if the queue is not empty, else
 *     timers due fire       until the next deadline in the heap
 *
 * rt_block_on(f) turns the loop until f completes; rt_run() until no task
 * is left. Both refuse to run inside a turn: a task that blocks on a future
 * would wait for the loop that it is itself holding up.
 */
#include "net.h"
#include "rt_impl.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool loop__env_is(const char *name, const char *value)
{
    const char *v = getenv(name);

    return v && strcmp(v, value) == 0;
}

struct rt *rt_create(int *err, char *why, size_t whylen)
{
    const char *backend = getenv("RT_BACKEND");
    struct cio *io;
    struct rt *rt;

    if (backend && *backend)
        setenv("CIO_BACKEND", backend, 1); /* cio's own switch */
    if (!(io = cio_create(err, why, whylen))) {
        if (*err == -EINVAL && backend && *backend)
            snprintf(why, whylen, "RT_BACKEND=%s: no such backend (there are: uring epoll kqueue)",
                     backend);
        return NULL;
    }
    rt = rt__alloc(sizeof(*rt));
    rt->io = io;
    list_init(&rt->tasks);
    rt->sig_fd = -1;
    rt->trace = loop__env_is("RT_TRACE", "1");
    rt->inline_conts = loop__env_is("RT_INLINE_CONTINUATIONS", "1");
    rt->root = rt_token_new(rt, NULL);
    return rt;
}

const char *rt_backend_name(const struct rt *rt)
{
    return cio_backend_name(rt->io);
}

bool rt_files_native(const struct rt *rt)
{
    return cio_caps(rt->io) & CIO_CAP_FILE_ASYNC;
}

/* snippet: post */
void rt__post(struct rt *rt, struct rt_cont *c)
{
    if (rt->inline_conts) { /* what chapter 12's task_complete() did: recursion */
        c->run(c);
        return;
    }
    c->next = NULL;
    if (rt->ready_tail)
        rt->ready_tail->next = c;
    else
        rt->ready_head = c;
    rt->ready_tail = c;
}
/* end snippet */

static void loop__run_ready(struct rt *rt)
{
    struct rt_cont *c = rt->ready_head, *next;

    rt->ready_head = rt->ready_tail = NULL;
    for (; c; c = next) {
        next = c->next;
        c->run(c);
    }
}

static void loop__report_stuck(struct rt *rt)
{
    struct list_node *n;

    fprintf(stderr,
            "rt: deadlock: nothing is in flight and no timer is pending, so nothing can ever "
            "complete what is awaited (%u tasks live):\n",
            rt->ntasks);
    list_for_each(n, &rt->tasks) {
        struct rt_task *t = list_entry(n, struct rt_task, link);
        fprintf(stderr, "rt:   task %s awaits %s\n", t->f.name,
                t->awaiting ? t->awaiting->name : "nothing (queued?)");
    }
}

/* snippet: loop */
/* Turn until `f` completes (f NULL: until no task is left). */
static int loop__run(struct rt *rt, struct rt_future *f)
{
    for (;;) {
        int timeout, ret;

        loop__run_ready(rt);
        if (f ? f->done : rt->ntasks == 0)
            return 0;
        timeout = rt->ready_head ? 0 : rt__timer_wait_ms(rt);
        if (timeout < 0 && rt->pending == 0 && !rt->sig_busy) {
            loop__report_stuck(rt);
            return -EDEADLK;
        }
        if ((ret = cio_run(rt->io, timeout)) < 0) {
            fprintf(stderr, "rt: cio_run(%s): %s\n", rt_backend_name(rt), strerror(-ret));
            return ret;
        }
        rt__timers_expire(rt);
    }
}
/* end snippet */

/* snippet: enter */
static int loop__enter(struct rt *rt, const char *what)
{
    if (!rt->running) {
        rt->running = true;
        rt->loop_thread = pthread_self();
        return 0;
    }
    if (pthread_equal(rt->loop_thread, pthread_self()))
        fprintf(stderr,
                "rt: %s() called from inside the loop (by a task, on the loop thread): it would "
                "wait for the loop that it is itself blocking, for ever. Await the future instead "
                "(.NET: .Result or .Wait() on a task that needs this thread).\n",
                what);
    else
        fprintf(stderr, "rt: %s() from another thread while the loop runs: not supported\n", what);
    return -EDEADLK;
}
/* end snippet */

long rt_block_on(struct rt *rt, struct rt_future *f)
{
    int err;

    if ((err = loop__enter(rt, "rt_block_on")) < 0)
        return err; /* f stays the caller's */
    err = loop__run(rt, f);
    rt->running = false;
    if (err < 0) {
        rt_future_release(f);
        return err;
    }
    return rt_future_take(f);
}

int rt_run(struct rt *rt)
{
    int err;

    if ((err = loop__enter(rt, "rt_run")) < 0)
        return err;
    err = loop__run(rt, NULL);
    rt->running = false;
    return err;
}

/* ---- shutdown on SIGINT/SIGTERM ------------------------------------------------ */

/* snippet: signal */
static void loop__on_signal(struct cio *a, struct cio_op *op)
{
    struct rt *rt = op->user_data;

    rt->sig_busy = false;
    if (op->res == -ECANCELED)
        return;
    if (op->res < 0) {
        fprintf(stderr, "rt: read(signalfd): %s\n", strerror((int)-op->res));
        return;
    }
    rt_token_cancel(rt->root); /* every task sees -ECANCELED and winds down */
    rt->sig_busy = cio_submit(a, op) == 0;
}
/* end snippet */

/* The signals are blocked and read from a signalfd, as one more operation:
 * no handler runs in the middle of anything (chapter 11's echo-aio). */
int rt_shutdown_on_signals(struct rt *rt)
{
    int err;

    if ((rt->sig_fd = net_signalfd(SFD_NONBLOCK)) < 0) /* net.c */
        return rt->sig_fd;
    if ((err = cio_attach(rt->io, rt->sig_fd)) < 0)
        return err;
    rt->sig_op = (struct cio_op){.kind = CIO_READ_FILE,
                                 .fd = rt->sig_fd,
                                 .buf = &rt->sig_info,
                                 .len = sizeof(rt->sig_info),
                                 .offset = -1,
                                 .cb = loop__on_signal,
                                 .user_data = rt};
    if ((err = cio_submit(rt->io, &rt->sig_op)) < 0)
        return err;
    rt->sig_busy = true;
    return 0;
}

void rt_destroy(struct rt *rt)
{
    struct list_node *n;

    if (!rt)
        return;
    if (rt->sig_busy)
        cio_cancel(rt->io, &rt->sig_op);
    while (rt->sig_busy) /* the kernel may write into sig_info until then */
        if (cio_run(rt->io, -1) < 0)
            break;
    rt__pool_stop(rt);
    if (rt->ntasks > 0 || rt->pending > 0) {
        /* Freeing them would free buffers the kernel may still write to. */
        fprintf(stderr, "rt_destroy: %u tasks and %u operations still alive: not freed\n",
                rt->ntasks, rt->pending);
        list_for_each(n, &rt->tasks)
            fprintf(stderr, "rt:   task %s\n", list_entry(n, struct rt_task, link)->f.name);
        return;
    }
    loop__run_ready(rt); /* combinator arms of the last completions */
    /* A reference nobody released: its memory stays allocated. Say so. */
    if (rt->nfutures > 0)
        fprintf(stderr, "rt_destroy: %u futures never released (a leak)\n", rt->nfutures);
    rt_token_free(rt->root);
    if (rt->sig_fd >= 0) {
        cio_detach(rt->io, rt->sig_fd);
        close(rt->sig_fd);
    }
    cio_destroy(rt->io);
    free(rt->heap);
    free(rt);
}
