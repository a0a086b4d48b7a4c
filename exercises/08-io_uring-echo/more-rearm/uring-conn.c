/* SPDX-License-Identifier: MIT */
/* uring-conn.c: one connection of echo-uring and echo-uring-sqpoll.
 *
 * A connection has at most two requests in flight: one multishot recv,
 * which keeps posting a CQE for every chunk of bytes it puts in a buffer of
 * the ring, and one send. The buffers received wait in a queue, in order;
 * the head one is sent as it is (no copy) and goes back to the ring when
 * its send has completed. After every completion conn_update() derives from
 * the state what must be in flight next:
 *
 *     bytes --> [multishot recv] --CQE with F_MORE, buffer 7--> queue: 2 9 7
 *                  |      ^                                          | head
 *   CQE without    |      | armed again by conn_update(),            v
 *   F_MORE: the    |      | unless throttled or starved           [send] --CQE--+
 *   recv ended  <--+      |                                          ^          |
 *   0 (EOF), -ENOBUFS, -ECANCELED, an error          short: the rest +----------+
 *                                                    all sent: buffer back to the ring
 *
 *   throttled: 8 buffers queued (a client that does not read): the recv is
 *     cancelled, and armed again when the queue is down to 4; what the recv
 *     still brings before the cancel lands is copied out of the ring;
 *   starved: the ring was empty when bytes came: armed again when the loop
 *     has given buffers back;
 *   EOF: the queue is echoed, then the connection is closed.
 */
#include "uring-server.h"

