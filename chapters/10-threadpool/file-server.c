/* file-server: an epoll loop that serves files, reading them on a thread pool.
 *
 * epoll cannot wait for a regular file (epoll_ctl says EPERM, chapter 04): a
 * read() from a file is never "not ready", it just takes as long as the disk
 * takes. So the loop never reads a file itself. It hands each request to the
 * pool (pool.c); a pool thread opens and reads the file (file-job.c); the
 * finished job comes back through an eventfd in the epoll set (handoff.c),
 * and the loop thread sends the reply. The protocol is in file-job.h.
 *
 *     make -C chapters/10-threadpool
 *     build/chapters/10-threadpool/file-server -r DIR -p 0 [-w THREADS] [-q QUEUE]
 *         [-s MS_PER_MIB] [-m MIB]
 *     build/chapters/10-threadpool/file-client -p PORT some/file > copy
 *
 * -w 0 reads every file on the loop thread instead: the mistake this chapter
 * measures (every client waits while one file is read). -s slows every read
 * down to MS_PER_MIB milliseconds per MiB, a slow disk on demand.
 * Linux 5.6 or later for openat2(); elsewhere a realpath() check stands in.
 */
#include "file-job.h"
#include "net.h"
#include "pool.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_EVENTS 64

enum watch_kind { WATCH_SIGNAL, WATCH_LISTENER, WATCH_POOL, WATCH_CONN };
struct watch { /* what epoll_event.data.ptr points to: the first member of its owner */
    enum watch_kind kind;
    int fd;
};

enum conn_state {
    CONN_READING, /* waiting for a complete request line */
    CONN_WORKING, /* its file_job is in the pool: nothing to read or write */
    CONN_WRITING, /* sending a reply */
};

struct server;
struct conn {
    struct watch w; /* first */
    struct server *srv;
    enum conn_state state;
    bool peer_eof;    /* the client half-closed: finish, then close */
    bool close_after; /* a BADREQ reply: close once it is sent */
    bool orphaned;    /* the socket was closed while its job was in the pool */
    uint32_t registered;
    struct buf in, out;
    struct file_job fj; /* the request in flight (one per connection at a time) */
    struct conn *prev, *next;
};

struct server {
    int epfd;
    struct watch sig, listener, pool_w;
    struct pool pool;
    int threads; /* 0: file reads run on the loop thread */
    struct file_root root;
    struct conn *conns;
    bool stopping;
};

static void conn_advance(struct conn *c);

