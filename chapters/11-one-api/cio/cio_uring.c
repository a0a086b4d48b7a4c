/* SPDX-License-Identifier: MIT */
/* cio_uring.c: the io_uring backend (Linux 5.6+, through liburing): native
 * completions.
 *
 * Every op becomes one SQE whose user_data is the op's address; the CQE
 * brings it back with `res` already in the API's terms (bytes, a new fd, 0
 * at EOF, -errno, -ETIME for a timeout, -ECANCELED). SQEs are only queued
 * by submit; the wait submits them all and waits in one io_uring_enter().
 * What is left for the library:
 *   - a send the kernel finished short (the socket's buffer filled) is sent
 *     on from where it stopped before the op completes;
 *   - cancel is one more SQE (IORING_OP_ASYNC_CANCEL), whose own CQE
 *     carries user_data 0 and is ignored: the cancelled op reports how it
 *     ended itself;
 *   - pooled receives use a provided buffer ring (5.19+), set up by hand as
 *     in chapter 08's bufring.c (liburing 2.3 has no io_uring_setup_buf_ring):
 *     the recv names a buffer group instead of a buffer (IOSQE_BUFFER_SELECT),
 *     the kernel takes a buffer only when bytes arrive, and the CQE says which
 *     (IORING_CQE_F_BUFFER, the id in cqe->flags >> IORING_CQE_BUFFER_SHIFT).
 *     An empty ring fails the recv with -ENOBUFS: the op is parked in
 *     bufpool.c until a buffer is released, and then handed that buffer by
 *     name, for a plain recv into it: the ring stays empty while anyone
 *     waits, so that the kernel cannot give a released buffer to a newer
 *     receive first.
 */
#include "cio_impl.h"

#include "uring-why.h"

#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#define URING_ENTRIES 256  /* SQEs; a full SQ is submitted early (uring__sqe) */
#define URING_CQ      4096 /* CQEs: room for many completions per wait */
#define URING_BGID    0    /* the buffer group of the pool's ring */

struct uring_impl {
    struct io_uring ring;
    struct io_uring_buf_ring *br; /* the pool's buffer ring, once made (page-aligned) */
    size_t br_bytes;
};

_Static_assert(sizeof(struct __kernel_timespec) == 2 * sizeof(long long),
               "cio_op.ts_sec/ts_nsec hold a struct __kernel_timespec");

static int uring__init(struct cio *a, char *why, size_t len)
{
    static const int needed[] = {IORING_OP_ACCEPT, IORING_OP_RECV,    IORING_OP_SEND,
                                 IORING_OP_READ,   IORING_OP_TIMEOUT, IORING_OP_ASYNC_CANCEL};
    /* Completion work waits for this thread's next system call instead of
     * interrupting it (5.19+; see the README for DEFER_TASKRUN). */
    struct io_uring_params p = {.flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN,
                                .cq_entries = URING_CQ};
    struct uring_impl *u = calloc(1, sizeof(*u));
    struct io_uring *ring = u ? &u->ring : NULL;
    struct io_uring_probe *probe;
    int ret;

    if (!u)
        return -ENOMEM;
    if ((ret = io_uring_queue_init_params(URING_ENTRIES, ring, &p)) == -EINVAL) {
        p = (struct io_uring_params){.flags = IORING_SETUP_CQSIZE, .cq_entries = URING_CQ};
        ret = io_uring_queue_init_params(URING_ENTRIES, ring, &p);
    }
    if (ret < 0) {
        char reason[256];
        snprintf(why, len, "uring: %s",
                 uring_why(ret, URING_ENTRIES, p.flags, reason, sizeof(reason)));
        free(u);
        return ret;
    }
    /* The opcodes came in 5.5 and 5.6; a kernel without one fails the op
     * with -EINVAL, so refuse the backend now rather than later. */
    probe = io_uring_get_probe_ring(ring);
    for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
        if (!probe || !io_uring_opcode_supported(probe, needed[i])) {
            snprintf(why, len, "uring: this kernel lacks io_uring opcode %d (Linux 5.6+)",
                     needed[i]);
            io_uring_free_probe(probe);
            io_uring_queue_exit(ring);
            free(u);
            return -EOPNOTSUPP;
        }
    }
    io_uring_free_probe(probe);
    a->impl = u;
    return 0;
}

static void uring__fini(struct cio *a)
{
    struct uring_impl *u = a->impl;

    if (u->br) {
        io_uring_unregister_buf_ring(&u->ring, URING_BGID);
        munmap(u->br, u->br_bytes);
    }
    io_uring_queue_exit(&u->ring);
    free(u);
}

