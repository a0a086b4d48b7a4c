/* SPDX-License-Identifier: MIT */
/* mini-redis.c: a Redis-compatible server on chapter 13's runtime.
 *
 * Each connection is one task that reads, runs every whole request the read
 * brought, and sends all their replies in one send; a task of its own runs
 * the active expire cycle on a runtime timer. It speaks RESP2 (resp.c), and
 * its commands (cmd.c, cmd_string.c, cmd_keys.c) give the bytes Redis 7.0.15
 * gives, errors included: redis-cli, redis-benchmark and any Redis client
 * library can talk to it.
 *
 *     make -C chapters/15-mini-redis
 *     build/chapters/15-mini-redis/mini-redis -p 6380          (the best backend)
 *     RT_BACKEND=epoll build/chapters/15-mini-redis/mini-redis -p 6380
 *     redis-cli -p 6380 set greeting hello                     (another terminal)
 *
 * Options: the course's -b ADDR, -p PORT (0: any free port), -h; and
 * -q BYTES, the query buffer limit (Redis's client-query-buffer-limit):
 * a connection whose unparsed request grows past it is closed.
 *
 * SIGINT and SIGTERM cancel the root token: the accept loop ends, every
 * connection's pending recv or send completes with -ECANCELED and its task
 * closes the socket, the expire task's timer is cancelled, and main() frees
 * the key space and exits 0.
 */
#include "cmd.h"
#include "net.h"
#include "resp.h"
#include "rt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define QBUF_INIT       (16 * 1024)           /* a connection's query buffer to begin with */
#define QBUF_LIMIT      (1024L * 1024 * 1024) /* Redis's client-query-buffer-limit: 1 GiB */
#define OUT_FLUSH       (64 * 1024) /* replies pending past this are sent before more run */
#define EXPIRE_PERIOD   100         /* ms: Redis's serverCron runs 10 times a second (hz) */
#define EXPIRE_BUDGET   25000       /* us: 25% of the period (ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC) */
#define ACCEPT_RETRY_MS 100         /* out of fds: try again after this (never a busy loop) */

/* snippet: conn */
struct conn {
    struct rt_task task; /* first: the frame is the task */
    int fd;
    long qlimit;
    char *q;           /* the query buffer: bytes read, not yet run */
    size_t qlen, qcap; /* bytes in q; bytes allocated */
    struct resp_parser parser;
    struct buf out;   /* the replies of one batch, sent in one send */
    struct client cl; /* what the commands see */
    int batch;        /* how the last batch of requests ended (enum conn_batch) */
    long n;           /* survives the awaits: a local would not (coro.h) */
};
/* end snippet */

enum conn_batch {
    BATCH_NEED_MORE, /* every whole request ran: read again */
    BATCH_FULL,      /* OUT_FLUSH bytes of replies wait: send them, then go on */
    BATCH_CLOSE,     /* QUIT, or a protocol error: send, then close */
};

/* Room in the query buffer for the next read: at least QBUF_INIT bytes, or
 * the whole of a large argument whose length is known, in one step. -1 when
 * the request under way would pass the query buffer limit. */
static int conn__make_room(struct conn *co)
{
    size_t want = resp_parse_want(&co->parser), cap = co->qcap;
    char *q;

    if (co->qlen >= (size_t)co->qlimit || want > (size_t)co->qlimit + 2)
        return -1;
    while (cap - co->qlen < QBUF_INIT / 2 || cap < want)
        cap = cap ? cap * 2 : QBUF_INIT;
    if (want > QBUF_INIT && cap > want && want > co->qcap)
        cap = want; /* a big argument: exactly its size, as Redis does (PROTO_MBULK_BIG_ARG) */
    if (cap == co->qcap)
        return 0;
    if (!(q = realloc(co->q, cap))) {
        fprintf(stderr, "mini-redis: no memory for a query buffer of %zu bytes\n", cap);
        return -1;
    }
    co->q = q;
    co->qcap = cap;
    return 0;
}

/* snippet: batch */
/* Run every whole request in the query buffer, appending the replies to
 * co->out, until the buffer holds only part of one (or nothing), or the
 * replies pass OUT_FLUSH, or one of them closes the connection. What ran
 * leaves the buffer. */
static enum conn_batch conn__run(struct conn *co)
{
    size_t pos = 0;
    enum conn_batch how = BATCH_NEED_MORE;

    while (how == BATCH_NEED_MORE) {
        enum resp_status st = resp_parse(&co->parser, co->q + pos, co->qlen - pos);

        if (st == RESP_NEED_MORE)
            break;
        if (st == RESP_ERROR) { /* the error, then the end, as Redis does */
            resp_add_error(&co->out, "%s", co->parser.error);
            how = BATCH_CLOSE;
            break;
        }
        if (co->parser.argc > 0) {
            co->cl.req = co->q + pos;
            co->cl.argv = co->parser.argv;
            co->cl.argc = co->parser.argc;
            cmd_execute(&co->cl);
        }
        pos += co->parser.used;
        if (co->cl.close_after_reply)
            how = BATCH_CLOSE;
        else if (buf_len(&co->out) >= OUT_FLUSH)
            how = BATCH_FULL;
    }
    /* Keep only the request under way, at the start: the parser counts
     * from there. */
    memmove(co->q, co->q + pos, co->qlen - pos);
    co->qlen -= pos;
    return how;
}
/* end snippet */

