/* SPDX-License-Identifier: MIT */
/* io.c: sockets, as futures over chapter 11's cio operations.
 *
 * Each call allocates an rt_io (a future with a cio_op inside), submits the
 * op and returns the future. The op's callback completes the future, which
 * queues whoever awaits it: a completion becomes a continuation.
 *
 *     rt_recv() ─► cio_submit(op) ─► io_uring SQE / epoll interest
 *                                          │ the kernel finishes
 *     io__done(op) ◄── cio_run() ◄─────────┘
 *        └─► rt__future_complete(f, res) ─► the awaiting task's resume queued
 *
 * The token's registration is the op's cancel: cio_cancel(), which on
 * io_uring submits IORING_OP_ASYNC_CANCEL and on epoll/kqueue takes the op
 * off its fd's queue (and the fd out of the interest set). Either way the
 * op's callback comes once, with -ECANCELED or with the result it had
 * already, and only then is the buffer free to reuse.
 */
#include "net.h"
#include "rt_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const io__names[] = {"accept",    "recv",    "send",
                                        "read-file", "timeout", "recv-pooled"};

static void io__free(struct rt_future *f)
{
    free(RT_CONTAINER(f, struct rt_io, f));
}

/* snippet: done */
static void io__done(struct cio *a, struct cio_op *op)
{
    struct rt_io *io = op->user_data;

    io->f.rt->pending--;
    rt__token_unregister(&io->reg);
    if (op->kind == CIO_RECV_POOLED) {
        if (io->f.refs == 1 && op->res > 0) /* only ours: nobody will ever read it */
            cio_buf_release(a, op->buf);
        else
            *io->bufp = op->buf; /* NULL unless res > 0 */
    }
    rt__future_complete(&io->f, op->res);
    rt_future_release(&io->f); /* the operation's reference */
}

static void io__cancel(struct rt_reg *r)
{
    struct rt_io *io = RT_CONTAINER(r, struct rt_io, reg);

    cio_cancel(io->f.rt->io, &io->op); /* the callback still comes, once */
}
/* end snippet */

struct rt_future *rt__io_start(struct rt *rt, struct rt_io *io, struct rt_token *tok)
{
    int err;

    rt__future_init(&io->f, rt, io__names[io->op.kind], 2, io__free);
    io->op.cb = io__done;
    io->op.user_data = io;
    if (tok && !rt__token_register(tok, &io->reg, io__cancel))
        err = -ECANCELED; /* cancelled already: never started */
    else if ((err = cio_submit(rt->io, &io->op)) == 0) {
        rt->pending++;
        return &io->f;
    }
    rt__token_unregister(&io->reg);
    rt__future_complete(&io->f, err);
    rt_future_release(&io->f);
    return &io->f;
}

static struct rt_future *io__op(struct rt *rt, enum cio_kind kind, int fd, void *buf, size_t len,
                                struct rt_token *tok)
{
    struct rt_io *io = rt__alloc(sizeof(*io));

    io->op.kind = kind;
    io->op.fd = fd;
    io->op.buf = buf;
    io->op.len = len;
    return rt__io_start(rt, io, tok);
}

struct rt_future *rt_accept(struct rt *rt, int listen_fd, struct rt_token *tok)
{
    return io__op(rt, CIO_ACCEPT, listen_fd, NULL, 0, tok);
}

struct rt_future *rt_recv(struct rt *rt, int fd, void *buf, size_t len, struct rt_token *tok)
{
    return io__op(rt, CIO_RECV, fd, buf, len, tok);
}

struct rt_future *rt_send(struct rt *rt, int fd, const void *buf, size_t len, struct rt_token *tok)
{
    return io__op(rt, CIO_SEND, fd, (void *)buf, len, tok);
}

struct rt_future *rt_recv_pooled(struct rt *rt, int fd, void **bufp, struct rt_token *tok)
{
    struct rt_io *io = rt__alloc(sizeof(*io));

    *bufp = NULL;
    io->op.kind = CIO_RECV_POOLED;
    io->op.fd = fd;
    io->bufp = bufp;
    return rt__io_start(rt, io, tok);
}

void rt_buf_release(struct rt *rt, void *buf)
{
    cio_buf_release(rt->io, buf);
}

int rt_attach(struct rt *rt, int fd)
{
    return cio_attach(rt->io, fd);
}

void rt_close(struct rt *rt, int fd)
{
    cio_detach(rt->io, fd);
    close(fd);
}

/* ---- connect: a task of the runtime's own ------------------------------------- */

struct connect_task {
    struct rt_task task;
    char addr[64];
    int port;
    struct rt_token *tok;
    long fd;
};

static long io__connect_blocking(void *arg)
{
    struct connect_task *co = arg;

    return net_connect(co->addr, co->port); /* a blocking connect(): on a pool thread */
}

static void io__connect_step(void *frame)
{
    struct connect_task *co = frame;
    struct rt *rt = co->task.f.rt;
    int err;

    RT_BEGIN(co);
    RT_AWAIT(co, rt_run_blocking(rt, io__connect_blocking, co, co->tok), co->fd);
    if (co->fd >= 0 && (err = rt_attach(rt, (int)co->fd)) < 0) {
        close((int)co->fd);
        co->fd = err;
    }
    if (co->fd >= 0)
        net_set_nodelay((int)co->fd);
    RT_RETURN(co, co->fd);
    ASYNC_END(&co->task);
}

struct rt_future *rt_connect(struct rt *rt, const char *addr, int port, struct rt_token *tok)
{
    struct connect_task *co = RT_TASK_NEW(rt, struct connect_task, io__connect_step);

    snprintf(co->addr, sizeof(co->addr), "%s", addr);
    co->port = port;
    co->tok = tok;
    return rt_task_start(&co->task, tok);
}
