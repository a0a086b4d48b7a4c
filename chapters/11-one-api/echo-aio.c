/* SPDX-License-Identifier: MIT */
/* echo-aio.c: one echo server, written once against the cio library
 * (cio/cio.h), running on io_uring, epoll, kqueue or IOCP.
 *
 * The server never asks whether a socket is ready. Each connection owns two
 * operations, a recv and a send, and the server reacts to their
 * completions: bytes received are queued for the send; a finished send takes
 * the next batch; a recv is kept posted while less than PENDING_MAX bytes
 * wait to go out (backpressure: a client that never reads stops being read).
 * The recv is a pooled one (CIO_RECV_POOLED): the library lends a buffer
 * only once bytes have come, so a connection whose client is silent holds
 * no receive buffer, and one whose bytes are all echoed holds no other.
 *
 *     make -C chapters/11-one-api
 *     build/chapters/11-one-api/echo-aio -p 0                   (the best backend)
 *     CIO_BACKEND=epoll CIO_TRACE=1 build/chapters/11-one-api/echo-aio -p 0
 *     build/common/tools/echo-client -p PORT hello              (from another terminal)
 *     wine64 build/chapters/11-one-api/win/echo-aio.exe -p 0    (IOCP, under Wine)
 *
 * CIO_BACKEND=uring|epoll|kqueue picks the backend; an unknown name is an
 * error (exit 2), a backend this machine refuses (io_uring forbidden) exits
 * 77 with the reason. SIGINT/SIGTERM (Ctrl-C on Windows) complete a CIO_STOP
 * op, and the server cancels every operation, waits for each cancelled one
 * to complete, frees everything and exits 0: with a completion backend the
 * kernel may write into a buffer until its operation completes, so no
 * memory is freed before that.
 */
#include "buf.h"
#include "cio/cio.h"
#include "list.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#define sock_close(s) closesocket(s)
#else
#include "net.h"
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#define sock_close(s) close(s)
#endif

#define PENDING_MAX     (1024 * 1024) /* no recv posted while this much waits to go out */
#define ACCEPT_RETRY_MS 1000          /* out of fds: try accepting again after this */

struct server;

/* snippet: conn */
struct conn {
    struct server *srv;
    cio_fd fd;
    struct cio_op recv, send;
    bool recv_busy, send_busy; /* submitted, not yet called back */
    bool peer_eof;             /* the client half-closed: echo what is left, then close */
    bool failed;               /* an error, or shutdown: cancel, then free */
    /* The send op points into `sending`, which nothing touches until the send
     * completes: the kernel may be reading it. Received bytes wait in `queued`. */
    struct buf sending;
    struct buf queued;
    struct list_node link; /* in the server's list of connections */
};
/* end snippet */

struct server {
    struct cio *aio;
    cio_fd listener;
    struct cio_op accept, retry, stop;
    bool accept_busy, retry_busy, stop_busy;
    bool accept_paused; /* out of fds: waiting for a close or the retry timer */
    int accept_errno;   /* the last accept error logged: a streak is logged once */
    bool stopping;
    struct list_node conns; /* every connection (conn.link) */
    long served, open;
};

static void conn_pump(struct conn *c);
static void server_accept(struct server *s);

static void submit_or_die(struct cio *a, struct cio_op *op)
{
    int err = cio_submit(a, op);

    if (err < 0) { /* EINVAL or EBUSY: a bug in this program, not the network */
        fprintf(stderr, "echo-aio: cio_submit(kind %d, fd %lld): %s\n", (int)op->kind,
                (long long)op->fd, strerror(-err));
        abort();
    }
}

/* ---- one connection ---------------------------------------------------------- */

static void conn_free(struct conn *c)
{
    struct server *s = c->srv;

    list_remove(&c->link);
    cio_detach(s->aio, c->fd);
    sock_close(c->fd);
    buf_free(&c->sending);
    buf_free(&c->queued);
    free(c);
    s->open--;
    if (s->accept_paused && !s->stopping) /* an fd was freed: accept again */
        server_accept(s);
}

/* snippet: on-recv */
static void conn_on_recv(struct cio *a, struct cio_op *op)
{
    struct conn *c = op->user_data;
    int oom = 0;

    c->recv_busy = false;
    if (op->res > 0) {
        /* The bytes are copied into the output queue and the pool buffer
         * goes back at once. Sending straight from it would save the copy,
         * but a client that reads slowly would then pin up to PENDING_MAX of
         * pool buffers (64 of them), and a few such clients would leave none
         * for everyone else. */
        oom = buf_append(&c->queued, op->buf, (size_t)op->res) < 0;
        cio_buf_release(a, op->buf);
    }
    if (oom)
        c->failed = true; /* out of memory: drop this client, keep the others */
    else if (op->res == 0)
        c->peer_eof = true;
    else if (op->res < 0)
        c->failed = true; /* reset, or cancelled at shutdown */
    conn_pump(c);
}
/* end snippet */

