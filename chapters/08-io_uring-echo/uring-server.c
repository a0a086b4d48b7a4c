/* SPDX-License-Identifier: MIT */
/* uring-server.c: the echo server of echo-uring and echo-uring-sqpoll.
 *
 * This is echo-uring-basic.c's loop from this chapter, grown into a module,
 * and the copy is the lesson: set them side by side. It changed only in:
 *   - one multishot accept (5.19) for the life of the listener, instead of
 *     one accept SQE per client;
 *   - one multishot recv (6.0) per connection, which takes a buffer from a
 *     provided buffer ring (bufring.c) only when bytes arrive, instead of
 *     one recv SQE and one private buffer per message;
 *   - the received buffer itself is sent back, and returns to the ring only
 *     when its send has completed;
 *   - the loop reaps every CQE that is there and submits every SQE it
 *     queued with one io_uring_submit_and_wait() per turn.
 * The price is bookkeeping: a multishot request ends when its CQE lacks
 * IORING_CQE_F_MORE, and must then be re-armed (or not) by the program.
 */
#include "uring-server.h"

#include "net.h"
#include "ring.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define SQ_ENTRIES      512
#define CQ_ENTRIES      4096 /* multishot requests post many CQEs per SQE */
#define ACCEPT_RETRY_MS 1000 /* after EMFILE, accept again after this long (or a close) */

static struct signalfd_siginfo sig_info;
static struct __kernel_timespec retry_ts = {.tv_sec = ACCEPT_RETRY_MS / 1000};

struct io_uring_sqe *server_sqe(struct server *s, const struct conn *c, enum op op)
{
    struct io_uring_sqe *sqe = ring_sqe(&s->ring);

    io_uring_sqe_set_data64(sqe, ud_pack(c, op));
    s->in_flight++;
    return sqe;
}

/* snippet: arm-accept */
void server_arm_accept(struct server *s)
{
    io_uring_prep_multishot_accept(server_sqe(s, NULL, OP_ACCEPT), s->listen_fd, NULL, NULL,
                                   SOCK_CLOEXEC);
    s->accept_armed = true;
    s->accept_paused = false;
}
/* end snippet */

static void server__on_accept(struct server *s, const struct io_uring_cqe *cqe)
{
    struct conn *c;
    int res = cqe->res;

    if (!(cqe->flags & IORING_CQE_F_MORE))
        s->accept_armed = false;
    if (res >= 0 && s->stopping) {
        close(res);
    } else if (res >= 0) {
        s->accept_errno = 0;
        s->st.accepted++;
        if (!(c = conn_new(s, res))) {
            fprintf(stderr, "accept(fd=%d): no memory for client fd=%d\n", s->listen_fd, res);
            close(res);
        } else {
            conn_update(s, c); /* arms its recv */
        }
    } else if (res != -ECANCELED) {
        if (-res != s->accept_errno)
            fprintf(stderr, "accept(fd=%d): %s\n", s->listen_fd, strerror(-res));
        s->accept_errno = -res;
        /* EMFILE ends the multishot accept (no F_MORE). Re-arming at once
         * would fail at once, forever: wait for a close or the timer. */
        if (!s->accept_armed && !s->stopping) {
            s->accept_paused = true;
            if (!s->timer_armed) {
                io_uring_prep_timeout(server_sqe(s, NULL, OP_TIMER), &retry_ts, 0, 0);
                s->timer_armed = true;
            }
        }
        return;
    }
    if (!s->accept_armed && !s->stopping && !s->accept_paused)
        server_arm_accept(s); /* the kernel ended it (CQ overflow...): again */
}

static void server__stop(struct server *s)
{
    struct list_node *n, *next;

    s->stopping = true;
    if (s->accept_armed)
        io_uring_prep_cancel_fd(server_sqe(s, NULL, OP_CANCEL), s->listen_fd,
                                IORING_ASYNC_CANCEL_ALL);
    if (s->timer_armed)
        io_uring_prep_cancel64(server_sqe(s, NULL, OP_CANCEL), ud_pack(NULL, OP_TIMER), 0);
    list_for_each_safe(n, next, &s->conns)
        conn_update(s, list_entry(n, struct conn, link)); /* cancels, or frees it */
}

