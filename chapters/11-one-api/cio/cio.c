/* SPDX-License-Identifier: MIT */
/* cio.c: the part of the library every backend shares: choosing the
 * backend, the rules of submit and cancel, the queue of completions whose
 * callbacks are due, the trace, and a list of timeouts for backends whose
 * kernel has no timer to give (epoll, poll, IOCP). The pool of buffers that
 * pooled receives are handed is bufpool.c's; CIO_STOP is stop.c's (POSIX)
 * or the IOCP backend's.
 */
#include "cio_impl.h"

#include "clock.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tried in this order when CIO_BACKEND is not set: the first whose init
 * succeeds is the default (io_uring may be forbidden, see cio_uring.c). */
static const struct cio_backend *const cio__backends[] = {
#ifdef _WIN32
    &cio_backend_iocp,
#else
#ifdef __linux__
    &cio_backend_uring,
    &cio_backend_epoll,
#endif
    &cio_backend_kqueue,
    &cio_backend_poll,
#endif
};
#define CIO__NBACKENDS (sizeof(cio__backends) / sizeof(cio__backends[0]))

static const char *const cio__kind_names[] = {"accept",  "recv",        "send", "read-file",
                                              "timeout", "recv-pooled", "stop"};

static struct cio *cio__try(const struct cio_backend *be, int *err, char *why, size_t len)
{
    struct cio *a = calloc(1, sizeof(*a));
    const char *trace = getenv("CIO_TRACE");
    const char *bufs = getenv("CIO_BUFS");

    if (!a) {
        *err = -ENOMEM;
        snprintf(why, len, "out of memory");
        return NULL;
    }
    a->be = be;
    a->trace = trace && strcmp(trace, "1") == 0;
    if (bufs && *bufs)
        cio_buf_pool(a, (unsigned)strtoul(bufs, NULL, 10)); /* a bad count: the default */
    snprintf(why, len, "%s: %s", be->name, strerror(ENOMEM));
    if ((*err = be->init(a, why, len)) < 0) {
        free(a);
        return NULL;
    }
    return a;
}

struct cio *cio_create(int *err, char *why, size_t whylen)
{
    const char *want = getenv("CIO_BACKEND");
    char names[64] = "";

    if (want && *want) {
        for (size_t i = 0; i < CIO__NBACKENDS; i++)
            if (strcmp(want, cio__backends[i]->name) == 0)
                return cio__try(cio__backends[i], err, why, whylen);
        for (size_t i = 0; i < CIO__NBACKENDS; i++)
            snprintf(names + strlen(names), sizeof(names) - strlen(names), " %s",
                     cio__backends[i]->name);
        *err = -EINVAL;
        snprintf(why, whylen, "CIO_BACKEND=%s: no such backend in this program (it has:%s)", want,
                 names);
        return NULL;
    }
    for (size_t i = 0; i < CIO__NBACKENDS; i++) {
        struct cio *a = cio__try(cio__backends[i], err, why, whylen);
        if (a || i + 1 == CIO__NBACKENDS)
            return a;
    }
    return NULL;
}

void cio_destroy(struct cio *a)
{
    if (!a)
        return;
    if (a->in_flight > 0)
        fprintf(stderr, "cio_destroy: %u ops still in flight (a bug in the caller)\n",
                a->in_flight);
    if (a->pool && a->pool->held > 0)
        fprintf(stderr, "cio_destroy: %u pool buffers never released (a bug in the caller)\n",
                a->pool->held);
    cio__stop_fini(a);
    a->be->fini(a); /* io_uring: unregisters its buffer ring before the buffers go */
    cio__pool_free(a);
    free(a);
}

const char *cio_backend_name(const struct cio *a)
{
    return a->be->name;
}

unsigned cio_caps(const struct cio *a)
{
    return a->be->caps;
}