/* snippet: step */
static void conn_step(void *frame)
{
    struct conn *co = frame;
    struct rt *rt = co->task.f.rt;

    RT_BEGIN(co);
    for (;;) {
        if (conn__make_room(co) < 0) { /* Redis logs it and closes, with no reply */
            fprintf(stderr, "mini-redis: closing client %lld: query buffer over %ld bytes\n",
                    co->cl.id, co->qlimit);
            break;
        }
        RT_AWAIT(co, rt_recv(rt, co->fd, co->q + co->qlen, co->qcap - co->qlen, co->task.token),
                 co->n);
        if (co->n <= 0) /* the client left (0), a reset, or the shutdown (-ECANCELED) */
            break;
        co->qlen += (size_t)co->n;
        do {
            co->batch = conn__run(co);
            /* Pipelining: the replies to every request this read brought
             * leave together, in one send. */
            if (buf_len(&co->out) > 0) {
                RT_AWAIT(co,
                         rt_send(rt, co->fd, buf_peek(&co->out), buf_len(&co->out), co->task.token),
                         co->n);
                buf_consume(&co->out, buf_len(&co->out));
            }
        } while (co->batch == BATCH_FULL && co->n >= 0);
        if (co->n < 0 || co->batch == BATCH_CLOSE)
            break;
        if (co->qlen == 0 && co->qcap > QBUF_INIT) { /* an idle client keeps a small buffer */
            free(co->q);
            co->q = NULL;
            co->qcap = 0;
        }
    }
    rt_close(rt, co->fd);
    free(co->q);
    buf_free(&co->out);
    resp_parser_free(&co->parser);
    RT_RETURN(co, 0); /* resets, EPIPE, -ECANCELED: the end of a client, not an error */
    ASYNC_END(&co->task);
}
/* end snippet */

/* snippet: expire */
/* The active expire cycle, on a timer of the runtime: one task for every
 * key, rather than a timer per key (see the README). */
struct expirer {
    struct rt_task task;
    struct db *db;
    long res;
};

static void expirer_step(void *frame)
{
    struct expirer *co = frame;
    struct rt *rt = co->task.f.rt;

    RT_BEGIN(co);
    for (;;) {
        RT_AWAIT(co, rt_delay(rt, EXPIRE_PERIOD, co->task.token), co->res);
        if (co->res < 0) /* -ECANCELED: the shutdown */
            break;
        db_active_expire(co->db, db_now_ms(), EXPIRE_BUDGET);
    }
    RT_RETURN(co, 0);
    ASYNC_END(&co->task);
}
/* end snippet */

struct server {
    struct rt_task task;
    int listener;
    long qlimit;
    struct server_state *state;
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
        c->qlimit = co->qlimit;
        resp_parser_init(&c->parser);
        buf_init(&c->out);
        c->cl =
            (struct client){.srv = co->state, .id = ++co->state->next_client_id, .out = &c->out};
        rt_future_release(rt_task_start(&c->task, co->task.token)); /* runs on its own */
    }
    RT_RETURN(co, 0);
    ASYNC_END(&co->task);
}

static int server__option(int opt, const char *arg, void *ctx)
{
    long *qlimit = ctx;

    if (opt == 'q')
        return net_parse_int(arg, 1024, QBUF_LIMIT, qlimit) == 0 ? 0 : -1;
    return -1;
}

int main(int argc, char **argv)
{
    struct server_state state = {0};
    long qlimit = QBUF_LIMIT;
    const struct net_cli_extra extra = {
        .optstring = "q:",
        .usage =
            "  -q BYTES the query buffer limit, 1024 to 1073741824 (default: 1 GiB, Redis's)\n",
        .on_opt = server__option,
        .ctx = &qlimit};
    struct net_cli cli;
    struct server *srv;
    struct expirer *exp;
    char why[256];
    struct rt *rt;
    int err, listener;
    long res;

    net_cli_parse(&cli, argc, argv, "A Redis-compatible server on the mini runtime (RESP2).",
                  &extra);
    if (!(rt = rt_create(&err, why, sizeof(why)))) {
        fprintf(stderr, "mini-redis: %s\n", why);
        return err == -EINVAL ? 2 : 77;
    }
    fprintf(stderr, "mini-redis: backend %s\n", rt_backend_name(rt));
    /* Before listening: a test may send SIGTERM as soon as it sees the port. */
    if ((err = rt_shutdown_on_signals(rt)) < 0)
        net_die(-err, "rt_shutdown_on_signals");
    db_init(&state.db);
    srv = RT_TASK_NEW(rt, struct server, server_step);
    srv->listener = listener = net_listen_or_die(&cli, SOMAXCONN);
    srv->qlimit = qlimit;
    srv->state = &state;
    if ((err = rt_attach(rt, listener)) < 0)
        net_die(-err, "rt_attach(listener fd=%d)", listener);
    exp = RT_TASK_NEW(rt, struct expirer, expirer_step);
    exp->db = &state.db;
    rt_future_release(rt_task_start(&exp->task, rt_root_token(rt)));

    res = rt_block_on(rt, rt_task_start(&srv->task, rt_root_token(rt)));
    err = rt_run(rt); /* the connections and the expirer finish their cancelled operations */
    rt_close(rt, listener);
    rt_destroy(rt);
    db_free(&state.db);
    return res < 0 || err < 0 ? 1 : 0;
}
