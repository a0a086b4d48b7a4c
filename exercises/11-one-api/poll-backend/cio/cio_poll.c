/* SPDX-License-Identifier: MIT */
/* cio_poll.c: the poll() backend of the cio library. CIO_BACKEND=poll
 * selects it; it is never the default (epoll and kqueue come first). Its
 * interest list and its wait are the exercise 11-one-api/poll-backend.
 *
 * Like cio_epoll.c, it only tells the kernel which fds to watch and waits;
 * ready.c does the rest (trying each op, queueing it on EAGAIN, completing
 * it). The difference is where the interest list lives: epoll keeps it in
 * the kernel and takes changes one epoll_ctl() at a time; poll() is handed
 * the whole list on every call, so here it is an array we keep ourselves:
 *
 *   pfds[0 .. npfds)   one struct pollfd per watched fd, in no order
 *   slot[fd]           the index of fd's entry in pfds, or -1
 *
 * POSIX, any Unix. Chapter 03 measures what handing over the whole list on
 * every call costs with thousands of connections.
 */
#include "todo.h"
#include "cio/cio_impl.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

struct poll_impl {
    struct pollfd *pfds; /* what poll() is given */
    int npfds, cap;
    int *slot; /* slot[fd]: index in pfds, -1 when fd is not watched */
    int nslots;
};

static int poll__init(struct cio *a, char *why, size_t len)
{
    (void)why;
    (void)len;
    if (!(a->impl = calloc(1, sizeof(struct poll_impl))) || ready_init(a) < 0) {
        free(a->impl);
        return -ENOMEM;
    }
    return 0;
}

static void poll__fini(struct cio *a)
{
    struct poll_impl *p = a->impl;

    offload_fini(a);
    ready_fini(a);
    free(p->pfds);
    free(p->slot);
    free(p);
}

/* Room for fd in slot[] and for one more entry in pfds. -ENOMEM if not. */
static int poll__reserve(struct poll_impl *p, int fd)
{
    if (fd >= p->nslots) {
        int n = p->nslots ? p->nslots : 64;
        int *grown;
        while (n <= fd)
            n *= 2;
        if (!(grown = realloc(p->slot, (size_t)n * sizeof(*grown))))
            return -ENOMEM;
        for (int i = p->nslots; i < n; i++)
            grown[i] = -1;
        p->slot = grown;
        p->nslots = n;
    }
    if (p->npfds == p->cap) {
        int cap = p->cap ? 2 * p->cap : 64;
        struct pollfd *grown = realloc(p->pfds, (size_t)cap * sizeof(*grown));
        if (!grown)
            return -ENOMEM;
        p->pfds = grown;
        p->cap = cap;
    }
    return 0;
}

/* ready.c wants fd watched for `want` (READY_IN, READY_OUT, both, or 0 for
 * not at all); `had` is what it asked for last time. */
static int poll__interest(struct cio *a, int fd, unsigned had, unsigned want)
{
    struct poll_impl *p = a->impl;
    int err;

    (void)had;
    if ((err = poll__reserve(p, fd)) < 0)
        return err;
    TODO("keep pfds in line with want: add, update or remove fd's entry");
    return 0;
}

static int poll__wait(struct cio *a, int timeout_ms)
{
    struct poll_impl *p = a->impl;

    timeout_ms = ready_flush(a, timeout_ms);
    TODO("poll() the array, hand fds with revents to ready_on_event()");
    return 0;
}

const struct cio_backend cio_backend_poll = {
    .name = "poll",
    .caps = CIO_CAP_READINESS | CIO_CAP_FILE_THREAD,
    .init = poll__init,
    .fini = poll__fini,
    .attach = ready_attach,
    .detach = ready_detach,
    .submit = ready_submit,
    .cancel = ready_cancel,
    .wait = poll__wait,
    .interest = poll__interest,
};