#include "net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void conn__arm_recv(struct server *s, struct conn *c)
{
    struct io_uring_sqe *sqe = server_sqe(s, c, OP_RECV);

    /* No buffer and length 0: the kernel picks a buffer from group BGID
     * each time bytes arrive, and posts one CQE per pick, with F_MORE set
     * while the request stays armed. */
    io_uring_prep_recv_multishot(sqe, c->fd, NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = BGID;
    c->recv_armed = true;
}

/* The bytes to echo first: the head buffer of the queue, or once the queue
 * is empty the first chunk copied out. */
static const char *conn__head(const struct server *s, const struct conn *c, unsigned *len)
{
    if (c->q_len > 0) {
        *len = s->len_of[c->q_head];
        return bufring_buf(&s->bufs, (unsigned)c->q_head);
    }
    *len = c->spill_head->len;
    return c->spill_head->data;
}

static void conn__send_head(struct server *s, struct conn *c)
{
    unsigned len;
    const char *p = conn__head(s, c, &len);

    /* The received buffer goes out as it is: no copy. It stays ours, and
     * out of the ring, until this send's CQE arrives (a chunk likewise
     * stays allocated: nothing is appended to it). */
    io_uring_prep_send(server_sqe(s, c, OP_SEND), c->fd, p + c->q_off, len - c->q_off,
                       MSG_NOSIGNAL);
    c->send_armed = true;
}

static void conn__push(struct server *s, struct conn *c, unsigned bid, unsigned len)
{
    s->len_of[bid] = len;
    s->next_bid[bid] = -1;
    if (c->q_tail >= 0)
        s->next_bid[c->q_tail] = (int)bid;
    else
        c->q_head = (int)bid;
    c->q_tail = (int)bid;
    c->q_len++;
}

/* Drop the head once echoed: a buffer goes back to the ring, a chunk is freed. */
static void conn__pop(struct server *s, struct conn *c)
{
    c->q_off = 0;
    if (c->q_len > 0) {
        unsigned bid = (unsigned)c->q_head;
        c->q_head = s->next_bid[bid];
        if (c->q_head < 0)
            c->q_tail = -1;
        c->q_len--;
        bufring_give(&s->bufs, bid);
    } else {
        struct chunk *k = c->spill_head;
        c->spill_head = k->next;
        if (!c->spill_head)
            c->spill_tail = NULL;
        c->spill_len--;
        free(k);
    }
}

/* Keep a received buffer's bytes until they are echoed. Up to CONN_MAX_BUFS
 * buffers wait in the queue as they are. Beyond that, the bytes are copied
 * out and the buffer can go back to the ring at once: a multishot recv
 * cannot be told to stop after N buffers, and the cancel that throttling
 * sends lands only after the kernel has filled as many as the socket had
 * bytes for (63 of 64 held at once in the test, without this copy).
 * Returns whether the buffer stays out of the ring. */
static bool conn__keep(struct server *s, struct conn *c, unsigned bid, unsigned len)
{
    struct chunk *k;

    if (c->q_len < CONN_MAX_BUFS && !c->spill_head) {
        conn__push(s, c, bid, len);
        if (c->q_len > s->st.most_held)
            s->st.most_held = c->q_len;
        return true;
    }
    k = malloc(sizeof(*k) + len);
    if (!k) {
        fprintf(stderr, "fd=%d: no memory for %u bytes over its buffers: closing it\n", c->fd, len);
        c->closing = true;
        return false;
    }
    k->next = NULL;
    k->len = len;
    memcpy(k->data, bufring_buf(&s->bufs, bid), len);
    if (c->spill_tail)
        c->spill_tail->next = k;
    else
        c->spill_head = k;
    c->spill_tail = k;
    c->spill_len++;
    s->st.copied++;
    return false;
}

void conn_free(struct server *s, struct conn *c)
{
    while (c->q_len > 0 || c->spill_head)
        conn__pop(s, c);
    if (c->starved) { /* rare: unlink it from the starved list */
        struct conn **p = &s->starved_head, *last = NULL;
        while (*p != c) {
            last = *p;
            p = &(*p)->starved_next;
        }
        *p = c->starved_next;
        if (s->starved_tail == c)
            s->starved_tail = last;
    }
    list_remove(&c->link);
    close(c->fd);
    free(c);
    if (s->accept_paused && !s->stopping)
        server_arm_accept(s); /* an fd is free again */
}

/* After every completion of a connection: from its state, decide what must
 * be in flight now. Like the interest of chapter 03's poll loop, this is
 * derived each time, never remembered as a to-do. May free c. */
void conn_update(struct server *s, struct conn *c)
{
    unsigned waiting = c->q_len + c->spill_len;

    if (c->peer_eof && waiting == 0 && !c->send_armed)
        c->closing = true; /* everything echoed after the client's EOF */
    if (c->closing || s->stopping) {
        if (!c->recv_armed && !c->send_armed && !c->cancelling) {
            conn_free(s, c);
        } else if ((c->recv_armed || c->send_armed) && !c->cancelling) {
            /* close() would not end them: a request holds its own reference
             * to the socket. Cancel every request on this fd instead. */
            io_uring_prep_cancel_fd(server_sqe(s, c, OP_CANCEL), c->fd, IORING_ASYNC_CANCEL_ALL);
            c->cancelling = true;
        }
        return;
    }
    if (!c->send_armed && waiting > 0)
        conn__send_head(s, c);
    if (waiting >= CONN_MAX_BUFS && !c->throttled) {
        /* Backpressure: this client sends faster than it reads. Stop
         * receiving from it; TCP's window then stops the client. */
        c->throttled = true;
        s->st.throttled++;
    } else if (c->throttled && waiting <= CONN_MAX_BUFS / 2 && !c->recv_armed) {
        c->throttled = false;
    }
    if (c->throttled && c->recv_armed && !c->cancelling) {
        /* A cancel can miss a request that is running at that very moment
         * (its CQE says -EALREADY): then the recv is still armed when the
         * cancel's CQE comes back here, and it is cancelled again. */
        io_uring_prep_cancel64(server_sqe(s, c, OP_CANCEL), ud_pack(c, OP_RECV), 0);
        c->cancelling = true;
    }
    if (!c->recv_armed && !c->peer_eof && !c->throttled && !c->starved) {
        conn__arm_recv(s, c);
        s->st.rearms++;
    }
}

void conn_on_recv(struct server *s, struct conn *c, const struct io_uring_cqe *cqe)
{
    int res = cqe->res;

    s->st.recvs++;
    /* A multishot recv lasts as long as the connection: at the end of the
     * stream it is over, and conn_update() decides what comes next. */
    if (res == 0)
        c->recv_armed = false;
    if (cqe->flags & IORING_CQE_F_BUFFER) {
        unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
        bufring_taken(&s->bufs);
        if (res > 0 && !c->closing && conn__keep(s, c, bid, (unsigned)res))
            return;                  /* queued: echoed by conn_update() */
        bufring_give(&s->bufs, bid); /* nothing to echo in it, or copied out */
    }
    if (res == 0) {
        c->peer_eof = true;
    } else if (res == -ENOBUFS) {
        /* The ring was empty when bytes came. Not the client's fault: keep
         * the connection, and re-arm once buffers come back (server_run). */
        s->st.enobufs++;
        c->starved = true;
        c->starved_next = NULL;
        if (s->starved_tail)
            s->starved_tail->starved_next = c;
        else
            s->starved_head = c;
        s->starved_tail = c;
    } else if (res < 0 && res != -ECANCELED) {
        fprintf(stderr, "recv(fd=%d): %s\n", c->fd, strerror(-res));
        c->closing = true;
    }
}

void conn_on_send(struct server *s, struct conn *c, int res)
{
    unsigned len;

    s->st.sends++;
    c->send_armed = false;
    if (res == -EINTR || res == -EAGAIN)
        return; /* nothing sent: conn_update() sends the head again */
    if (res < 0) {
        if (res != -ECANCELED)
            fprintf(stderr, "send(fd=%d): %s\n", c->fd, strerror(-res));
        c->closing = true;
        return;
    }
    conn__head(s, c, &len);
    c->q_off += (unsigned)res;
    if (c->q_off < len) {
        s->st.short_sends++; /* conn_update() sends the rest */
        return;
    }
    conn__pop(s, c); /* fully echoed: the buffer goes back to the ring, a chunk is freed */
}

struct conn *conn_new(struct server *s, int fd)
{
    struct conn *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    *c = (struct conn){.fd = fd, .q_head = -1, .q_tail = -1};
    list_insert(&s->conns, &c->link);
    net_set_nodelay(fd);
    if (s->sndbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &s->sndbuf, sizeof(s->sndbuf));
    return c;
}
