/* SPDX-License-Identifier: MIT */
/* file-server.c: an epoll loop that serves files, reading them on a thread pool.
 *
 * epoll cannot wait for a regular file (epoll_ctl says EPERM, chapter 04): a
 * read() from a file is never "not ready", it just takes as long as the disk
 * takes. So the loop never reads a file itself. It hands each request to the
 * pool (pool.c); a pool thread opens and reads the file (file-job.c); the
 * finished job comes back through an eventfd in the epoll set (handoff.c),
 * and the loop thread sends the reply (conn.c). The protocol is in file-job.h.
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
#include "conn.h"
#include "file-job.h"
#include "net.h"
#include "pool.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_EVENTS 64

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
        list_insert(&s->conns, &c->link);
    }
}

struct opts {
    const char *root;
    long threads, queue, ms_per_mib, max_mib;
};

static int server__on_opt(int opt, const char *arg, void *ctx)
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

static void server__watch_add(int epfd, struct watch *w)
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
        .on_opt = server__on_opt,
        .ctx = &o,
    };
    struct server s = {.pool_w = {WATCH_POOL, -1}};
    struct epoll_event events[MAX_EVENTS];
    struct net_cli cli;
    int err;

    net_cli_parse(&cli, argc, argv,
                  "Serve files (GET <path>) from an epoll loop; reads run on a pool.", &extra);
    list_init(&s.conns);
    if (!o.root) {
        fprintf(stderr, "file-server: -r DIR is required (see -h)\n");
        return 2;
    }
    if ((err = file_root_open(&s.root, o.root)) < 0)
        net_die(-err, "open(-r %s)", o.root);
    s.root.max_size = (size_t)o.max_mib << 20;
    s.root.disk_ns_per_mib = o.ms_per_mib * 1000000LL;
    s.threads = (int)o.threads;
    s.sig = (struct watch){WATCH_SIGNAL, net_signalfd_or_die(SFD_NONBLOCK)};
    if (s.threads > 0 && (err = pool_init(&s.pool, s.threads, (size_t)o.queue)) < 0)
        net_die(-err, "pool_init(%d threads)", s.threads);
    s.listener = (struct watch){WATCH_LISTENER, net_listen_or_die(&cli, SOMAXCONN)};
    if ((err = net_set_nonblocking(s.listener.fd)) < 0)
        net_die(-err, "fcntl(fd=%d, O_NONBLOCK)", s.listener.fd);
    if ((s.epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
        net_die(errno, "epoll_create1");
    server__watch_add(s.epfd, &s.sig);
    server__watch_add(s.epfd, &s.listener);
    if (s.threads > 0) {
        s.pool_w.fd = pool_fd(&s.pool);
        server__watch_add(s.epfd, &s.pool_w);
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
    while (!list_empty(&s.conns))
        conn_close(list_first_entry(&s.conns, struct conn, link));
    /* end snippet */
    close(s.epfd);
    close(s.listener.fd);
    close(s.sig.fd);
    file_root_close(&s.root);
    return 0;
}