const char *cio_caps_text(unsigned caps, char *buf, size_t len)
{
    snprintf(buf, len, "%s; file reads %s; timeouts %s",
             caps & CIO_CAP_COMPLETION ? "completion" : "readiness",
             caps & CIO_CAP_FILE_ASYNC    ? "asynchronous in the kernel"
             : caps & CIO_CAP_FILE_THREAD ? "on a worker thread"
                                          : "blocking",
             caps & CIO_CAP_TIMER_KERNEL ? "in the kernel" : "in a list in the library");
    return buf;
}

int cio_attach(struct cio *a, cio_fd fd)
{
    return a->be->attach(a, fd);
}

void cio_detach(struct cio *a, cio_fd fd)
{
    a->be->detach(a, fd);
}

unsigned cio_in_flight(const struct cio *a)
{
    return a->in_flight;
}

#ifdef _WIN32
#define CIO__STOP_HOW "the console handler's event, then a packet on the port"
#elif defined(__linux__)
#define CIO__STOP_HOW "a read of a signalfd"
#else
#define CIO__STOP_HOW "a read of the stop pipe"
#endif

/* snippet: how */
/* How an op will complete on this backend, for CIO_TRACE. */
static const char *cio__how(const struct cio *a, const struct cio_op *op)
{
    unsigned caps = a->be->caps;

    if (op->kind == CIO_STOP)
        return CIO__STOP_HOW;
    if (op->kind == CIO_TIMEOUT)
        return caps & CIO_CAP_TIMER_KERNEL ? "kernel timer" : "timer list";
    if (op->kind == CIO_RECV_POOLED && a->be->pool_give)
        return "native, the kernel picks a buffer from the ring";
    if (op->kind == CIO_RECV_POOLED && (caps & CIO_CAP_COMPLETION))
        return "zero-byte receive, then a pool buffer";
    if (op->kind == CIO_RECV_POOLED)
        return "readiness, then a pool buffer";
    if (caps & CIO_CAP_COMPLETION)
        return "native";
    if (op->kind == CIO_READ_FILE && op->offset >= 0)
        return "offloaded to pool";
    return "readiness";
}
/* end snippet */

static void cio__trace(const struct cio *a, const struct cio_op *op)
{
    if (op->kind == CIO_TIMEOUT)
        fprintf(stderr, "cio[%s]: timeout %u ms -> %s\n", a->be->name, op->timeout_ms,
                cio__how(a, op));
    else if (op->kind == CIO_STOP)
        fprintf(stderr, "cio[%s]: stop -> %s\n", a->be->name, cio__how(a, op));
    else if (op->kind == CIO_RECV_POOLED)
        fprintf(stderr, "cio[%s]: recv-pooled fd=%lld -> %s\n", a->be->name, (long long)op->fd,
                cio__how(a, op));
    else if (op->kind == CIO_READ_FILE)
        fprintf(stderr, "cio[%s]: read-file fd=%lld len=%zu offset=%lld -> %s\n", a->be->name,
                (long long)op->fd, op->len, (long long)op->offset, cio__how(a, op));
    else
        fprintf(stderr, "cio[%s]: %s fd=%lld len=%zu -> %s\n", a->be->name,
                cio__kind_names[op->kind], (long long)op->fd, op->len, cio__how(a, op));
}

int cio_submit(struct cio *a, struct cio_op *op)
{
    int err;

    if (!op->cb || (unsigned)op->kind > CIO_STOP)
        return -EINVAL;
    if ((op->kind == CIO_RECV || op->kind == CIO_READ_FILE) && op->len == 0)
        return -EINVAL;
    if (op->len > INT_MAX) /* res, an int, must be able to say how many bytes moved */
        return -EINVAL;
    if (op->state != CIO__IDLE)
        return -EBUSY;
    op->state = CIO__IN_FLIGHT;
    op->flags &= CIO__INTERNAL;
    op->res = 0;
    op->done = 0;
    op->next = op->prev = NULL;
    if (!(op->flags & CIO__INTERNAL)) {
        a->in_flight++;
        if (a->trace)
            cio__trace(a, op);
    }
    if (op->kind == CIO_RECV_POOLED) {
        op->buf = NULL; /* the library's to set, at completion */
        if (!a->pool && (err = cio__pool_create(a)) < 0) {
            cio__complete(a, op, err); /* an error of the op: through the callback */
            return 0;
        }
    }
    if (op->kind == CIO_STOP)
        cio__stop_submit(a, op); /* not the backend's table: stop.c, or the IOCP backend */
    else
        a->be->submit(a, op);
    return 0;
}