/* snippet: pool */
/* Hand every pool buffer to the kernel: a ring of {addr, len, bid}
 * descriptors it reads, registered as buffer group URING_BGID. */
static int uring__pool_init(struct cio *a)
{
    struct uring_impl *u = a->impl;
    unsigned n = a->pool->count;
    struct io_uring_buf_reg reg = {.ring_entries = n, .bgid = URING_BGID};
    int ret;

    /* The descriptor ring must start on a page boundary: mmap gives that. */
    u->br_bytes = n * sizeof(struct io_uring_buf);
    u->br = mmap(NULL, u->br_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (u->br == MAP_FAILED) {
        u->br = NULL;
        return -errno;
    }
    io_uring_buf_ring_init(u->br);
    reg.ring_addr = (unsigned long)u->br;
    if ((ret = io_uring_register_buf_ring(&u->ring, &reg, 0)) < 0) { /* 5.19+ */
        munmap(u->br, u->br_bytes);
        u->br = NULL;
        return ret;
    }
    for (unsigned id = 0; id < n; id++)
        cio__buf_give(a, id);
    return 0;
}

/* Buffer id back into the ring, past its tail; advancing the tail (a
 * store-release) is what lets the kernel see it. */
static void uring__pool_give(struct cio *a, unsigned id)
{
    struct uring_impl *u = a->impl;

    io_uring_buf_ring_add(u->br, cio__buf(a, id), CIO_BUF_SIZE, (unsigned short)id,
                          io_uring_buf_ring_mask(a->pool->count), 0);
    io_uring_buf_ring_advance(u->br, 1);
}
/* end snippet */

/* An SQE, never NULL: a full submission queue is submitted first. */
static struct io_uring_sqe *uring__sqe(struct io_uring *ring)
{
    struct io_uring_sqe *sqe;

    while (!(sqe = io_uring_get_sqe(ring)))
        io_uring_submit(ring);
    return sqe;
}

/* snippet: submit */
static void uring__submit(struct cio *a, struct cio_op *op)
{
    struct io_uring_sqe *sqe = uring__sqe(&((struct uring_impl *)a->impl)->ring);

    switch (op->kind) {
    case CIO_ACCEPT:
        io_uring_prep_accept(sqe, op->fd, NULL, NULL, SOCK_CLOEXEC);
        break;
    case CIO_RECV:
        io_uring_prep_recv(sqe, op->fd, op->buf, op->len, 0);
        break;
    case CIO_RECV_POOLED:
        if (op->flags & CIO__HANDED) { /* its turn in the pool's queue: this buffer */
            io_uring_prep_recv(sqe, op->fd, op->buf, CIO_BUF_SIZE, 0);
            break;
        }
        /* no buffer: the kernel picks one from the group when bytes come */
        io_uring_prep_recv(sqe, op->fd, NULL, CIO_BUF_SIZE, 0);
        sqe->flags |= IOSQE_BUFFER_SELECT;
        sqe->buf_group = URING_BGID;
        /* Wait for bytes before looking for a buffer (5.19+, as the ring).
         * Without it the kernel tries the recv at once, picking a buffer
         * first: on an empty ring a silent socket's recv fails with
         * -ENOBUFS and is parked; when its turn comes it holds the buffer
         * it is handed while it waits for bytes that may never come, and
         * the receives whose bytes wait behind it get none. */
        sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
        break;
    case CIO_SEND:
        io_uring_prep_send(sqe, op->fd, (char *)op->buf + op->done, op->len - op->done,
                           MSG_NOSIGNAL);
        break;
    case CIO_READ_FILE: /* offset -1: the file position, as read(2) (5.6+) */
        io_uring_prep_read(sqe, op->fd, op->buf, (unsigned)op->len, (__u64)op->offset);
        break;
    case CIO_TIMEOUT: {
        /* The kernel reads the timespec when it takes the SQE, which is in
         * the next wait: it lives in the op until then. */
        struct __kernel_timespec *ts = (struct __kernel_timespec *)&op->ts_sec;
        ts->tv_sec = op->timeout_ms / 1000;
        ts->tv_nsec = (long long)(op->timeout_ms % 1000) * 1000000;
        io_uring_prep_timeout(sqe, ts, 0, 0);
        break;
    }
    case CIO_STOP: /* never here: cio.c hands it to stop.c, which reads a signalfd */
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data(sqe, NULL);
        return;
    }
    io_uring_sqe_set_data(sqe, op);
}
/* end snippet */

static void uring__cancel(struct cio *a, struct cio_op *op)
{
    struct io_uring_sqe *sqe = uring__sqe(&((struct uring_impl *)a->impl)->ring);

    io_uring_prep_cancel(sqe, op, 0);
    io_uring_sqe_set_data(sqe, NULL); /* its own CQE is of no interest */
}

/* snippet: pooled-cqe */
/* A pooled recv's CQE: bytes in the buffer the kernel took, or no buffer. */
static void uring__pooled_done(struct cio *a, struct cio_op *op, const struct io_uring_cqe *cqe)
{
    unsigned id;

    if (op->flags & CIO__HANDED) { /* a recv into the buffer bufpool.c handed it */
        if (cqe->res > 0 && cio__buf_take(a, op, &id))
            cio__complete_pooled(a, op, id, cqe->res);
        else
            cio__complete(a, op, cqe->res); /* the buffer goes to the next in line */
        return;
    }
    if (cqe->flags & IORING_CQE_F_BUFFER) {
        id = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
        cio__buf_taken(a);
        if (cqe->res > 0) {
            cio__complete_pooled(a, op, id, cqe->res);
            return;
        }
        cio__buf_give(a, id); /* taken, but nothing in it */
    }
    if (cqe->res == -ENOBUFS)
        cio__park(a, op); /* the ring was empty when the bytes came */
    else
        cio__complete(a, op, cqe->res);
}
/* end snippet */

/* snippet: wait */
static int uring__wait(struct cio *a, int timeout_ms)
{
    struct io_uring *ring = &((struct uring_impl *)a->impl)->ring;
    struct __kernel_timespec ts = {.tv_sec = timeout_ms / 1000,
                                   .tv_nsec = (long long)(timeout_ms % 1000) * 1000000};
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    int ret;

    if (timeout_ms == 0) /* submit, and enter even with nothing to submit: run the work */
        ret = io_uring_submit_and_get_events(ring);
    else
        ret = io_uring_submit_and_wait_timeout(ring, &cqe, 1, timeout_ms < 0 ? NULL : &ts, NULL);
    if (ret < 0 && ret != -ETIME && ret != -EINTR)
        return ret;
    io_uring_for_each_cqe(ring, head, cqe)
    {
        struct cio_op *op = io_uring_cqe_get_data(cqe);
        seen++;
        /* 0: a cancel's own result; LIBURING_UDATA_TIMEOUT: the timeout
         * liburing adds itself for a wait with a timeout before 5.11 */
        if (!op || (uintptr_t)op == LIBURING_UDATA_TIMEOUT)
            continue;
        /* -EINTR, -EAGAIN: nothing done, ask again (ready.c retries them too) */
        if ((cqe->res == -EINTR || cqe->res == -EAGAIN) && !(cqe->flags & IORING_CQE_F_BUFFER) &&
            !(op->flags & CIO__CANCELLED) &&
            (op->kind == CIO_RECV || op->kind == CIO_RECV_POOLED || op->kind == CIO_SEND ||
             op->kind == CIO_ACCEPT)) {
            uring__submit(a, op);
            continue;
        }
        if (op->kind == CIO_RECV_POOLED) {
            uring__pooled_done(a, op, cqe);
            continue;
        }
        if (op->kind == CIO_SEND && cqe->res > 0 && op->done + (size_t)cqe->res < op->len) {
            op->done += (size_t)cqe->res; /* a short send: send the rest */
            if (op->flags & CIO__CANCELLED)
                cio__complete(a, op, -ECANCELED);
            else
                uring__submit(a, op);
            continue;
        }
        if (op->kind == CIO_SEND && cqe->res >= 0)
            cio__complete(a, op, (int)op->done + cqe->res);
        else
            cio__complete(a, op, cqe->res);
    }
    io_uring_cq_advance(ring, seen);
    return 0;
}
/* end snippet */

static int uring__attach(struct cio *a, cio_fd fd)
{
    (void)a;
    (void)fd;
    return 0; /* io_uring takes any fd as it is, blocking or not */
}

static void uring__detach(struct cio *a, cio_fd fd)
{
    (void)a;
    (void)fd;
}

const struct cio_backend cio_backend_uring = {
    .name = "uring",
    .caps = CIO_CAP_COMPLETION | CIO_CAP_FILE_ASYNC | CIO_CAP_TIMER_KERNEL,
    .init = uring__init,
    .fini = uring__fini,
    .attach = uring__attach,
    .detach = uring__detach,
    .submit = uring__submit,
    .cancel = uring__cancel,
    .wait = uring__wait,
    .pool_init = uring__pool_init,
    .pool_give = uring__pool_give,
};