static void server__complete(struct server *s, const struct io_uring_cqe *cqe)
{
    struct conn *c = ud_conn(cqe->user_data);

    s->st.cqes++;
    if (!(cqe->flags & IORING_CQE_F_MORE))
        s->in_flight--; /* the request's last CQE */
    switch (ud_op(cqe->user_data)) {
    case OP_ACCEPT:
        server__on_accept(s, cqe);
        break;
    case OP_RECV:
        conn_on_recv(s, c, cqe);
        conn_update(s, c);
        break;
    case OP_SEND:
        conn_on_send(s, c, cqe->res);
        conn_update(s, c);
        break;
    case OP_SIGNAL:
        server__stop(s);
        break;
    case OP_TIMER:
        s->timer_armed = false;
        if (s->accept_paused && !s->stopping)
            server_arm_accept(s);
        break;
    case OP_CANCEL:
        if (c) { /* did it end what it was meant to? conn_update() looks */
            c->cancelling = false;
            conn_update(s, c);
        }
        break;
    }
}

/* Connections whose recv ended with -ENOBUFS get a new one once the ring
 * has buffers again: as many as it has, oldest first. */
static void server__feed_starved(struct server *s)
{
    unsigned budget = s->bufs.in_kernel;

    while (s->starved_head && budget > 0) {
        struct conn *c = s->starved_head;
        s->starved_head = c->starved_next;
        if (!s->starved_head)
            s->starved_tail = NULL;
        c->starved = false;
        budget--;
        conn_update(s, c);
    }
}

/* snippet: loop */
static int server__run(struct server *s)
{
    while (!s->stopping || s->in_flight > 0) {
        struct io_uring_cqe *cqe;
        unsigned head, n = 0;
        int ret;

        /* One system call per turn: submit every SQE queued while handling
         * the last batch, run the deferred task work (which posts CQEs),
         * and sleep only if no CQE is there. With SQPOLL and CQEs waiting,
         * not even that: io_uring_submit() only writes to the SQ ring, and
         * makes a system call only to wake a sleeping kernel thread. It
         * puts the full barrier that needs between the tail it stores and
         * the IORING_SQ_NEED_WAKEUP it reads (sq_ring_needs_enter() in
         * liburing's src/queue.c; chapter 07, "Memory ordering"). */
        if ((s->ring.flags & IORING_SETUP_SQPOLL) && io_uring_cq_ready(&s->ring) > 0)
            ret = io_uring_submit(&s->ring);
        else
            ret = io_uring_submit_and_wait(&s->ring, 1);
        s->st.loops++;
        if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
            fprintf(stderr, "io_uring_submit_and_wait: %s\n", strerror(-ret));
            return 1;
        }
        io_uring_for_each_cqe(&s->ring, head, cqe)
        {
            server__complete(s, cqe);
            n++;
        }
        io_uring_cq_advance(&s->ring, n); /* all n slots back to the kernel at once */
        bufring_publish(&s->bufs);        /* and every buffer echoed in this batch */
        server__feed_starved(s);
    }
    return 0;
}
/* end snippet */

#define USAGE_COMMON                                                                               \
    "  -B COUNT  buffers in the provided buffer ring, a power of two (1024)\n"                     \
    "  -s BYTES  size of each buffer (4096)\n"                                                     \
    "  -S BYTES  SO_SNDBUF for accepted sockets (small: forces short sends)\n"                     \
    "  -v        print statistics on stderr at exit\n"                                             \
    "  -K        check that this kernel has what the server needs, and exit\n"                     \
    "            (0: yes, 77: no, with the reason)\n"

struct opts {
    bool stats, check, no_defer;
    int sndbuf;
    unsigned nbufs, buf_size, sq_idle_ms;
};

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
    case 'D':
        o->no_defer = true;
        return 0;
    case 'S':
        if (net_parse_int(arg, 1, 1 << 30, &v) < 0)
            return -1;
        o->sndbuf = (int)v;
        return 0;
    case 'B':
        if (net_parse_int(arg, 1, 32768, &v) < 0 || (v & (v - 1)))
            return -1;
        o->nbufs = (unsigned)v;
        return 0;
    case 's':
        if (net_parse_int(arg, 16, 1 << 20, &v) < 0)
            return -1;
        o->buf_size = (unsigned)v;
        return 0;
    case 'I':
        if (net_parse_int(arg, 1, 60000, &v) < 0)
            return -1;
        o->sq_idle_ms = (unsigned)v;
        return 0;
    }
    return -1;
}

