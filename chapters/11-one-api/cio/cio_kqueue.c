/* SPDX-License-Identifier: MIT */
/* cio_kqueue.c: the kqueue backend: readiness, turned into completions by
 * ready.c, as in cio_epoll.c. Native on FreeBSD and macOS; on Linux through
 * common/kqueue-linux (which maps it onto epoll and timerfds).
 *
 * Two things differ from epoll:
 *   - reading and writing are two filters (EVFILT_READ, EVFILT_WRITE) of one
 *     fd, each added and deleted on its own, so an interest change touches
 *     only the direction that changed;
 *   - kqueue has timers of its own (EVFILT_TIMER), so CIO_TIMEOUT becomes a
 *     one-shot kernel timer whose ident and udata are the op itself, and the
 *     library keeps no list.
 */
#include "cio_impl.h"

#include <sys/event.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KQ_BATCH 128 /* events taken per kevent() */

struct kq_impl {
    int kq;
    struct kevent events[KQ_BATCH];
};

static int kq__init(struct cio *a, char *why, size_t len)
{
    struct kq_impl *k = calloc(1, sizeof(*k));
    int err;

    if (!k || ready_init(a) < 0) {
        free(k);
        return -ENOMEM;
    }
    if ((k->kq = kqueue()) < 0) {
        err = -errno;
        snprintf(why, len, "kqueue: %s", strerror(errno));
        ready_fini(a);
        free(k);
        return err;
    }
    a->impl = k;
    return 0;
}

static void kq__fini(struct cio *a)
{
    struct kq_impl *k = a->impl;

    offload_fini(a);
    ready_fini(a);
    close(k->kq);
    free(k);
}

static int kq__change(struct kq_impl *k, struct kevent *changes, int n)
{
    return n == 0 || kevent(k->kq, changes, n, NULL, 0, NULL) == 0 ? 0 : -errno;
}

/* snippet: interest */
static int kq__interest(struct cio *a, int fd, unsigned had, unsigned want)
{
    struct kevent ch[2];
    int n = 0, err;

    if ((had ^ want) & READY_IN)
        EV_SET(&ch[n++], fd, EVFILT_READ, want & READY_IN ? EV_ADD : EV_DELETE, 0, 0, NULL);
    if ((had ^ want) & READY_OUT)
        EV_SET(&ch[n++], fd, EVFILT_WRITE, want & READY_OUT ? EV_ADD : EV_DELETE, 0, 0, NULL);
    err = kq__change(a->impl, ch, n);
    return err == -ENOENT && !want ? 0 : err; /* already gone with a close() */
}
/* end snippet */

/* snippet: timer */
static void kq__submit(struct cio *a, struct cio_op *op)
{
    struct kevent ch;
    int err;

    if (op->kind != CIO_TIMEOUT) {
        ready_submit(a, op);
        return;
    }
    if (op->timeout_ms == 0) { /* a zero timer is refused by some kernels */
        cio__complete(a, op, -ETIME);
        return;
    }
    EV_SET(&ch, (uintptr_t)op, EVFILT_TIMER, EV_ADD | EV_ONESHOT, 0, op->timeout_ms, op);
    err = kq__change(a->impl, &ch, 1);
    if (err == -EMFILE || err == -ENFILE)
        /* On Linux a kqueue timer is a timerfd: out of fds, there is none
         * to have, and a server that retries accept() on a timer would
         * spin. The library's own list needs no fd. */
        cio__timer_add(a, op);
    else if (err < 0)
        cio__complete(a, op, err);
}

static void kq__cancel(struct cio *a, struct cio_op *op)
{
    struct kevent ch;

    if (op->kind != CIO_TIMEOUT || cio__timer_remove(a, op)) {
        if (op->kind == CIO_TIMEOUT)
            cio__complete(a, op, -ECANCELED); /* it was on the library's list */
        else
            ready_cancel(a, op);
        return;
    }
    /* Deleting the timer also drops its event if it fired and was not yet
     * collected: every fired timer is collected by kq__wait, so an op still
     * in flight always has its timer. */
    EV_SET(&ch, (uintptr_t)op, EVFILT_TIMER, EV_DELETE, 0, 0, NULL);
    if (kq__change(a->impl, &ch, 1) == 0)
        cio__complete(a, op, -ECANCELED);
}
/* end snippet */

static int kq__wait(struct cio *a, int timeout_ms)
{
    struct kq_impl *k = a->impl;
    struct timespec ts = {.tv_sec = timeout_ms / 1000, .tv_nsec = (timeout_ms % 1000) * 1000000L};
    int n;

    timeout_ms = ready_flush(a, timeout_ms);
    if (timeout_ms == 0)
        ts = (struct timespec){0, 0};
    n = kevent(k->kq, NULL, 0, k->events, KQ_BATCH, timeout_ms < 0 ? NULL : &ts);
    if (n < 0)
        return errno == EINTR ? 0 : -errno;
    for (int i = 0; i < n; i++) {
        struct kevent *ev = &k->events[i];
        if (ev->filter == EVFILT_TIMER)
            cio__complete(a, ev->udata, -ETIME); /* EV_ONESHOT: the timer is gone */
        else
            /* EV_EOF or an error: the next call on the fd returns it */
            ready_on_event(a, (int)ev->ident, ev->filter == EVFILT_READ ? READY_IN : READY_OUT);
    }
    return 0;
}

const struct cio_backend cio_backend_kqueue = {
    .name = "kqueue",
    .caps = CIO_CAP_READINESS | CIO_CAP_FILE_THREAD | CIO_CAP_TIMER_KERNEL,
    .init = kq__init,
    .fini = kq__fini,
    .attach = ready_attach,
    .detach = ready_detach,
    .submit = kq__submit,
    .cancel = kq__cancel,
    .wait = kq__wait,
    .interest = kq__interest,
};
