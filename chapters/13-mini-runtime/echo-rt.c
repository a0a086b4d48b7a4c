/* SPDX-License-Identifier: MIT */
/* echo-rt.c: the echo server once more, now as two async functions on the
 * runtime. Compare with chapter 11's echo-aio, which is the same server as
 * callbacks and flags: here each connection is a loop that reads top to
 * bottom, and the state machine is the compiler's job (coro.h's).
 *
 *     make -C chapters/13-mini-runtime
 *     build/chapters/13-mini-runtime/echo-rt -p 0            (the best backend)
 *     RT_BACKEND=epoll build/chapters/13-mini-runtime/echo-rt -p 0
 *     build/common/tools/echo-client -p PORT hello            (from another terminal)
 *
 * Every operation runs under the root token, which SIGINT and SIGTERM
 * cancel: the accept loop ends, each connection's pending recv or send
 * completes with -ECANCELED, each task closes its socket and returns, and
 * main() exits 0 once none is left.
 */
#include "net.h"
#include "rt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define ACCEPT_RETRY_MS 100 /* out of fds: try again after this (never a busy loop) */

/* snippet: conn */
struct conn {
    struct rt_task task; /* first: the frame is the task */
    int fd;
    long n;    /* survives the awaits: a local would not (coro.h) */
    void *buf; /* a pool buffer, from a recv that brought bytes until their send is over */
};

static void conn_step(void *frame)
{
    struct conn *co = frame;
    struct rt *rt = co->task.f.rt;

    RT_BEGIN(co);
    for (;;) {
        /* No buffer while it waits: the runtime lends one when bytes come. */
        RT_AWAIT(co, rt_recv_pooled(rt, co->fd, &co->buf, co->task.token), co->n);
        if (co->n <= 0) /* 0: the client half-closed, and everything is echoed */
            break;
        /* The next recv waits for this send: a client that never reads
         * stops being read (backpressure), and memory stays flat. The bytes
         * go out from the pool buffer itself, given back once the send is
         * over: a client that never reads pins one buffer, no more. */
        RT_AWAIT(co, rt_send(rt, co->fd, co->buf, (size_t)co->n, co->task.token), co->n);
        rt_buf_release(rt, co->buf);
        if (co->n < 0)
            break;
    }
    rt_close(rt, co->fd);
    RT_RETURN(co, 0); /* resets, EPIPE, -ECANCELED: the end of a client, not an error */
    ASYNC_END(&co->task);
}
/* end snippet */

/* snippet: server */
struct server {
    struct rt_task task;
    int listener;
    int last_errno; /* accept errors are logged once per streak */
    long fd;
};

static void server_step(void *frame)
{
    struct server *co = frame;
    struct rt *rt = co->task.f.rt;
    struct conn *c;

    RT_BEGIN(co);
    for (;;) {
        RT_AWAIT(co, rt_accept(rt, co->listener, co->task.token), co->fd);
        if (co->fd == -ECANCELED)
            break;
        if (co->fd < 0) {
            if (-co->fd != co->last_errno)
                fprintf(stderr, "accept(fd=%d): %s\n", co->listener, strerror((int)-co->fd));
            co->last_errno = (int)-co->fd;
            if (co->fd == -EMFILE || co->fd == -ENFILE || co->fd == -ENOBUFS || co->fd == -ENOMEM)
                RT_AWAIT(co, rt_delay(rt, ACCEPT_RETRY_MS, co->task.token), co->fd);
            continue;
        }
        co->last_errno = 0;
        net_set_nodelay((int)co->fd); /* small echoes go out at once, no Nagle delay */
        if (rt_attach(rt, (int)co->fd) < 0) {
            rt_close(rt, (int)co->fd);
            continue;
        }
        c = RT_TASK_NEW(rt, struct conn, conn_step);
        c->fd = (int)co->fd;
        rt_future_release(rt_task_start(&c->task, co->task.token)); /* runs on its own */
    }
    RT_RETURN(co, 0);
    ASYNC_END(&co->task);
}
/* end snippet */

int main(int argc, char **argv)
{
    struct net_cli cli;
    struct server *srv;
    char why[256];
    struct rt *rt;
    int err, listener;
    long res;

    net_cli_parse(&cli, argc, argv, "An echo server on the mini runtime (rt.h).", NULL);
    if (!(rt = rt_create(&err, why, sizeof(why)))) {
        fprintf(stderr, "echo-rt: %s\n", why);
        return err == -EINVAL ? 2 : 77;
    }
    fprintf(stderr, "echo-rt: backend %s\n", rt_backend_name(rt));
    /* Before listening: a test may send SIGTERM as soon as it sees the port. */
    if ((err = rt_shutdown_on_signals(rt)) < 0)
        net_die(-err, "rt_shutdown_on_signals");
    srv = RT_TASK_NEW(rt, struct server, server_step);
    srv->listener = listener = net_listen_or_die(&cli, SOMAXCONN);
    if ((err = rt_attach(rt, listener)) < 0)
        net_die(-err, "rt_attach(listener fd=%d)", listener);

    /* snippet: main */
    res = rt_block_on(rt, rt_task_start(&srv->task, rt_root_token(rt)));
    err = rt_run(rt); /* the connections finish their cancelled operations */
    /* end snippet */
    rt_close(rt, listener); /* srv is gone: its task returned */
    rt_destroy(rt);
    return res < 0 || err < 0 ? 1 : 0;
}
