/* SPDX-License-Identifier: MIT */
/* ready.c: the readiness-to-completion adapter, shared by the epoll, kqueue
 * and poll backends.
 *
 * A readiness kernel answers "which fds could I use now?"; the API promises
 * "tell me when this operation is done". The adapter keeps, per fd, two
 * queues of ops (one waiting to read, one waiting to write), and:
 *
 *   on submit    tries the system call at once (most recvs of a busy
 *                connection, and most sends, succeed right away); only on
 *                EAGAIN does the op join its queue, and the fd's interest
 *                change is noted;
 *   on an event  tries the ops of the queue the event is for, oldest first,
 *                until one says EAGAIN again; each that succeeds completes;
 *   before wait  hands the noted interest changes to the backend: an fd is
 *                watched for reading only while its read queue holds an op,
 *                for writing only while its write queue does.
 *
 * That is what .NET's SocketAsyncContext (an operation queue per
 * direction, tried first, then retried on each epoll event) and libuv's
 * uv__io_t (a watcher whose events are flushed to epoll before it waits) do.
 * Timeouts go to cio.c's list; file reads at an offset go to offload.c.
 *
 * A pooled receive waits in the read queue like any other, holding no
 * buffer; it takes one from bufpool.c's pool only at the moment it tries
 * recv(), and gives it back at once if recv() says EAGAIN. When it may take
 * none (every buffer held, or other receives waiting for one, which come
 * first), a recv(MSG_PEEK) of one byte tells whether its bytes are there:
 * if so it leaves the fd's queue for the pool's queue of parked receives
 * (so the fd, still readable, is no longer watched and cannot wake the loop
 * in vain); if not, it waits for readiness like any other op.
 */
#include "cio_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

struct ready_fd {
    struct cio_op *in_head, *in_tail;   /* accept, recv, stream read: wait until readable */
    struct cio_op *out_head, *out_tail; /* send: wait until writable */
    unsigned had;                       /* READY_IN|READY_OUT the backend reports now */
    bool dirty;                         /* in ready.dirty: its wish may differ from `had` */
};

struct ready {
    struct ready_fd *fds; /* indexed by fd, like redis's events[] */
    int nfds;
    int *dirty; /* fds whose queues changed since the last flush */
    int ndirty, dirty_cap;
};

int ready_init(struct cio *a)
{
    a->ready = calloc(1, sizeof(*a->ready));
    return a->ready ? 0 : -ENOMEM;
}

void ready_fini(struct cio *a)
{
    if (!a->ready)
        return;
    free(a->ready->fds);
    free(a->ready->dirty);
    free(a->ready);
    a->ready = NULL;
}

static struct ready_fd *ready__slot(struct cio *a, int fd)
{
    struct ready *r = a->ready;

    if (fd < 0)
        return NULL;
    if (fd >= r->nfds) {
        int n = r->nfds ? r->nfds : 64;
        struct ready_fd *grown;
        while (n <= fd)
            n *= 2;
        if (!(grown = realloc(r->fds, (size_t)n * sizeof(*grown))))
            return NULL;
        for (int i = r->nfds; i < n; i++)
            grown[i] = (struct ready_fd){0};
        r->fds = grown;
        r->nfds = n;
    }
    return &r->fds[fd];
}

static unsigned ready__wanted(const struct ready_fd *rf)
{
    return (rf->in_head ? READY_IN : 0) | (rf->out_head ? READY_OUT : 0);
}

/* Note that fd's wish may have changed; ready_flush() tells the backend. An
 * fd whose read queue empties and refills within one turn of the loop (a
 * recv completes, its callback submits the next) costs no system call. */
static void ready__mark(struct cio *a, int fd, struct ready_fd *rf)
{
    struct ready *r = a->ready;

    if (rf->dirty || ready__wanted(rf) == rf->had)
        return;
    if (r->ndirty == r->dirty_cap) {
        int cap = r->dirty_cap ? 2 * r->dirty_cap : 64;
        int *grown = realloc(r->dirty, (size_t)cap * sizeof(*grown));
        if (!grown)
            return; /* flushed later, when this fd changes again */
        r->dirty = grown;
        r->dirty_cap = cap;
    }
    rf->dirty = true;
    r->dirty[r->ndirty++] = fd;
}

/* snippet: try */
/* The system call the op stands for, on a non-blocking fd: its result, or
 * -EAGAIN when it would have to wait. */
