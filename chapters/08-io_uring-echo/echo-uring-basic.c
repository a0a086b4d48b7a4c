/* SPDX-License-Identifier: MIT */
/* echo-uring-basic.c: an io_uring echo server, one request at a time.
 *
 * The completion model of io_uring in its plainest form. The server never
 * asks "is this socket ready?" (chapters 03 to 05). It hands the kernel a
 * whole operation, "accept on this socket", "receive into this buffer",
 * "send these bytes", as a submission queue entry (SQE), and later reads the
 * result from the completion queue (CQE): a new fd, a byte count, or -errno.
 * Each CQE carries back the 64-bit user_data of its SQE; here that is a
 * pointer to the connection plus the operation (basic.h).
 *
 *     make -C chapters/08-io_uring-echo
 *     build/chapters/08-io_uring-echo/echo-uring-basic -p 0 [-v] [-S BYTES]
 *     build/common/tools/echo-client -p PORT hello      (from another terminal)
 *
 * Linux 5.7 or newer (IORING_OP_ACCEPT/RECV/SEND, and FAST_POLL so a waiting
 * recv costs no kernel thread); -K checks this kernel and exits.
 *
 * Every request here is single-shot: one SQE, one CQE, then the server
 * queues the next one. What a connection does on each completion is in
 * basic-conn.c; this file is the loop, accepting, and shutting down. The
 * loop takes one CQE per io_uring_enter() call, the simplest shape;
 * echo-uring.c batches.
 */
#include "basic.h"
#include "net.h"
#include "ring.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define RING_ENTRIES    256
#define ACCEPT_RETRY_MS 1000 /* after EMFILE, accept again after this long (or a close) */

struct opts {
    bool stats, check;
    int sndbuf;
    size_t buf_size;
};

static struct signalfd_siginfo sig_info; /* the signal read lands here */
static struct __kernel_timespec retry_ts = {.tv_nsec = ACCEPT_RETRY_MS * 1000000LL};

/* snippet: queue */
/* Every request goes through here: take an SQE, say what it is about. The
 * SQE is submitted on the next io_uring_submit_and_wait() of the loop. */
static struct io_uring_sqe *server__sqe(struct server *s, struct conn *c, enum op op)
{
    struct io_uring_sqe *sqe = ring_sqe(&s->ring);

    io_uring_sqe_set_data64(sqe, ud_pack(c, op));
    s->in_flight++;
    return sqe;
}

void conn_queue_recv(struct server *s, struct conn *c)
{
    io_uring_prep_recv(server__sqe(s, c, OP_RECV), c->fd, c->buf, s->buf_size, 0);
    c->busy = true;
    c->req_ud = ud_pack(c, OP_RECV);
}

void conn_queue_send(struct server *s, struct conn *c)
{
    /* MSG_NOSIGNAL: a send to a reset peer fails with -EPIPE, no SIGPIPE. */
    io_uring_prep_send(server__sqe(s, c, OP_SEND), c->fd, c->buf + c->sent, c->len - c->sent,
                       MSG_NOSIGNAL);
    c->busy = true;
    c->req_ud = ud_pack(c, OP_SEND);
}
/* end snippet */

static void server__queue_accept(struct server *s)
{
    io_uring_prep_accept(server__sqe(s, NULL, OP_ACCEPT), s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    s->accept_armed = true;
    s->accept_paused = false;
}

void conn_close(struct server *s, struct conn *c)
{
    list_remove(&c->link);
    close(c->fd);
    free(c);
    /* An fd is free again: if accepting was paused for lack of fds, resume. */
    if (s->accept_paused && !s->stopping)
        server__queue_accept(s);
}

void conn_fail(struct server *s, struct conn *c, const char *call, int err)
{
    fprintf(stderr, "%s(fd=%d): %s\n", call, c->fd, strerror(err));
    conn_close(s, c);
}

static void server__on_accept(struct server *s, int res)
{
    struct conn *c;

    s->accept_armed = false;
    if (res < 0) {
        if (res != -s->accept_errno)
            fprintf(stderr, "accept(fd=%d): %s\n", s->listen_fd, strerror(-res));
        s->accept_errno = -res;
        if (res == -EMFILE || res == -ENFILE || res == -ENOBUFS || res == -ENOMEM) {
            /* Accepting again at once would fail at once, forever: a busy
             * loop. Wait for a connection to close, or for the timer. */
            s->accept_paused = true;
            if (!s->timer_armed) {
                io_uring_prep_timeout(server__sqe(s, NULL, OP_TIMER), &retry_ts, 0, 0);
                s->timer_armed = true;
            }
            return;
        }
        server__queue_accept(s); /* ECONNABORTED and the like: that client is gone */
        return;
    }
    s->accept_errno = 0;
    s->accepted++;
    server__queue_accept(s);
    /* malloc(), not calloc(): zeroing the buffer would make all of it
     * resident before a byte arrives (chapter 14 measures it). */
    if (!(c = malloc(sizeof(*c) + s->buf_size))) {
        fprintf(stderr, "accept(fd=%d): no memory for client fd=%d, closing it\n", s->listen_fd,
                res);
        close(res);
        return;
    }
    memset(c, 0, sizeof(*c));
    c->fd = res;
    net_set_nodelay(c->fd);
    if (s->sndbuf > 0)
        setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &s->sndbuf, sizeof(s->sndbuf));
    list_insert(&s->conns, &c->link);
    conn_queue_recv(s, c);
}

/* snippet: stop */
/* SIGINT/SIGTERM: cancel every request still in flight. Their CQEs (most
 * with -ECANCELED) still come, and only then may the buffers they point
 * into be freed: the loop runs until in_flight is 0. */
