/* SPDX-License-Identifier: MIT */
/* echo-threads.c: an echo server with one thread per connection.
 *
 * Each accepted client gets its own thread, which runs the plain blocking
 * read()/write() loop of chapter 01. While one thread sleeps in read(), the
 * kernel's scheduler runs the others, so a slow or idle client no longer holds
 * up everyone else. The price is one thread per client: a stack, a kernel
 * task, a scheduler entry. conn-cost measures it.
 *
 * Shutdown is the hard part with threads. SIGINT and SIGTERM are blocked
 * before any thread exists, so every thread inherits that mask and the kernel
 * can interrupt none of them; the signals wait as data on a signalfd, which
 * the main thread polls along with the listener. On a signal it closes the
 * listener, calls shutdown(SHUT_RDWR) on every live connection (a worker
 * blocked in read() then sees EOF, one blocked in write() returns), joins
 * every worker and frees everything. (Linux-only: signalfd(2).)
 *
 * Threads are joinable, not detached: the main thread must know when a worker
 * has really finished (its descriptor closed, its stack released) before it
 * frees the connection or exits. A finished worker writes a byte to the reap
 * pipe, and the main thread joins it at once, so finished threads do not pile
 * up with their stacks still mapped.
 *
 * Build and run, from the repository root:
 *     make -C chapters/02-threads
 *     build/chapters/02-threads/echo-threads -p 0           # default stack (ulimit -s)
 *     build/chapters/02-threads/echo-threads -p 0 -s 64     # 64 KiB stacks
 */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ECHO_BUF_SIZE   4096
#define ACCEPT_PAUSE_MS 100 /* how long to stop accepting after EMFILE and the like */

struct registry;

/* One client. The main thread allocates it and, after pthread_join(), frees
 * it; the worker never frees its own struct. */
struct conn {
    int fd;
    pthread_t thread;
    struct registry *reg;
    struct conn *prev, *next; /* in reg->live while served; `next` links reg->finished after */
};

/* Every connection the server holds. A worker moves itself from `live` to
 * `finished` under the lock before it closes its descriptor, so the main
 * thread, which calls shutdown() only on `live` connections under the same
 * lock, never touches a closed descriptor (whose number the kernel may already
 * have given to a new client). */
struct registry {
    pthread_mutex_t lock;
    pthread_cond_t all_done; /* signalled when the last live connection finishes */
    struct conn *live;       /* being served */
    struct conn *finished;   /* worker done, waiting for pthread_join() */
    size_t nlive;
    int reap_wfd; /* a finished worker writes a byte here to wake the main thread */
};

struct server_opts {
    long stack_kb; /* -s; 0 keeps the default */
};

/* A test hook, off unless a test sets ECHO_THREADS_TEST_LINGER_MS=N: each
 * worker then sleeps N ms between its client's end and its exit, so that a
 * test can be sure workers are still live at a given moment (the stop must
 * wait for them, and the main thread must be woken to join them). */
static long test_linger_ms;

static void test_linger(void)
{
    struct timespec ts = {test_linger_ms / 1000, test_linger_ms % 1000 * 1000000L};

    if (test_linger_ms > 0)
        nanosleep(&ts, NULL);
}

static void report(const char *call, int fd, int err)
{
    fprintf(stderr, "echo-threads: %s(fd=%d): %s\n", call, fd, strerror(err));
}

/* The whole per-client protocol: blocking calls, written as if there were
 * only one client. Returns at EOF (the client half-closed, or shutdown() was
 * called on the socket) or on an error. */
/* snippet: echo-loop */
static void conn_echo(int fd)
{
    char buf[ECHO_BUF_SIZE]; /* on this thread's stack: each thread has its own */

    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n == 0)
            return; /* EOF: everything read so far has been echoed */
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != ECONNRESET)
                report("read", fd, errno);
            return;
        }
        ssize_t w = net_write_all(fd, buf, (size_t)n);
        if (w < 0) {
            /* EPIPE: the client is gone, or shutdown() is stopping us */
            if (w != -EPIPE && w != -ECONNRESET)
                report("write", fd, (int)-w);
            return;
        }
    }
}
/* end snippet */