/* snippet: on-send */
static void conn_on_send(struct cio *a, struct cio_op *op)
{
    struct conn *c = op->user_data;

    (void)a;
    c->send_busy = false;
    if (op->res >= 0 && (size_t)op->res != op->len) {
        /* The API promises whole sends: a short one is the backend's bug. */
        fprintf(stderr, "echo-aio: a send of %zu bytes completed with %d\n", op->len, op->res);
        c->failed = true;
    } else if (op->res < 0) {
        c->failed = true;
    } else {
        buf_free(&c->sending); /* all sent: an idle connection keeps no buffer */
    }
    conn_pump(c);
}
/* end snippet */

/* snippet: pump */
/* Decide what the connection needs next, after any completion. */
static void conn_pump(struct conn *c)
{
    struct cio *a = c->srv->aio;

    if (c->failed || c->srv->stopping) {
        /* Nothing may be freed while an op is in flight: cancel, and come
         * back here from its callback. */
        if (c->recv_busy)
            cio_cancel(a, &c->recv);
        if (c->send_busy)
            cio_cancel(a, &c->send);
        if (!c->recv_busy && !c->send_busy)
            conn_free(c);
        return;
    }
    if (!c->send_busy && buf_len(&c->sending) == 0 && buf_len(&c->queued) > 0) {
        struct buf t = c->sending; /* the queued bytes become the ones to send */
        c->sending = c->queued;
        c->queued = t;
    }
    if (!c->send_busy && buf_len(&c->sending) > 0) {
        c->send.buf = (char *)buf_peek(&c->sending);
        c->send.len = buf_len(&c->sending);
        c->send_busy = true;
        submit_or_die(a, &c->send);
    }
    if (!c->recv_busy && !c->peer_eof && buf_len(&c->sending) + buf_len(&c->queued) < PENDING_MAX) {
        c->recv_busy = true;
        submit_or_die(a, &c->recv);
    }
    if (c->peer_eof && !c->send_busy && !c->recv_busy && buf_len(&c->queued) == 0)
        conn_free(c); /* everything echoed: close, and the client sees EOF */
}
/* end snippet */

static void conn_start(struct server *s, cio_fd fd)
{
    struct conn *c = calloc(1, sizeof(*c));
    int err;

    if (!c || (err = cio_attach(s->aio, fd)) < 0) {
        fprintf(stderr, "echo-aio: client fd %lld: %s, closing it\n", (long long)fd,
                strerror(c ? -err : ENOMEM));
        free(c);
        sock_close(fd);
        return;
    }
    c->srv = s;
    c->fd = fd;
    c->recv =
        (struct cio_op){.kind = CIO_RECV_POOLED, .fd = fd, .cb = conn_on_recv, .user_data = c};
    c->send = (struct cio_op){.kind = CIO_SEND, .fd = fd, .cb = conn_on_send, .user_data = c};
    list_insert(&s->conns, &c->link);
    s->open++;
    s->served++;
    conn_pump(c);
}

/* ---- accepting --------------------------------------------------------------- */

static void server_on_accept(struct cio *a, struct cio_op *op)
{
    struct server *s = op->user_data;
    int res = op->res;

    (void)a;
    s->accept_busy = false;
    if (s->stopping) {
        if (res >= 0)
            sock_close((cio_fd)res);
        return;
    }
    if (res >= 0) {
        s->accept_errno = 0;
#ifdef _WIN32
        BOOL one = TRUE;
        setsockopt((SOCKET)res, IPPROTO_TCP, TCP_NODELAY, (char *)&one, sizeof(one));
#else
        net_set_nodelay(res); /* echo small messages at once, no Nagle delay */
#endif
        conn_start(s, (cio_fd)res);
        server_accept(s);
        return;
    }
    if (-res != s->accept_errno)
        fprintf(stderr, "accept(fd=%lld): %s%s\n", (long long)s->listener, strerror(-res),
                res == -EMFILE || res == -ENFILE ? ": not accepting until a connection closes"
                                                 : "");
    s->accept_errno = -res;
    if (res == -EMFILE || res == -ENFILE || res == -ENOBUFS || res == -ENOMEM) {
        /* Accepting again at once would fail again at once: a busy loop. */
        s->accept_paused = true;
        if (!s->retry_busy) {
            s->retry_busy = true;
            submit_or_die(a, &s->retry);
        }
        return;
    }
    server_accept(s); /* ECONNABORTED and the like: that client only */
}