static void server__unlink(struct server *s, struct conn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

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
static void conn_close(struct conn *c)
{
    server__unlink(c->srv, c);
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

static void conn_on_events(struct conn *c, uint32_t events)
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

static void server__accept(struct server *s)
{
    for (int k = 0; k < 64; k++) {
        int fd = accept4(s->listener.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        struct epoll_event ev;
        struct conn *c;

        if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
            continue;
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                fprintf(stderr, "accept(fd=%d): %s\n", s->listener.fd, strerror(errno));
            return; /* chapter 04 shows the better answers to EMFILE */
        }
        net_set_nodelay(fd);
        if (!(c = calloc(1, sizeof(*c)))) {
            close(fd);
            continue;
        }
        *c = (struct conn){.w = {WATCH_CONN, fd}, .srv = s, .registered = EPOLLIN | EPOLLRDHUP};
        ev = (struct epoll_event){.events = c->registered, .data.ptr = &c->w};
        if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
            fprintf(stderr, "epoll_ctl(ADD, fd=%d): %s\n", fd, strerror(errno));
            close(fd);
            free(c);
            continue;
        }
        c->next = s->conns;
        if (s->conns)
            s->conns->prev = c;
        s->conns = c;
    }
}

static int signals_to_fd(void)
{
    sigset_t mask;
    int fd;

    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    /* Before the pool starts: new threads inherit the mask, and a thread
     * that left SIGTERM unblocked would take it with the default action
     * (exit at once, no cleanup) instead of the signalfd getting it. */
    if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
        net_die(errno, "sigprocmask(SIG_BLOCK, SIGINT|SIGTERM)");
    if ((fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
        net_die(errno, "signalfd(SIGINT|SIGTERM)");
    signal(SIGPIPE, SIG_IGN);
    return fd;
}

struct opts {
    const char *root;
    long threads, queue, ms_per_mib, max_mib;
};

static int on_opt(int opt, const char *arg, void *ctx)
{
    struct opts *o = ctx;

    switch (opt) {
    case 'r':
        o->root = arg;
        return 0;
    case 'w':
        return net_parse_int(arg, 0, 1024, &o->threads);
    case 'q':
        return net_parse_int(arg, 1, 1000000, &o->queue);
    case 's':
        return net_parse_int(arg, 0, 60000, &o->ms_per_mib);
    case 'm':
        return net_parse_int(arg, 1, 4096, &o->max_mib);
    }
    return -1;
}

static void watch_add(int epfd, struct watch *w)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = w};

    if (epoll_ctl(epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0)
        net_die(errno, "epoll_ctl(ADD, fd=%d)", w->fd);
}

int main(int argc, char **argv)
{
    struct opts o = {.threads = 4, .queue = 64, .max_mib = 64};
    struct net_cli_extra extra = {
        .optstring = "r:w:q:s:m:",
        .usage = "  -r DIR    serve the files under DIR (required)\n"
                 "  -w N      pool threads (default 4); 0 reads files on the loop thread\n"
                 "  -q N      pool queue length (default 64); beyond it: ERR BUSY\n"
                 "  -s MS     simulate a slow disk: every read takes MS ms per MiB\n"
                 "  -m MIB    largest file served (default 64)\n",
        .on_opt = on_opt,
        .ctx = &o,
    };
    struct server s = {.pool_w = {WATCH_POOL, -1}};
    struct epoll_event events[MAX_EVENTS];
    struct net_cli cli;
    int err;

    net_cli_parse(&cli, argc, argv,
                  "Serve files (GET <path>) from an epoll loop; reads run on a pool.", &extra);
    if (!o.root) {
        fprintf(stderr, "file-server: -r DIR is required (see -h)\n");
        return 2;
    }
    if ((err = file_root_open(&s.root, o.root)) < 0)
        net_die(-err, "open(-r %s)", o.root);
    s.root.max_size = (size_t)o.max_mib << 20;
    s.root.disk_ns_per_mib = o.ms_per_mib * 1000000LL;
    s.threads = (int)o.threads;
    s.sig = (struct watch){WATCH_SIGNAL, signals_to_fd()};
    if (s.threads > 0 && (err = pool_init(&s.pool, s.threads, (size_t)o.queue)) < 0)
        net_die(-err, "pool_init(%d threads)", s.threads);
    s.listener = (struct watch){WATCH_LISTENER, net_listen_or_die(&cli, SOMAXCONN)};
    if ((err = net_set_nonblocking(s.listener.fd)) < 0)
        net_die(-err, "fcntl(fd=%d, O_NONBLOCK)", s.listener.fd);
    if ((s.epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
        net_die(errno, "epoll_create1");
    watch_add(s.epfd, &s.sig);
    watch_add(s.epfd, &s.listener);
    if (s.threads > 0) {
        s.pool_w.fd = pool_fd(&s.pool);
        watch_add(s.epfd, &s.pool_w);
    }

    /* snippet: loop */
    while (!s.stopping) {
        int n = epoll_wait(s.epfd, events, MAX_EVENTS, -1);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            net_die(errno, "epoll_wait(epfd=%d)", s.epfd);
        for (int i = 0; i < n; i++) {
            struct watch *w = events[i].data.ptr;
            if (w->kind == WATCH_CONN)
                conn_on_events((struct conn *)w, events[i].events);
            else if (w->kind == WATCH_POOL)
                pool_drain(&s.pool); /* done callbacks, here on the loop thread */
            else if (w->kind == WATCH_LISTENER)
                server__accept(&s);
            else
                s.stopping = true;
        }
    }
    /* end snippet */

    /* snippet: stop */
    /* Jobs not started are cancelled; running ones finish (a read cannot be
     * interrupted), and every done callback runs here, freeing its request
     * (and its connection, if that was already closed). Then the rest. */
    if (s.threads > 0)
        pool_shutdown(&s.pool, POOL_CANCEL);
    while (s.conns)
        conn_close(s.conns);
    /* end snippet */
    close(s.epfd);
    close(s.listener.fd);
    close(s.sig.fd);
    file_root_close(&s.root);
    return 0;
}
