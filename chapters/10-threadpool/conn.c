/* SPDX-License-Identifier: MIT */
/* conn.c: what file-server does with one connection. See conn.h.
 *
 * A connection reads a request line, hands the file read to the pool (or,
 * with -w 0, does it right here on the loop thread), and sends the reply the
 * job built, with pending bytes waiting for EPOLLOUT as in chapter 04. Then
 * it reads the next request. It never reads while a job or a reply is in
 * progress, so a client cannot queue more than one job.
 */
#include "conn.h"
#include "net.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

static void conn_advance(struct conn *c);

static void conn__free(struct conn *c)
{
    buf_free(&c->in);
    buf_free(&c->out);
    buf_free(&c->fj.reply);
    free(c);
}

/* snippet: close */
/* A connection with a job in the pool cannot be freed: the pool thread is
 * writing into c->fj, and the done callback will come. Close the socket now
 * (the client sees the end at once), and let the callback free the rest. */
void conn_close(struct conn *c)
{
    list_remove(&c->link);
    close(c->w.fd); /* also takes it out of the epoll set */
    c->w.fd = -1;
    if (c->state == CONN_WORKING)
        c->orphaned = true;
    else
        conn__free(c);
}
/* end snippet */

static void conn_update_interest(struct conn *c)
{
    uint32_t want = 0;
    struct epoll_event ev;

    if (c->state == CONN_READING && !c->peer_eof)
        want |= EPOLLIN | EPOLLRDHUP;
    if (buf_len(&c->out) > 0)
        want |= EPOLLOUT;
    if (want == c->registered)
        return;
    ev = (struct epoll_event){.events = want, .data.ptr = &c->w};
    if (epoll_ctl(c->srv->epfd, EPOLL_CTL_MOD, c->w.fd, &ev) < 0)
        net_die(errno, "epoll_ctl(MOD, fd=%d)", c->w.fd);
    c->registered = want;
}

static void conn__stats_reply(struct conn *c)
{
    struct pool_stats st = {0};
    char text[512], head[32];
    int n, h;

    if (c->srv->threads > 0)
        pool_get_stats(&c->srv->pool, &st);
    n = snprintf(text, sizeof(text),
                 "threads %d\nbusy %d\nidle %d\nqueued %zu\nqueue_cap %zu\nsubmitted %llu\n"
                 "completed %llu\nrejected %llu\nlongest_wait_ms %.3f\noldest_queued_ms %.3f\n",
                 st.threads, st.busy, st.idle, st.queued, st.queue_cap,
                 (unsigned long long)st.submitted, (unsigned long long)st.completed,
                 (unsigned long long)st.rejected, (double)st.longest_wait_ns / 1e6,
                 (double)st.oldest_queued_ns / 1e6);
    h = snprintf(head, sizeof(head), "OK %d\n", n);
    buf_append(&c->out, head, (size_t)h);
    buf_append(&c->out, text, (size_t)n);
}

/* snippet: done */
static void conn__take_reply(struct conn *c, int status)
{
    if (status < 0) { /* -ECANCELED: the job never ran */
        buf_free(&c->fj.reply);
        file_reply_error(&c->fj.reply, "IO", "%s: %s", c->fj.path, strerror(-status));
    }
    buf_free(&c->out);
    c->out = c->fj.reply; /* the reply buffer changes hands: no copy */
    buf_init(&c->fj.reply);
    c->state = CONN_WRITING;
}

/* The job's done callback. Always on the loop thread (pool_drain() runs it),
 * so it may write to the socket and change the epoll set like any event. */
static void conn_on_file_done(struct pool_job *job, int status)
{
    struct conn *c = (struct conn *)((char *)job - offsetof(struct conn, fj));

    if (c->orphaned) { /* the client left while its file was read */
        conn__free(c);
        return;
    }
    conn__take_reply(c, status);
    if (!c->srv->stopping)
        conn_advance(c);
}

