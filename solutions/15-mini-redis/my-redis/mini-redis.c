/* SPDX-License-Identifier: MIT */
/* mini-redis.c: your Redis, grown stage by stage (the capstone's stages,
 * exercises/15-mini-redis/stage-1 to stage-7, each with its README).
 *
 * It starts as chapter 13's echo-rt (a copy, on purpose: this program is
 * yours to change) with a query buffer instead of a pooled one: the accept
 * loop, one task per connection that reads into co->q, and a send of what
 * co->out holds. The echo itself, the one block marked below, is cut out of
 * your copy (exercises/): a TODO stands there, which stops the program with
 * exit status 99 on its first request. Everything a Redis needs is yours to
 * write. Add files beside this one as it grows: the Makefile builds every .c
 * here.
 *
 *     make ex EX=15-mini-redis/stage-1                 (build, run stage 1's tests)
 *     build/exercises/15-mini-redis/my-redis/mini-redis -p 6380
 *     redis-cli -p 6380 ping                           (another terminal)
 *
 * What every stage's tests expect of it, from the start: -b ADDR and -p PORT
 * (0: any free port), "listening on 127.0.0.1:PORT" on stdout
 * (net_listen_or_die prints it), and SIGINT or SIGTERM, at any moment, end
 * it with status 0 (rt_shutdown_on_signals cancels the root token: every
 * pending operation completes with -ECANCELED).
 */
#include "buf.h"
#include "net.h"
#include "rt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define QBUF_INIT       (16 * 1024) /* a connection's query buffer to begin with */
#define ACCEPT_RETRY_MS 100         /* out of fds: try again after this (never a busy loop) */

struct conn {
    struct rt_task task; /* first: the frame is the task */
    int fd;
    char *q;           /* the query buffer: bytes read, not yet run */
    size_t qlen, qcap; /* bytes in q; bytes allocated */
    struct buf out;    /* replies not yet sent */
    long n;            /* survives the awaits: a local would not (coro.h) */
};

/* Room for the next read: QBUF_INIT / 2 bytes at least. -1: no memory. */
static int conn__make_room(struct conn *co)
{
    size_t cap = co->qcap;
    char *q;

    while (cap - co->qlen < QBUF_INIT / 2)
        cap = cap ? cap * 2 : QBUF_INIT;
    if (cap == co->qcap)
        return 0;
    if (!(q = realloc(co->q, cap)))
        return -1;
    co->q = q;
    co->qcap = cap;
    return 0;
}

static void conn_step(void *frame)
{
    struct conn *co = frame;
    struct rt *rt = co->task.f.rt;

    RT_BEGIN(co);
    for (;;) {
        if (conn__make_room(co) < 0)
            break;
        RT_AWAIT(co, rt_recv(rt, co->fd, co->q + co->qlen, co->qcap - co->qlen, co->task.token),
                 co->n);
        if (co->n <= 0) /* the client left (0), a reset, or the shutdown (-ECANCELED) */
            break;
        co->qlen += (size_t)co->n;
        /* EXERCISE BEGIN: stage 1: run whole requests in co->q, reply to co->out, keep the rest */
        /* The echo server's part, which stage 1 replaces: every byte read
         * goes back as it came. */
        if (buf_append(&co->out, co->q, co->qlen) < 0)
            break;
        co->qlen = 0;
        /* EXERCISE END */
        if (buf_len(&co->out) > 0) {
            RT_AWAIT(co, rt_send(rt, co->fd, buf_peek(&co->out), buf_len(&co->out), co->task.token),
                     co->n);
            if (co->n < 0) /* a reset, EPIPE, or the shutdown */
                break;
            buf_consume(&co->out, buf_len(&co->out));
        }
    }
    rt_close(rt, co->fd);
    free(co->q);
    buf_free(&co->out);
    RT_RETURN(co, 0); /* resets, EPIPE, -ECANCELED: the end of a client, not an error */
    ASYNC_END(&co->task);
}

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
        net_set_nodelay((int)co->fd); /* a reply goes out at once, no Nagle delay */
        if (rt_attach(rt, (int)co->fd) < 0) {
            rt_close(rt, (int)co->fd);
            continue;
        }
        c = RT_TASK_NEW(rt, struct conn, conn_step);
        c->fd = (int)co->fd;
        buf_init(&c->out);
        rt_future_release(rt_task_start(&c->task, co->task.token)); /* runs on its own */
    }
    RT_RETURN(co, 0);
    ASYNC_END(&co->task);
}

int main(int argc, char **argv)
{
    struct net_cli cli;
    struct server *srv;
    char why[256];
    struct rt *rt;
    int err, listener;
    long res;

    net_cli_parse(&cli, argc, argv, "Your Redis-compatible server, on the mini runtime.", NULL);
    if (!(rt = rt_create(&err, why, sizeof(why)))) {
        fprintf(stderr, "mini-redis: %s\n", why);
        return err == -EINVAL ? 2 : 77;
    }
    fprintf(stderr, "mini-redis: backend %s\n", rt_backend_name(rt));
    /* Before listening: a test may send SIGTERM as soon as it sees the port. */
    if ((err = rt_shutdown_on_signals(rt)) < 0)
        net_die(-err, "rt_shutdown_on_signals");
    srv = RT_TASK_NEW(rt, struct server, server_step);
    srv->listener = listener = net_listen_or_die(&cli, SOMAXCONN);
    if ((err = rt_attach(rt, listener)) < 0)
        net_die(-err, "rt_attach(listener fd=%d)", listener);

    res = rt_block_on(rt, rt_task_start(&srv->task, rt_root_token(rt)));
    err = rt_run(rt); /* the connections finish their cancelled operations */
    rt_close(rt, listener);
    rt_destroy(rt);
    return res < 0 || err < 0 ? 1 : 0;
}