static void server_on_retry(struct cio *a, struct cio_op *op)
{
    struct server *s = op->user_data;

    (void)a;
    s->retry_busy = false;
    if (s->accept_paused && !s->stopping)
        server_accept(s);
}

static void server_accept(struct server *s)
{
    s->accept_paused = false;
    if (!s->accept_busy) {
        s->accept_busy = true;
        submit_or_die(s->aio, &s->accept);
    }
}

/* ---- shutdown ------------------------------------------------------------------ */

/* snippet: stop */
/* Cancel every op; the loop in main() runs until each has called back. */
static void server_begin_stop(struct server *s)
{
    struct list_node *n, *next;

    s->stopping = true;
    if (s->accept_busy)
        cio_cancel(s->aio, &s->accept);
    if (s->retry_busy)
        cio_cancel(s->aio, &s->retry);
    list_for_each_safe(n, next, &s->conns)
        conn_pump(list_entry(n, struct conn, link)); /* which may free it */
}
/* end snippet */

/* The CIO_STOP op completed: SIGINT or SIGTERM (Ctrl-C on Windows) came, or
 * it failed, or main() cancelled it at the end. */
static void server_on_stop(struct cio *a, struct cio_op *op)
{
    struct server *s = op->user_data;

    (void)a;
    s->stop_busy = false;
    if (op->res < 0 && op->res != -ECANCELED)
        fprintf(stderr, "echo-aio: waiting for a stop signal: %s\n", strerror(-op->res));
    if (!s->stopping)
        server_begin_stop(s);
}

static int server_exit_code(int err)
{
    return err == -EINVAL ? 2 : 77; /* no such backend : not here */
}

int main(int argc, char **argv)
{
    static struct server s; /* zeroed */
    char why[256], caps[128];
    int err, ret;

#ifdef _WIN32
    struct win_cli cli;
    win_stdio_binary();
    win_cli_parse(&cli, argc, argv, "An echo server on one completion API (cio.h).", NULL);
#else
    struct net_cli cli;
    net_cli_parse(&cli, argc, argv, "An echo server on one completion API (cio.h).", NULL);
#endif
    list_init(&s.conns);
    if (!(s.aio = cio_create(&err, why, sizeof(why)))) {
        fprintf(stderr, "echo-aio: %s\n", why);
        return server_exit_code(err);
    }
    fprintf(stderr, "echo-aio: backend %s (%s)\n", cio_backend_name(s.aio),
            cio_caps_text(cio_caps(s.aio), caps, sizeof(caps)));

    /* snippet: stop-op */
    /* Before listening: a test may send SIGTERM as soon as it sees the port. */
    s.stop = (struct cio_op){.kind = CIO_STOP, .cb = server_on_stop, .user_data = &s};
    s.stop_busy = true;
    submit_or_die(s.aio, &s.stop);
    /* end snippet */
#ifdef _WIN32
    win_sockets_start();
    s.listener = win_listen_or_die(&cli, SOMAXCONN);
#else
    s.listener = net_listen_or_die(&cli, SOMAXCONN);
#endif
    if ((err = cio_attach(s.aio, s.listener)) < 0) {
        fprintf(stderr, "echo-aio: cio_attach(listener): %s\n", strerror(-err));
        return 1;
    }
    s.accept = (struct cio_op){
        .kind = CIO_ACCEPT, .fd = s.listener, .cb = server_on_accept, .user_data = &s};
    s.retry = (struct cio_op){
        .kind = CIO_TIMEOUT, .timeout_ms = ACCEPT_RETRY_MS, .cb = server_on_retry, .user_data = &s};
    server_accept(&s);

    /* snippet: loop */
    while (!s.stopping || cio_in_flight(s.aio) > 0) {
        if (s.stopping && s.stop_busy)
            cio_cancel(s.aio, &s.stop);
        if ((ret = cio_run(s.aio, -1)) < 0) {
            fprintf(stderr, "echo-aio: cio_run: %s\n", strerror(-ret));
            return 1;
        }
    }
    /* end snippet */

    fprintf(stderr, "echo-aio: %ld connections served, %ld still open\n", s.served, s.open);
    cio_detach(s.aio, s.listener);
    sock_close(s.listener);
    cio_destroy(s.aio);
#ifdef _WIN32
    WSACleanup();
#endif
    return 0;
}