/* snippet: worker */
static void *conn_thread(void *arg)
{
    struct conn *c = arg;
    struct registry *reg = c->reg;
    char one = 1;

    conn_echo(c->fd);
    test_linger(); /* tests only: see test_linger() */

    pthread_mutex_lock(&reg->lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        reg->live = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->next = reg->finished;
    reg->finished = c;
    if (--reg->nlive == 0)
        pthread_cond_signal(&reg->all_done);
    pthread_mutex_unlock(&reg->lock);

    close(c->fd); /* safe: no longer in `live`, so nobody else uses this number */
    /* A full pipe already holds a wake-up, so EAGAIN is fine to ignore. */
    if (write(reg->reap_wfd, &one, 1) < 0 && errno != EAGAIN)
        report("write", reg->reap_wfd, errno);
    return NULL;
}
/* end snippet */

/* Join and free every finished worker. Only the main thread calls this. */
static void registry_reap(struct registry *reg)
{
    struct conn *c, *next;

    pthread_mutex_lock(&reg->lock);
    c = reg->finished;
    reg->finished = NULL;
    pthread_mutex_unlock(&reg->lock);
    for (; c; c = next) {
        next = c->next;
        pthread_join(c->thread, NULL); /* returns at once or very soon: it is exiting */
        free(c);
    }
}

/* Start a worker for fd. It inherits the main thread's signal mask, with
 * SIGINT and SIGTERM blocked. Returns 0 or a positive errno. */
/* snippet: spawn */
static int registry_spawn(struct registry *reg, int fd, const pthread_attr_t *attr)
{
    struct conn *c = calloc(1, sizeof(*c));
    int err;

    if (!c)
        return ENOMEM;
    c->fd = fd;
    c->reg = reg;
    /* Holding the lock across pthread_create() means the worker cannot
     * unlink itself before it has been linked in. */
    pthread_mutex_lock(&reg->lock);
    err = pthread_create(&c->thread, attr, conn_thread, c);
    if (err == 0) {
        c->next = reg->live;
        if (reg->live)
            reg->live->prev = c;
        reg->live = c;
        reg->nlive++;
    }
    pthread_mutex_unlock(&reg->lock);
    if (err)
        free(c);
    return err;
}
/* end snippet */

/* Wake every worker and wait for all of them. shutdown() wakes a worker
 * blocked in read() (it returns 0, EOF) or write() (EPIPE) while the
 * descriptor stays open and owned by that worker, which closes it itself. */
/* snippet: stop-all */
static void registry_stop_all(struct registry *reg)
{
    /* EXERCISE BEGIN stop-all: wake every live worker, wait until none is live, then reap */
    pthread_mutex_lock(&reg->lock);
    for (struct conn *c = reg->live; c; c = c->next)
        shutdown(c->fd, SHUT_RDWR); /* ENOTCONN if the peer is gone: fine */
    while (reg->nlive > 0)
        pthread_cond_wait(&reg->all_done, &reg->lock);
    pthread_mutex_unlock(&reg->lock);
    registry_reap(reg);
    /* EXERCISE END */
}
/* end snippet */

/* Accept one client and start its thread. Returns 0, or -1 when the server
 * should stop accepting for a moment (out of descriptors, memory or threads:
 * the pending connection would make poll() report the listener again at once). */
static int server_accept(struct registry *reg, int listen_fd, const pthread_attr_t *attr)
{
    int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    int err;

    if (fd < 0) {
        switch (errno) {
        case EINTR:
        case EAGAIN:       /* the client left between poll() and accept() */
        case ECONNABORTED: /* likewise */
            return 0;
        case EMFILE:
        case ENFILE:
        case ENOBUFS:
        case ENOMEM:
            report("accept", listen_fd, errno);
            return -1;
        default:
            net_die(errno, "accept(fd=%d)", listen_fd);
        }
    }
    /* Echoes are small writes: do not let Nagle's algorithm hold them back
     * (chapter 01 measured the stall). */
    if ((err = net_set_nodelay(fd)) < 0)
        report("setsockopt(TCP_NODELAY)", fd, -err);
    err = registry_spawn(reg, fd, attr);
    if (err) {
        fprintf(stderr, "echo-threads: pthread_create(fd=%d): %s: closing the connection\n", fd,
                strerror(err));
        close(fd);
        return -1;
    }
    return 0;
}

static void drain(int fd)
{
    char sink[64];

    while (read(fd, sink, sizeof(sink)) > 0)
        ;
}

static int on_opt(int opt, const char *arg, void *ctx)
{
    struct server_opts *o = ctx;

    if (opt != 's')
        return -1;
    /* PTHREAD_STACK_MIN is a sysconf() call in glibc 2.34+, so check it here. */
    if (net_parse_int(arg, 1, 1024 * 1024, &o->stack_kb) < 0 ||
        o->stack_kb * 1024 < (long)PTHREAD_STACK_MIN) {
        fprintf(stderr, "echo-threads: -s %s: not a stack size in KiB (%ld to %d)\n", arg,
                (long)PTHREAD_STACK_MIN / 1024, 1024 * 1024);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct server_opts opts = {0};
    const struct net_cli_extra extra = {
        .optstring = "s:",
        .usage = "  -s KB     thread stack size in KiB (default: the stack limit, ulimit -s)\n",
        .on_opt = on_opt,
        .ctx = &opts,
    };
    struct registry reg = {.lock = PTHREAD_MUTEX_INITIALIZER, .all_done = PTHREAD_COND_INITIALIZER};
    struct net_cli cli;
    pthread_attr_t attr;
    int stop_fd, listen_fd, reap[2], err;

    net_cli_parse(&cli, argc, argv, "Echo server: one thread per connection.", &extra);
    if (getenv("ECHO_THREADS_TEST_LINGER_MS"))
        test_linger_ms = atol(getenv("ECHO_THREADS_TEST_LINGER_MS"));
    pthread_attr_init(&attr);
    if (opts.stack_kb && (err = pthread_attr_setstacksize(&attr, (size_t)opts.stack_kb * 1024)))
        net_die(err, "pthread_attr_setstacksize(%ld KiB)", opts.stack_kb);

    /* Before any thread exists (they inherit the blocked mask), and before
     * we listen: from here on a signal waits on stop_fd and cannot kill us
     * or interrupt a worker. */
    stop_fd = net_signalfd_or_die(0);
    if (pipe2(reap, O_NONBLOCK | O_CLOEXEC) < 0)
        net_die(errno, "pipe2");
    reg.reap_wfd = reap[1];
    listen_fd = net_listen_or_die(&cli, SOMAXCONN);
    /* Non-blocking, so a client that leaves between poll() and accept()
     * cannot leave us stuck in accept(), where the signalfd cannot wake us. */
    if ((err = net_set_nonblocking(listen_fd)) < 0)
        net_die(-err, "fcntl(fd=%d, O_NONBLOCK)", listen_fd);

    /* snippet: main-loop */
    struct pollfd pfd[3] = {
        {.fd = stop_fd, .events = POLLIN},
        {.fd = reap[0], .events = POLLIN},
        {.fd = listen_fd, .events = POLLIN},
    };
    for (;;) {
        /* pfd[2].fd < 0 (paused) makes poll() skip the listener. */
        int n = poll(pfd, 3, pfd[2].fd < 0 ? ACCEPT_PAUSE_MS : -1);
        if (n < 0 && errno != EINTR)
            net_die(errno, "poll");
        if (n < 0)
            continue;
        if (pfd[0].revents)
            break; /* SIGINT or SIGTERM is pending: time to stop */
        if (pfd[1].revents) {
            drain(reap[0]);
            registry_reap(&reg);
        }
        if (pfd[2].fd < 0)
            pfd[2].fd = listen_fd; /* paused long enough, or a client left */
        else if (pfd[2].revents && server_accept(&reg, listen_fd, &attr) < 0)
            pfd[2].fd = -1;
    }

    close(listen_fd);
    registry_stop_all(&reg);
    /* end snippet */
    /* What the stop promises, checked before anything is freed: a stop that
     * returned early (its wait ended without the last worker's signal, which
     * POSIX allows) would free the lock and the pipe under running workers. */
    if (reg.nlive > 0 || reg.live || reg.finished) {
        fprintf(stderr, "echo-threads: the stop returned with %zu connections still live%s\n",
                reg.nlive, reg.finished ? " and finished workers not joined" : "");
        return 1;
    }
    pthread_cond_destroy(&reg.all_done);
    pthread_mutex_destroy(&reg.lock);
    close(reap[0]);
    close(reap[1]);
    close(stop_fd);
    pthread_attr_destroy(&attr);
    return 0;
}
