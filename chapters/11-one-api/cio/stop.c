/* SPDX-License-Identifier: MIT */
/* stop.c: CIO_STOP on POSIX, for every backend but IOCP (which has its own,
 * in cio_iocp.c).
 *
 * SIGINT and SIGTERM become bytes to read: on Linux a signalfd, with the
 * two signals blocked so that they only queue there (no handler runs in the
 * middle of anything, and a process asleep in io_uring_enter(), which a
 * signal does not always wake, under valgrind for one, is woken by the
 * read); elsewhere net.c's self-pipe, whose handler writes a byte. Either
 * way the fd is made at the first CIO_STOP, and an internal op reads it, a
 * CIO_READ_FILE at offset -1 like a pipe's, on whichever backend runs: the
 * kernel's read on io_uring, the readiness adapter on the others. When that
 * read completes, so does the program's CIO_STOP.
 */
#include "cio_impl.h"

#include "net.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

struct cio_stop {
    int fd;             /* the signalfd, or the stop pipe's read end */
    struct cio_op read; /* internal: a read of fd */
    union {
#ifdef __linux__
        struct signalfd_siginfo info; /* a signalfd reads whole records */
#endif
        char byte; /* the stop pipe: one byte per signal */
    } got;
    struct cio_op *op; /* the program's CIO_STOP, while it waits */
};

static void stop__close(int fd)
{
#ifdef __linux__
    close(fd);
#else
    net_stop_pipe_close(fd);
#endif
}

/* The read is over: a signal came (the program's op completes with 0), or it
 * was cancelled, or it failed. */
static void stop__read_done(struct cio *a, struct cio_op *read)
{
    struct cio_stop *st = a->stop;
    struct cio_op *op = st->op;

    st->op = NULL;
    cio__complete(a, op, read->res > 0 ? 0 : read->res == 0 ? -EPIPE : read->res);
}

static int stop__open(struct cio *a)
{
    struct cio_stop *st = calloc(1, sizeof(*st));
    int err;

    if (!st)
        return -ENOMEM;
#ifdef __linux__
    st->fd = net_signalfd(SFD_NONBLOCK); /* blocks SIGINT and SIGTERM in this thread */
#else
    st->fd = net_stop_pipe();
#endif
    if (st->fd < 0) {
        err = st->fd;
        free(st);
        return err;
    }
    if ((err = cio_attach(a, st->fd)) < 0) {
        stop__close(st->fd);
        free(st);
        return err;
    }
    a->stop = st;
    return 0;
}

void cio__stop_submit(struct cio *a, struct cio_op *op)
{
    struct cio_stop *st;
    int err;

    if (!a->stop && (err = stop__open(a)) < 0) {
        cio__complete(a, op, err);
        return;
    }
    st = a->stop;
    if (st->op) {
        cio__complete(a, op, -EBUSY); /* one at a time */
        return;
    }
    st->op = op;
    st->read = (struct cio_op){.kind = CIO_READ_FILE,
                               .fd = st->fd,
                               .buf = &st->got,
                               .len = sizeof(st->got),
                               .offset = -1,
                               .cb = stop__read_done,
                               .flags = CIO__INTERNAL};
    if ((err = cio_submit(a, &st->read)) < 0) {
        st->op = NULL;
        cio__complete(a, op, err);
    }
}

void cio__stop_cancel(struct cio *a, struct cio_op *op)
{
    (void)op;
    cio_cancel(a, &a->stop->read); /* its callback completes op */
}

void cio__stop_fini(struct cio *a)
{
    if (!a->stop)
        return;
    cio_detach(a, a->stop->fd);
    stop__close(a->stop->fd);
    free(a->stop);
    a->stop = NULL;
}