static int ready__syscall(struct cio_op *op)
{
    ssize_t n;

    do {
        switch (op->kind) {
        case CIO_ACCEPT:
            n = accept4(op->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            break;
        case CIO_RECV:
            n = recv(op->fd, op->buf, op->len, 0);
            break;
        case CIO_RECV_POOLED:
            n = recv(op->fd, op->buf, CIO_BUF_SIZE, 0);
            break;
        case CIO_SEND:
            n = send(op->fd, (char *)op->buf + op->done, op->len - op->done, MSG_NOSIGNAL);
            break;
        default: /* CIO_READ_FILE at offset -1: a pipe, an eventfd */
            n = read(op->fd, op->buf, op->len);
            break;
        }
        /* a client that reset while in the backlog: take the next one */
    } while (n < 0 && (errno == EINTR || (op->kind == CIO_ACCEPT && errno == ECONNABORTED)));
    if (n < 0)
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    return (int)n;
}
/* end snippet */

/* Try the op once. True when it is over (completed); false when it must
 * wait for the next readiness report. */
static bool ready__attempt(struct cio *a, struct cio_op *op)
{
    int res = ready__syscall(op);

    if (res == -EAGAIN)
        return false;
    if (op->kind == CIO_SEND && res >= 0) {
        op->done += (size_t)res;
        if (op->done < op->len)
            return false; /* a short send: the rest when the socket has room */
        res = (int)op->done;
    }
    cio__complete(a, op, res);
    return true;
}

/* One byte looked at and left in the socket: > 0 when bytes are there, 0 at
 * end of stream, -EAGAIN when there are none yet, or -errno. */
static int ready__peek(int fd)
{
    char byte;
    ssize_t n;

    while ((n = recv(fd, &byte, 1, MSG_PEEK)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    return (int)n;
}

/* snippet: attempt-pooled */
/* A pooled recv: a buffer only for as long as a recv() call needs one,
 * unless bytes land in it. */
static bool ready__attempt_pooled(struct cio *a, struct cio_op *op)
{
    unsigned id;
    int res;

    if (!cio__buf_take(a, op, &id)) {
        if ((res = ready__peek(op->fd)) == -EAGAIN)
            return false; /* nothing yet: wait for readiness, holding no place in line */
        if (res > 0)
            cio__park(a, op); /* bytes, and no buffer for them yet: wait in line */
        else
            cio__complete(a, op, res); /* end of stream, or an error: no buffer needed */
        return true;
    }
    op->buf = cio__buf(a, id);
    if ((res = ready__syscall(op)) > 0) {
        cio__complete_pooled(a, op, id, res);
        return true;
    }
    cio__buf_give(a, id); /* EAGAIN, end of stream or an error: no bytes to keep */
    op->buf = NULL;
    if (res == -EAGAIN)
        return false;
    cio__complete(a, op, res);
    return true;
}
/* end snippet */

/* Try any op once: true when it has left the fd's queue for good. */
static bool ready__try(struct cio *a, struct cio_op *op)
{
    return op->kind == CIO_RECV_POOLED ? ready__attempt_pooled(a, op) : ready__attempt(a, op);
}

static void ready__push(struct cio_op **head, struct cio_op **tail, struct cio_op *op)
{
    op->next = NULL;
    op->prev = *tail;
    if (*tail)
        (*tail)->next = op;
    else
        *head = op;
    *tail = op;
}

static void ready__push_front(struct cio_op **head, struct cio_op **tail, struct cio_op *op)
{
    op->prev = NULL;
    op->next = *head;
    if (*head)
        (*head)->prev = op;
    else
        *tail = op;
    *head = op;
}

static void ready__unlink(struct cio_op **head, struct cio_op **tail, struct cio_op *op)
{
    if (op->prev)
        op->prev->next = op->next;
    else
        *head = op->next;
    if (op->next)
        op->next->prev = op->prev;
    else
        *tail = op->prev;
}

/* snippet: submit */
void ready_submit(struct cio *a, struct cio_op *op)
{
    struct ready_fd *rf;

    if (op->kind == CIO_TIMEOUT) {
        cio__timer_add(a, op);
        return;
    }
    if (op->kind == CIO_READ_FILE && op->offset >= 0) {
        offload_submit(a, op); /* a regular file is never "ready": a thread reads it */
        return;
    }
    if (!(rf = ready__slot(a, op->fd))) {
        cio__complete(a, op, op->fd < 0 ? -EBADF : -ENOMEM);
        return;
    }
    if (op->kind == CIO_SEND) {
        /* Bytes go out in submission order: a send waits behind older ones. */
        if (!rf->out_head && ready__attempt(a, op))
            return;
        ready__push(&rf->out_head, &rf->out_tail, op);
    } else {
        if (!rf->in_head && ready__try(a, op))
            return;
        ready__push(&rf->in_head, &rf->in_tail, op);
    }
    ready__mark(a, op->fd, rf);
}
/* end snippet */

/* snippet: event */
/* Try the ops of one queue, oldest first, until one has to wait. Each
 * leaves the queue before its attempt: completing or parking an op links it
 * into another list through the same next/prev. */
static void ready__run_queue(struct cio *a, struct cio_op **head, struct cio_op **tail)
{
    struct cio_op *op;

    while ((op = *head)) {
        ready__unlink(head, tail, op);
        if (!ready__try(a, op)) {
            ready__push_front(head, tail, op); /* still first in line */
            break;
        }
    }
}

void ready_on_event(struct cio *a, int fd, unsigned events)
{
    struct ready_fd *rf;

    if (fd < 0 || fd >= a->ready->nfds)
        return;
    rf = &a->ready->fds[fd];
    if (events & READY_IN)
        ready__run_queue(a, &rf->in_head, &rf->in_tail);
    if (events & READY_OUT)
        ready__run_queue(a, &rf->out_head, &rf->out_tail);
    ready__mark(a, fd, rf); /* an emptied queue: stop watching that direction */
}
/* end snippet */

/* snippet: flush */
int ready_flush(struct cio *a, int timeout_ms)
{
    struct ready *r = a->ready;

    for (int i = 0; i < r->ndirty; i++) {
        int fd = r->dirty[i], err;
        struct ready_fd *rf = &r->fds[fd];
        unsigned want = ready__wanted(rf);

        rf->dirty = false;
        if (want == rf->had)
            continue;
        if ((err = a->be->interest(a, fd, rf->had, want)) == 0) {
            rf->had = want;
            continue;
        }
        /* The kernel will not watch this fd (EPERM: a regular file given as
         * a stream; EBADF): its waiting ops fail with that error. */
        while (rf->in_head) {
            struct cio_op *op = rf->in_head;
            ready__unlink(&rf->in_head, &rf->in_tail, op);
            cio__complete(a, op, err);
        }
        while (rf->out_head) {
            struct cio_op *op = rf->out_head;
            ready__unlink(&rf->out_head, &rf->out_tail, op);
            cio__complete(a, op, err);
        }
        timeout_ms = 0; /* completions to deliver: do not sleep */
    }
    r->ndirty = 0;
    return timeout_ms;
}
/* end snippet */

void ready_cancel(struct cio *a, struct cio_op *op)
{
    struct ready_fd *rf;

    if (op->kind == CIO_TIMEOUT) {
        if (cio__timer_remove(a, op))
            cio__complete(a, op, -ECANCELED);
        return;
    }
    if (op->kind == CIO_READ_FILE && op->offset >= 0) {
        /* Once the worker runs the read, it cannot be stopped: the op
         * completes with the read's own result. */
        if (offload_cancel(a, op))
            cio__complete(a, op, -ECANCELED);
        return;
    }
    rf = &a->ready->fds[op->fd]; /* queued: its slot exists */
    if (op->kind == CIO_SEND)
        ready__unlink(&rf->out_head, &rf->out_tail, op);
    else
        ready__unlink(&rf->in_head, &rf->in_tail, op);
    /* A send cancelled after part of it went out still says -ECANCELED:
     * how many bytes left is lost, as with a cancelled .NET SendAsync. */
    cio__complete(a, op, -ECANCELED);
    ready__mark(a, op->fd, rf);
}

int ready_attach(struct cio *a, cio_fd fd)
{
    int flags = fcntl(fd, F_GETFL);

    if (!ready__slot(a, fd))
        return fd < 0 ? -EBADF : -ENOMEM;
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return -errno;
    return 0;
}

void ready_detach(struct cio *a, cio_fd fd)
{
    struct ready_fd *rf;

    if (fd < 0 || fd >= a->ready->nfds)
        return;
    rf = &a->ready->fds[fd];
    /* close() would drop an epoll registration by itself, but not ours:
     * a new fd with the same number must start from nothing. */
    if (rf->had)
        a->be->interest(a, fd, rf->had, 0);
    rf->had = 0;
    rf->in_head = rf->in_tail = rf->out_head = rf->out_tail = NULL;
}