int userver_main(int argc, char **argv, const char *prog, const char *summary, unsigned setup_flags)
{
    bool sqpoll = setup_flags & IORING_SETUP_SQPOLL;
    struct opts o = {.nbufs = 1024, .buf_size = 4096, .sq_idle_ms = 1000};
    struct net_cli_extra extra = {
        .optstring = sqpoll ? "vKS:B:s:I:" : "vKS:B:s:D",
        .usage =
            sqpoll ? USAGE_COMMON
                "  -I MS     sq_thread_idle: the kernel thread polls this long after the last\n"
                "            request before it sleeps (1000, the kernel's default)\n"
                   : USAGE_COMMON
                "  -D        no deferred task work (IORING_SETUP_DEFER_TASKRUN), to compare\n",
        .on_opt = opts__on_opt,
        .ctx = &o,
    };
    unsigned needs = RING_NEED_NET_OPS | RING_NEED_FAST_POLL | RING_NEED_BUF_RING |
                     RING_NEED_MULTISHOT_ACCEPT | RING_NEED_MULTISHOT_RECV | RING_NEED_CANCEL_FD;
    struct server s = {0};
    struct net_cli cli;
    int ret, status;

    net_cli_parse(&cli, argc, argv, summary, &extra);
    list_init(&s.conns);
    s.sndbuf = o.sndbuf;
    /* snippet: defer */
    /* A recv that waited for bytes is finished by "task work" run in this
     * thread. By default the kernel interrupts the thread for it, like a
     * signal, whatever it is doing; with DEFER_TASKRUN (6.1) it waits until
     * the loop asks for completions, and runs it all then, in one batch.
     * It needs SINGLE_ISSUER (one thread submits) and no SQPOLL; ring_open()
     * drops both flags on kernels that do not know them. */
    if (!sqpoll && !o.no_defer)
        setup_flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    /* end snippet */
    ring_open_checked(&s.ring, prog, SQ_ENTRIES, CQ_ENTRIES, setup_flags, o.sq_idle_ms, needs,
                      o.check);
    if ((ret = bufring_init(&s.bufs, &s.ring, BGID, o.nbufs, o.buf_size)) < 0)
        net_die(-ret, "%s: provided buffer ring of %u x %u bytes", prog, o.nbufs, o.buf_size);
    s.next_bid = calloc(o.nbufs, sizeof(*s.next_bid));
    s.len_of = calloc(o.nbufs, sizeof(*s.len_of));
    if (!s.next_bid || !s.len_of)
        net_die(ENOMEM, "%s: buffer bookkeeping", prog);
    s.signal_fd = net_signalfd_or_die(0); /* read by the ring, like any completion */
    s.listen_fd = net_listen_or_die(&cli, SOMAXCONN);

    io_uring_prep_read(server_sqe(&s, NULL, OP_SIGNAL), s.signal_fd, &sig_info, sizeof(sig_info),
                       0);
    server_arm_accept(&s);
    status = server__run(&s);

    while (!list_empty(&s.conns))
        conn_free(&s, list_first_entry(&s.conns, struct conn, link));
    /* Every request has ended and every connection has given its buffers
     * back: by the server's own count, all of them are in the ring again
     * (published, or staged for the publish that will not come). Any other
     * figure in "back in ring" means the count has drifted. */
    if (o.stats)
        fprintf(stderr,
                "stats: accepted %llu, recv CQEs %llu, send CQEs %llu, short sends %llu, "
                "ENOBUFS %llu, recv armed %llu, throttled %llu, copied out %llu, most held %llu, "
                "loops %llu, CQEs %llu, buffers %u, back in ring %u\n",
                s.st.accepted, s.st.recvs, s.st.sends, s.st.short_sends, s.st.enobufs, s.st.rearms,
                s.st.throttled, s.st.copied, s.st.most_held, s.st.loops, s.st.cqes, s.bufs.count,
                s.bufs.in_kernel + s.bufs.staged);
    bufring_free(&s.bufs, &s.ring);
    io_uring_queue_exit(&s.ring);
    free(s.next_bid);
    free(s.len_of);
    close(s.listen_fd);
    close(s.signal_fd);
    return status;
}
