/* SPDX-License-Identifier: MIT */
/* cio_epoll.c: the epoll backend (Linux 2.6.28+): readiness, turned into
 * completions by ready.c.
 *
 * All this file does is what differs from kqueue and poll: keep epoll's
 * interest list in line with what ready.c wants (one epoll_ctl() per
 * change, level-triggered), and wait. An event names the fd in data.fd;
 * ready.c finds the ops waiting on it. Regular-file reads go to
 * offload.c's thread (epoll_ctl() refuses regular files with EPERM).
 */
#include "cio_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define EPOLL_BATCH 128 /* events taken per epoll_wait() */

struct epoll_impl {
    int epfd;
    struct epoll_event events[EPOLL_BATCH];
};

static int epoll__init(struct cio *a, char *why, size_t len)
{
    struct epoll_impl *e = calloc(1, sizeof(*e));
    int err;

    if (!e || ready_init(a) < 0) {
        free(e);
        return -ENOMEM;
    }
    if ((e->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        err = -errno;
        snprintf(why, len, "epoll_create1: %s", strerror(errno));
        ready_fini(a);
        free(e);
        return err;
    }
    a->impl = e;
    return 0;
}

static void epoll__fini(struct cio *a)
{
    struct epoll_impl *e = a->impl;

    offload_fini(a);
    ready_fini(a);
    close(e->epfd);
    free(e);
}

/* snippet: interest */
static int epoll__interest(struct cio *a, int fd, unsigned had, unsigned want)
{
    struct epoll_impl *e = a->impl;
    struct epoll_event ev = {.data.fd = fd};
    int op = !had ? EPOLL_CTL_ADD : !want ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;

    if (want & READY_IN)
        ev.events |= EPOLLIN | EPOLLRDHUP;
    if (want & READY_OUT)
        ev.events |= EPOLLOUT;
    if (epoll_ctl(e->epfd, op, fd, &ev) == 0)
        return 0;
    /* A registration outlived a close() we did not see (a dup() of the fd
     * lives on), or vanished with one: do what the state really needs. */
    if (errno == EEXIST && op == EPOLL_CTL_ADD)
        op = EPOLL_CTL_MOD;
    else if (errno == ENOENT && op == EPOLL_CTL_MOD)
        op = EPOLL_CTL_ADD;
    else if (errno == ENOENT && op == EPOLL_CTL_DEL)
        return 0;
    else
        return -errno;
    return epoll_ctl(e->epfd, op, fd, &ev) == 0 ? 0 : -errno;
}
/* end snippet */

/* snippet: wait */
static int epoll__wait(struct cio *a, int timeout_ms)
{
    struct epoll_impl *e = a->impl;
    int n;

    timeout_ms = ready_flush(a, timeout_ms);
    n = epoll_wait(e->epfd, e->events, EPOLL_BATCH, timeout_ms);
    if (n < 0)
        return errno == EINTR ? 0 : -errno;
    for (int i = 0; i < n; i++) {
        uint32_t ev = e->events[i].events;
        unsigned ready = 0;

        /* An error or a hang-up wakes both queues: the next recv or send
         * returns the error (or 0), which completes the op. */
        if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
            ready |= READY_IN;
        if (ev & (EPOLLOUT | EPOLLHUP | EPOLLERR))
            ready |= READY_OUT;
        ready_on_event(a, e->events[i].data.fd, ready);
    }
    return 0;
}
/* end snippet */

/* snippet: table */
const struct cio_backend cio_backend_epoll = {
    .name = "epoll",
    .caps = CIO_CAP_READINESS | CIO_CAP_FILE_THREAD,
    .init = epoll__init,
    .fini = epoll__fini,
    .attach = ready_attach,
    .detach = ready_detach,
    .submit = ready_submit,
    .cancel = ready_cancel,
    .wait = epoll__wait,
    .interest = epoll__interest,
};
/* end snippet */