static void conn__run_file_job(struct pool_job *job)
{
    file_job_run((struct file_job *)job); /* a pool thread: may block */
}
/* end snippet */

/* snippet: request */
static void conn__start_request(struct conn *c, char *line)
{
    struct server *s = c->srv;
    int err;

    if (strcmp(line, "STATS") == 0) {
        conn__stats_reply(c);
        c->state = CONN_WRITING;
        return;
    }
    if (strncmp(line, "GET ", 4) != 0 || line[4] == '\0') {
        file_reply_error(&c->out, "BADREQ", "expected 'GET <path>' or 'STATS'");
        c->state = CONN_WRITING;
        c->close_after = true;
        return;
    }
    snprintf(c->fj.path, sizeof(c->fj.path), "%s", line + 4);
    c->fj.root = &s->root;
    c->state = CONN_WORKING;
    if (s->threads == 0) { /* -w 0: block the loop, and every client with it */
        file_job_run(&c->fj);
        conn__take_reply(c, 0);
        return;
    }
    err = pool_submit(&s->pool, &c->fj.job, conn__run_file_job, conn_on_file_done);
    if (err < 0) { /* -EAGAIN: the queue is full. Say so now rather than queue without bound. */
        c->state = CONN_WRITING;
        file_reply_error(&c->out, "BUSY", "%s",
                         err == -EAGAIN ? "the work queue is full" : strerror(-err));
    }
}
/* end snippet */

/* Move the connection on as far as it can go without waiting: send what is
 * pending, then parse the next request if the reply is out. Closes it when
 * it is finished (or failed). */
static void conn_advance(struct conn *c)
{
    for (;;) {
        int err = buf_flush(&c->out, c->w.fd);
        char line[FILE_PATH_MAX];
        const char *nl;
        size_t len;

        if (err < 0 && err != -EAGAIN) {
            conn_close(c); /* EPIPE, ECONNRESET: the client is gone */
            return;
        }
        if (buf_len(&c->out) > 0)
            break; /* EAGAIN: EPOLLOUT will bring us back */
        if (c->state == CONN_WRITING) {
            if (c->close_after) {
                conn_close(c);
                return;
            }
            c->state = CONN_READING;
        }
        if (c->state != CONN_READING)
            break;
        nl = buf_len(&c->in) ? memchr(buf_peek(&c->in), '\n', buf_len(&c->in)) : NULL;
        len = nl ? (size_t)(nl - buf_peek(&c->in)) : buf_len(&c->in);
        if (len >= FILE_PATH_MAX) {
            buf_consume(&c->in, buf_len(&c->in));
            file_reply_error(&c->out, "BADREQ", "request line longer than %d bytes",
                             FILE_PATH_MAX - 1);
            c->state = CONN_WRITING;
            c->close_after = true;
            continue;
        }
        if (!nl) {
            if (c->peer_eof) { /* no complete request will come */
                conn_close(c);
                return;
            }
            break;
        }
        memcpy(line, buf_peek(&c->in), len);
        line[len] = '\0';
        if (len > 0 && line[len - 1] == '\r')
            line[len - 1] = '\0'; /* telnet and socat -crlf end lines with CRLF */
        buf_consume(&c->in, len + 1);
        conn__start_request(c, line);
    }
    conn_update_interest(c);
}

void conn_on_events(struct conn *c, uint32_t events)
{
    if (events & (EPOLLERR | EPOLLHUP)) {
        conn_close(c); /* reset, or both directions shut: nothing more to do */
        return;
    }
    if ((events & (EPOLLIN | EPOLLRDHUP)) && c->state == CONN_READING) {
        ssize_t n = buf_read_from(&c->in, c->w.fd, FILE_PATH_MAX);
        if (n == 0)
            c->peer_eof = true;
        else if (n < 0 && n != -EAGAIN) {
            conn_close(c);
            return;
        }
    }
    conn_advance(c);
}