int cio_cancel(struct cio *a, struct cio_op *op)
{
    if (op->state != CIO__IN_FLIGHT)
        return -ENOENT;
    if (op->flags & CIO__PARKED) { /* no kernel knows of it: only the pool's queue */
        op->flags |= CIO__CANCELLED;
        cio__unpark_cancel(a, op);
        return 0;
    }
    if (!(op->flags & CIO__CANCELLED)) {
        op->flags |= CIO__CANCELLED;
        if (op->kind == CIO_STOP)
            cio__stop_cancel(a, op);
        else
            a->be->cancel(a, op);
    }
    return 0;
}

void cio__complete(struct cio *a, struct cio_op *op, int res)
{
    if (op->kind == CIO_RECV_POOLED && res <= 0) {
        if (op->flags & CIO__HANDED)
            cio__unhand(a, op); /* its buffer goes to the next receive */
        op->buf = NULL;         /* no bytes, no buffer */
    }
    op->res = res;
    op->state = CIO__DONE;
    op->next = NULL;
    if (a->done_tail)
        a->done_tail->next = op;
    else
        a->done_head = op;
    a->done_tail = op;
}

/* ---- the library's timeouts: a list sorted by deadline ----------------------- */

/* O(n) insertion keeps this short; libuv keeps a binary heap instead. */
void cio__timer_add(struct cio *a, struct cio_op *op)
{
    struct cio_op **p = &a->timers, *prev = NULL;

    op->deadline_ms = clock_now_ms() + op->timeout_ms;
    while (*p && (*p)->deadline_ms <= op->deadline_ms) {
        prev = *p;
        p = &(*p)->next;
    }
    op->next = *p;
    op->prev = prev;
    if (*p)
        (*p)->prev = op;
    *p = op;
}

bool cio__timer_remove(struct cio *a, struct cio_op *op)
{
    struct cio_op *t = a->timers;

    while (t && t != op)
        t = t->next;
    if (!t)
        return false;
    if (op->prev)
        op->prev->next = op->next;
    else
        a->timers = op->next;
    if (op->next)
        op->next->prev = op->prev;
    return true;
}

static void cio__timers_expire(struct cio *a)
{
    int64_t now = clock_now_ms();

    while (a->timers && a->timers->deadline_ms <= now) {
        struct cio_op *op = a->timers;
        cio__timer_remove(a, op);
        cio__complete(a, op, -ETIME);
    }
}

/* snippet: run */
int cio_run(struct cio *a, int timeout_ms)
{
    struct cio_op *op, *next;
    int err, n = 0;

    cio__unpark(a);
    /* Completions already queued (an op that finished inside cio_submit()):
     * look for more without sleeping. A due timeout shortens the sleep. */
    if (a->done_head) {
        timeout_ms = 0;
    } else if (a->timers) {
        int64_t left = a->timers->deadline_ms - clock_now_ms();
        if (left < 0)
            left = 0;
        if (timeout_ms < 0 || left < timeout_ms)
            timeout_ms = (int)left;
    }
    if ((err = a->be->wait(a, timeout_ms)) < 0)
        return err;
    cio__timers_expire(a);

    /* Take the whole list first: an op a callback submits and that completes
     * at once waits for the next round, so no connection can hold the loop. */
    op = a->done_head;
    a->done_head = a->done_tail = NULL;
    for (; op; op = next) {
        next = op->next;
        op->state = CIO__IDLE;
        if (!(op->flags & CIO__INTERNAL)) {
            a->in_flight--;
            n++;
        }
        op->cb(a, op);
    }
    return n;
}
/* end snippet */