static void server__stop(struct server *s)
{
    struct list_node *n;

    s->stopping = true;
    if (s->accept_armed)
        io_uring_prep_cancel64(server__sqe(s, NULL, OP_CANCEL), ud_pack(NULL, OP_ACCEPT), 0);
    if (s->timer_armed)
        io_uring_prep_cancel64(server__sqe(s, NULL, OP_CANCEL), ud_pack(NULL, OP_TIMER), 0);
    list_for_each(n, &s->conns) {
        struct conn *c = list_entry(n, struct conn, link);
        if (c->busy)
            io_uring_prep_cancel64(server__sqe(s, NULL, OP_CANCEL), c->req_ud, 0);
    }
}
/* end snippet */

/* snippet: dispatch */
static void server__complete(struct server *s, const struct io_uring_cqe *cqe)
{
    struct conn *c = ud_conn(cqe->user_data);
    int res = cqe->res;

    s->in_flight--;
    switch (ud_op(cqe->user_data)) {
    case OP_ACCEPT:
        s->accept_armed = false;
        if (res >= 0 && s->stopping)
            close(res); /* accepted just as we were stopping */
        else if (!s->stopping)
            server__on_accept(s, res);
        break;
    case OP_RECV:
    case OP_SEND:
        c->busy = false;
        if (s->stopping) {
            conn_close(s, c); /* cancelled (or finished anyway): nothing uses c now */
            break;
        }
        if (ud_op(cqe->user_data) == OP_RECV) {
            s->recvs++;
            conn_on_recv(s, c, res);
        } else {
            s->sends++;
            if (res > 0 && (size_t)res < c->len - c->sent)
                s->short_sends++;
            conn_on_send(s, c, res);
        }
        break;
    case OP_SIGNAL:
        if (!s->stopping)
            server__stop(s);
        break;
    case OP_TIMER:
        s->timer_armed = false;
        if (s->accept_paused && !s->stopping)
            server__queue_accept(s);
        break;
    case OP_CANCEL:
        break; /* 0, or -ENOENT when the request had just completed */
    }
}
/* end snippet */

static int opts__on_opt(int opt, const char *arg, void *ctx)
{
    struct opts *o = ctx;
    long v;

    switch (opt) {
    case 'v':
        o->stats = true;
        return 0;
    case 'K':
        o->check = true;
        return 0;
    case 'S':
        if (net_parse_int(arg, 1, 1 << 30, &v) < 0)
            return -1;
        o->sndbuf = (int)v;
        return 0;
    case 's':
        if (net_parse_int(arg, 16, 1 << 24, &v) < 0)
            return -1;
        o->buf_size = (size_t)v;
        return 0;
    }
    return -1;
}

int main(int argc, char **argv)
{
    struct opts o = {.buf_size = BASIC_BUF_SIZE};
    struct net_cli_extra extra = {
        .optstring = "vKS:s:",
        .usage = "  -s BYTES  size of each connection's buffer (16384)\n"
                 "  -S BYTES  SO_SNDBUF for accepted sockets (small: forces short sends)\n"
                 "  -v        print statistics (requests, short sends) on stderr at exit\n"
                 "  -K        check that this kernel has what the server needs, and exit\n"
                 "            (0: yes, 77: no, with the reason)\n",
        .on_opt = opts__on_opt,
        .ctx = &o,
    };
    struct server s = {0};
    struct net_cli cli;
    int ret, status = 0;

    net_cli_parse(&cli, argc, argv, "An io_uring echo server: single-shot requests.", &extra);
    list_init(&s.conns);
    s.sndbuf = o.sndbuf;
    s.buf_size = o.buf_size;
    ring_open_checked(&s.ring, "echo-uring-basic", RING_ENTRIES, 0, 0, 0,
                      RING_NEED_NET_OPS | RING_NEED_FAST_POLL, o.check);
    /* Before listening: a test may send SIGTERM as soon as it sees the port. */
    /* SIGINT and SIGTERM as a file descriptor (common/net.c), so the ring
     * reads them like any other completion. */
    s.signal_fd = net_signalfd_or_die(0);
    s.listen_fd = net_listen_or_die(&cli, SOMAXCONN);

    /* The signal is one more completion: a read on the signalfd. */
    io_uring_prep_read(server__sqe(&s, NULL, OP_SIGNAL), s.signal_fd, &sig_info, sizeof(sig_info),
                       0);
    server__queue_accept(&s);

    /* snippet: loop */
    while (!s.stopping || s.in_flight > 0) {
        struct io_uring_cqe *cqe;

        /* One system call: submit what the last completion queued, and
         * sleep until at least one CQE is there. */
        ret = io_uring_submit_and_wait(&s.ring, 1);
        if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
            fprintf(stderr, "io_uring_submit_and_wait: %s\n", strerror(-ret));
            status = 1;
            break;
        }
        if (io_uring_peek_cqe(&s.ring, &cqe) == 0) {
            server__complete(&s, cqe);
            io_uring_cqe_seen(&s.ring, cqe); /* the slot is the kernel's again */
        }
    }
    /* end snippet */

    while (!list_empty(&s.conns))
        conn_close(&s, list_first_entry(&s.conns, struct conn, link));
    if (o.stats)
        fprintf(stderr, "stats: accepted %llu, recv CQEs %llu, send CQEs %llu, short sends %llu\n",
                s.accepted, s.recvs, s.sends, s.short_sends);
    io_uring_queue_exit(&s.ring);
    close(s.listen_fd);
    close(s.signal_fd);
    return status;
}
