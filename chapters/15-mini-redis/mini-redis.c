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
 * a connection whose unparsed request grows past it is closed; -d DIR and
 * -f NAME, where the RDB file is (Redis's dir and dbfilename: ./dump.rdb),
 * loaded at start and written by SAVE and BGSAVE.
 *
 * SIGINT and SIGTERM cancel the root token: the accept loop ends, every
 * connection's pending recv or send completes with -ECANCELED and its task
 * closes the socket, the expire task's timer is cancelled, and main() frees
 * the key space and exits 0. A BGSAVE child still running is killed and
 * reaped, and its temp file removed, as Redis's shutdown does (killRDBChild).
 */
#include "blocked.h"
#include "clock.h"
#include "cmd.h"
#include "net.h"
#include "rdb.h"
#include "resp.h"
#include "rt.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define QBUF_INIT       (16 * 1024)           /* a connection's query buffer to begin with */
#define QBUF_LIMIT      (1024L * 1024 * 1024) /* Redis's client-query-buffer-limit: 1 GiB */
#define OUT_FLUSH       (64 * 1024) /* replies pending past this are sent before more run */
#define EXPIRE_PERIOD   100         /* ms: Redis's serverCron runs 10 times a second (hz) */
#define EXPIRE_BUDGET   25000       /* us: 25% of the period (ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC) */
#define ACCEPT_RETRY_MS 100         /* out of fds: try again after this (never a busy loop) */
#define REAP_PERIOD     10 /* ms between two looks at a BGSAVE child (Redis: serverCron's 100) */
/* client-output-buffer-limit pubsub 32mb 8mb 60, Redis's default (src/config.c) */
#define PUBSUB_HARD      (32L * 1024 * 1024)
#define PUBSUB_SOFT      (8L * 1024 * 1024)
#define PUBSUB_SOFT_SECS 60

/* What every connection is given: the limits. And the options. */
struct limits {
    long qlimit;                   /* -q: the query buffer */
    long pubsub_hard, pubsub_soft; /* -o: a subscriber's pending output */
    long pubsub_soft_secs;
    const char *dir, *dbfilename; /* -d, -f */
};

/* snippet: conn */
struct conn {
    struct rt_task task; /* first: the frame is the task */
    int fd;
    const struct limits *lim;
    char *q;           /* the query buffer: bytes read, not yet run */
    size_t qlen, qcap; /* bytes in q; bytes allocated */
    struct resp_parser parser;
    struct buf out;       /* replies and messages not yet sent: commands append here */
    struct buf wire;      /* the send in flight: the runtime's until it completes */
    struct client cl;     /* what the commands see */
    struct rt_token *tok; /* the connection's own: cancelled to cut it off */
    /* A wait (blocked on keys, or subscribed): for another client (wake),
     * for the client's own bytes (rx), for the blocked pop's time (timer). */
    struct rt_token *wait_tok;      /* the wait's receive and timer */
    struct rt_future *wake, *waker; /* one promise: awaited; completed (NULL once done) */
    struct rt_future *rx, *timer;
    int64_t deadline;   /* clock_now_ms() when a blocked pop times out; 0: never */
    int64_t soft_since; /* when pending output passed the soft limit; 0: it is under */
    int batch;          /* how the last batch of requests ended (enum conn_batch) */
    long n, t;          /* survive the awaits: locals would not (coro.h) */
    bool gone;          /* the client left (or was cut off) during a wait */
};
/* end snippet */

enum conn_batch {
    BATCH_NEED_MORE, /* every whole request ran: read again */
    BATCH_FULL,      /* OUT_FLUSH bytes of replies wait: send them, then go on */
    BATCH_CLOSE,     /* QUIT, or a protocol error: send, then close */
    BATCH_BLOCKED,   /* a blocking pop found nothing: wait, then go on */
};

/* Room in the query buffer for the next read: at least QBUF_INIT bytes, or
 * the whole of a large argument whose length is known, in one step. -1 when
 * the request under way would pass the query buffer limit. */
static int conn__make_room(struct conn *co)
{
    size_t want = resp_parse_want(&co->parser), cap = co->qcap;
    char *q;

    if (co->qlen >= (size_t)co->lim->qlimit || want > (size_t)co->lim->qlimit + 2)
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
 * replies pass OUT_FLUSH, or one of them closes the connection or blocks
 * it. What ran leaves the buffer; what a blocked client sent after its
 * blocking pop waits there, as it does in Redis. */
static enum conn_batch conn__run(struct conn *co)
{
    size_t pos = 0;
    enum conn_batch how = BATCH_NEED_MORE;

    while (how == BATCH_NEED_MORE && co->qlen > pos) {
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
        else if (co->cl.blocked) {
            how = BATCH_BLOCKED;
            /* + 1: the clock counts whole ms, and a timeout must never end early */
            co->deadline =
                co->cl.blocked->timeout_ms ? clock_now_ms() + co->cl.blocked->timeout_ms + 1 : 0;
        } else if (buf_len(&co->out) >= OUT_FLUSH)
            how = BATCH_FULL;
    }
    /* Keep only the request under way, at the start: the parser counts
     * from there. */
    if (pos > 0) {
        memmove(co->q, co->q + pos, co->qlen - pos);
        co->qlen -= pos;
    }
    return how;
}
/* end snippet */

/* The output waiting becomes the send's: commands and other clients go on
 * appending to out while the runtime owns wire. */
static void conn__to_wire(struct conn *co)
{
    struct buf t = co->wire;

    co->wire = co->out;
    co->out = t;
}

static void conn__sent(struct conn *co)
{
    buf_consume(&co->wire, buf_len(&co->wire));
    if (co->wire.cap > 4 * OUT_FLUSH) /* a burst of messages: give its memory back */
        buf_free(&co->wire);
}

/* snippet: limit */
/* client-output-buffer-limit for a subscriber (checkClientOutputBufferLimits,
 * src/networking.c): pending output, the send in flight included, over the
 * hard limit, or over the soft one for soft_secs in a row, and the client
 * is cut off. Its pending messages are freed at once, and cancelling its
 * token ends whatever its task awaits: no other client waits for it. */
static void conn__limit(struct conn *co)
{
    size_t pending = buf_len(&co->out) + buf_len(&co->wire);
    int64_t now = clock_now_ms();
    bool over = false;

    if (pending > (size_t)co->lim->pubsub_hard) {
        over = true;
    } else if (pending > (size_t)co->lim->pubsub_soft) {
        if (!co->soft_since)
            co->soft_since = now;
        else if (now - co->soft_since >= co->lim->pubsub_soft_secs * 1000)
            over = true;
    } else {
        co->soft_since = 0;
    }
    if (!over)
        return;
    fprintf(stderr,
            "mini-redis: client id=%lld closed for overcoming of output buffer limits "
            "(%zu bytes pending)\n",
            co->cl.id, pending);
    co->cl.killed = true;
    buf_free(&co->out);
    rt_token_cancel(co->tok);
}
/* end snippet */

/* cl.wake: another client wrote into this one's output, or served it. */
static void conn__wake(struct client *c)
{
    struct conn *co = (struct conn *)((char *)c - offsetof(struct conn, cl));
    struct rt_future *f = co->waker;

    if (pubsub_count(c) > 0 && !c->killed)
        conn__limit(co);
    if (f) {
        co->waker = NULL;
        rt_promise_complete(f, 0);
    }
}

/* snippet: wait */
/* Start a wait: for the promise another client completes (conn__wake), for
 * bytes from the client (which only land in the query buffer: they run
 * after the wait), and, for a blocked pop with a timeout, for its time. The
 * future completes at the first of them. */
static struct rt_future *conn__wait(struct conn *co)
{
    struct rt *rt = co->task.f.rt;
    struct rt_future *fs[3];
    size_t n = 0;

    co->wait_tok = rt_token_new(rt, co->tok);
    co->wake = rt_promise(rt, "wake");
    co->waker = co->wake;
    fs[n++] = co->wake;
    co->rx = rt_recv(rt, co->fd, co->q + co->qlen, co->qcap - co->qlen, co->wait_tok);
    fs[n++] = co->rx;
    co->timer = NULL;
    if (co->cl.blocked && co->deadline) {
        int64_t left = co->deadline - clock_now_ms();
        co->timer = rt_delay(rt,
                             left <= 0         ? 0
                             : left > UINT_MAX ? UINT_MAX
                                               : (unsigned)left,
                             co->wait_tok);
        fs[n++] = co->timer;
    }
    return rt_when_any(rt, fs, n);
}

/* The wait is over: what has not completed is made to (the promise by
 * hand, the receive and the timer by their token), since when_any holds
 * them until they do. */
static void conn__wait_stop(struct conn *co)
{
    if (co->waker) {
        struct rt_future *f = co->waker;
        co->waker = NULL;
        rt_promise_complete(f, -ECANCELED);
    }
    rt_token_cancel(co->wait_tok);
}

/* The wait's receive: bytes for the query buffer; the end of the client; or
 * -ECANCELED, which is the end only if it was not the wait's own cancel. */
static void conn__received(struct conn *co, long n)
{
    if (n > 0)
        co->qlen += (size_t)n;
    else if (n == 0 || n != -ECANCELED || rt_token_cancelled(co->tok))
        co->gone = true;
    rt_token_free(co->wait_tok);
    co->wait_tok = NULL;
    if (co->cl.blocked && co->deadline && clock_now_ms() >= co->deadline && !co->gone)
        blocked_timeout(&co->cl); /* its reply, then the requests that waited */
}
/* end snippet */

/* Everything the connection holds goes back: the socket, the buffers, and
 * what the commands gave the client (a place in a key's queue, its
 * channels, a transaction under way). */
static void conn__close(struct conn *co)
{
    struct server_state *srv = co->cl.srv;

    rt_close(co->task.f.rt, co->fd);
    cmd_client_free(&co->cl);
    free(co->q);
    buf_free(&co->out);
    buf_free(&co->wire);
    resp_parser_free(&co->parser);
    rt_token_free(co->tok);
    srv->connected--;
}

/* snippet: step */
static void conn_step(void *frame)
{
    struct conn *co = frame;
    struct rt *rt = co->task.f.rt;

    RT_BEGIN(co);
    for (;;) {
        if (!co->cl.blocked) /* a blocked client's next requests wait */
            co->batch = conn__run(co);
        /* Pipelining: the replies to every request this read brought
         * leave together, in one send. */
        if (buf_len(&co->out) > 0) {
            conn__to_wire(co);
            RT_AWAIT(co, rt_send(rt, co->fd, buf_peek(&co->wire), buf_len(&co->wire), co->tok),
                     co->n);
            conn__sent(co);
            if (co->n < 0) /* a reset, EPIPE, the shutdown, or cut off */
                break;
        }
        if (co->batch == BATCH_CLOSE)
            break;
        if (co->batch == BATCH_FULL && !co->cl.blocked)
            continue;
        if (co->cl.blocked || pubsub_count(&co->cl) > 0) {
            if (!co->cl.blocked && buf_len(&co->out) > 0)
                continue; /* messages came while the last ones were sent */
            if (conn__make_room(co) < 0)
                break;
            /* Blocked: until served, timed out or gone. Subscribed: until
             * a message or a request comes. */
            RT_AWAIT(co, conn__wait(co), co->n);
            conn__wait_stop(co);
            RT_AWAIT(co, co->rx, co->n);
            conn__received(co, co->n);
            if (co->timer)
                RT_AWAIT(co, co->timer, co->t);
            RT_AWAIT(co, co->wake, co->t);
            if (co->gone)
                break;
            continue;
        }
        if (co->qlen == 0 && co->qcap > QBUF_INIT) { /* an idle client keeps a small buffer */
            free(co->q);
            co->q = NULL;
            co->qcap = 0;
        }
        if (conn__make_room(co) < 0) { /* Redis logs it and closes, with no reply */
            fprintf(stderr, "mini-redis: closing client %lld: query buffer over %ld bytes\n",
                    co->cl.id, co->lim->qlimit);
            break;
        }
        RT_AWAIT(co, rt_recv(rt, co->fd, co->q + co->qlen, co->qcap - co->qlen, co->tok), co->n);
        if (co->n <= 0) /* the client left (0), a reset, or the shutdown (-ECANCELED) */
            break;
        co->qlen += (size_t)co->n;
    }
    conn__close(co);
    RT_RETURN(co, 0); /* resets, EPIPE, -ECANCELED: the end of a client, not an error */
    ASYNC_END(&co->task);
}
/* end snippet */

/* snippet: expire */
/* The active expire cycle, on a timer of the runtime: one task for all the
 * keys, rather than a timer per key (see the README). */
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

/* snippet: reaper */
/* BGSAVE's child, reaped without blocking the loop: a task that looks with
 * waitpid(WNOHANG) on a runtime timer, as Redis's serverCron does
 * (checkChildrenDone, src/server.c). At the shutdown its timer is
 * cancelled: it kills the child, waits for it and removes its temp file. */
struct reaper {
    struct rt_task task;
    struct server_state *state;
    long res;
};

static void reaper_step(void *frame)
{
    struct reaper *co = frame;
    struct server_state *st = co->state;
    int done = 0;

    RT_BEGIN(co);
    while (!done) {
        RT_AWAIT(co, rt_delay(co->task.f.rt, REAP_PERIOD, co->task.token), co->res);
        done = rdb_reap_child(st->save_child, st->rdb_dir, co->res < 0);
        if (done > 0) {
            st->lastsave = time(NULL);
            fprintf(stderr, "mini-redis: background saving terminated with success\n");
        }
    }
    st->save_child = 0;
    RT_RETURN(co, 0);
    ASYNC_END(&co->task);
}
/* end snippet */

/* state->child_started: BGSAVE forked. */
static void reaper_start(struct server_state *state)
{
    struct rt *rt = state->host;
    struct reaper *r = RT_TASK_NEW(rt, struct reaper, reaper_step);

    r->state = state;
    rt_future_release(rt_task_start(&r->task, rt_root_token(rt)));
}

struct server {
    struct rt_task task;
    int listener;
    const struct limits *lim;
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
        c->lim = co->lim;
        c->tok = rt_token_new(rt, co->task.token);
        resp_parser_init(&c->parser);
        buf_init(&c->out);
        buf_init(&c->wire);
        c->cl = (struct client){.srv = co->state,
                                .id = ++co->state->next_client_id,
                                .out = &c->out,
                                .wake = conn__wake};
        co->state->connected++;
        rt_future_release(rt_task_start(&c->task, co->task.token)); /* runs on its own */
    }
    RT_RETURN(co, 0);
    ASYNC_END(&co->task);
}

/* -o HARD[:SOFT:SECONDS], Redis's "client-output-buffer-limit pubsub"
 * in bytes and seconds. */
static int server__output_limit(const char *arg, struct limits *lim)
{
    char hard[32], soft[32], secs[32];
    int n = sscanf(arg, "%31[0-9]:%31[0-9]:%31[0-9]", hard, soft, secs);

    if (n != 1 && n != 3)
        return -1;
    if (net_parse_int(hard, 1024, LONG_MAX, &lim->pubsub_hard) < 0)
        return -1;
    if (n == 1) { /* the hard limit alone: no soft one */
        lim->pubsub_soft = lim->pubsub_hard;
        lim->pubsub_soft_secs = 0;
        return strlen(arg) == strlen(hard) ? 0 : -1;
    }
    if (net_parse_int(soft, 1024, lim->pubsub_hard, &lim->pubsub_soft) < 0 ||
        net_parse_int(secs, 0, 86400, &lim->pubsub_soft_secs) < 0)
        return -1;
    return strlen(arg) == strlen(hard) + strlen(soft) + strlen(secs) + 2 ? 0 : -1;
}

static int server__option(int opt, const char *arg, void *ctx)
{
    struct limits *lim = ctx;

    if (opt == 'q')
        return net_parse_int(arg, 1024, QBUF_LIMIT, &lim->qlimit) == 0 ? 0 : -1;
    if (opt == 'o')
        return server__output_limit(arg, lim);
    if (opt == 'd' && *arg) {
        lim->dir = arg;
        return 0;
    }
    if (opt == 'f' && *arg && !strchr(arg, '/')) { /* Redis: "dbfilename can't be a path" */
        lim->dbfilename = arg;
        return 0;
    }
    return -1;
}

int main(int argc, char **argv)
{
    struct server_state state = {0};
    struct limits lim = {QBUF_LIMIT, PUBSUB_HARD, PUBSUB_SOFT, PUBSUB_SOFT_SECS, ".", "dump.rdb"};
    const struct net_cli_extra extra = {
        .optstring = "q:o:d:f:",
        .usage =
            "  -q BYTES the query buffer limit, 1024 to 1073741824 (default: 1 GiB, Redis's)\n"
            "  -o HARD[:SOFT:SECONDS]  a subscriber's output limit: cut off past HARD bytes\n"
            "           pending, or past SOFT bytes for SECONDS (default: 33554432:8388608:60)\n"
            "  -d DIR   the folder of the RDB file (default: .)\n"
            "  -f NAME  the RDB file, loaded at start, written by SAVE and BGSAVE\n"
            "           (default: dump.rdb)\n",
        .on_opt = server__option,
        .ctx = &lim};
    struct net_cli cli;
    struct server *srv;
    struct expirer *exp;
    char why[PATH_MAX + 256];
    const char *pause;
    struct rt *rt;
    int err, listener;
    long res;

    net_cli_parse(&cli, argc, argv, "A Redis-compatible server on the mini runtime (RESP2).",
                  &extra);
    if ((pause = getenv("MINI_REDIS_SAVE_PAUSE_MS")) != NULL) { /* for the tests: rdb.h */
        long ms;
        if (net_parse_int(pause, 0, 60000, &ms) < 0)
            net_die(EINVAL, "MINI_REDIS_SAVE_PAUSE_MS=%s: expected milliseconds, 0 to 60000",
                    pause);
        rdb_set_save_pause(ms);
    }
    db_init(&state.db);
    /* Before anything else, as redis-server loads before it serves: a client
     * never sees a half-loaded key space. A file that cannot be loaded
     * stops the start: serving an empty key space would lose it at the
     * next save. */
    if (rdb_load(&state.db, lim.dir, lim.dbfilename, db_now_ms(), why, sizeof(why)) < 0) {
        fprintf(stderr, "mini-redis: cannot load %s\n", why);
        db_free(&state.db);
        return 1;
    }
    if (!(rt = rt_create(&err, why, sizeof(why)))) {
        fprintf(stderr, "mini-redis: %s\n", why);
        db_free(&state.db);
        return err == -EINVAL ? 2 : 77;
    }
    fprintf(stderr, "mini-redis: backend %s\n", rt_backend_name(rt));
    /* Before listening: a test may send SIGTERM as soon as it sees the port. */
    if ((err = rt_shutdown_on_signals(rt)) < 0)
        net_die(-err, "rt_shutdown_on_signals");
    state.backend = rt_backend_name(rt);
    state.started_ms = db_now_ms();
    state.rdb_dir = lim.dir;
    state.rdb_name = lim.dbfilename;
    state.lastsave = time(NULL); /* as Redis's initServer sets it */
    state.child_started = reaper_start;
    state.host = rt;
    srv = RT_TASK_NEW(rt, struct server, server_step);
    srv->listener = listener = net_listen_or_die(&cli, SOMAXCONN);
    state.port = net_local_port(listener);
    srv->lim = &lim;
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
    blocked_free(&state);
    dict_free(&state.channels);
    dict_free(&state.patterns);
    db_free(&state.db);
    return res < 0 || err < 0 ? 1 : 0;
}
