/* SPDX-License-Identifier: MIT */
/* echo-pool.c: an echo server with a fixed pool of worker threads.
 *
 * The main thread accepts connections and pushes them into a bounded queue
 * (conn-queue.c); each of the -w workers pops one and serves it, with the same
 * blocking loop as echo-threads, until the client leaves. The number of
 * threads, and so their cost, no longer grows with the number of clients.
 *
 * The price: a worker is busy for as long as its client stays connected,
 * idle or not. With -w 4, the fifth client is accepted (by the kernel, which
 * completes the TCP handshake, and by the main thread, which queues it), yet
 * gets no echo until one of the first four leaves. The pool starves.
 *
 *     accept() -> [ queue of -q slots ] -> worker 1 .. worker N -> read/write
 *
 * Shutdown: SIGINT and SIGTERM are blocked in every thread, and one thread
 * waits for them with sigwait(). It cannot be a signal handler, since the
 * main thread may be asleep in conn_queue_push() on a condition variable and
 * pthread_cond_broadcast() is not async-signal-safe. That thread stops the
 * queue (waking the acceptor and idle workers), shuts down every connection
 * being served (waking busy workers), and wakes the main thread's poll().
 *
 * Build and run, from the repository root:
 *     make -C chapters/02-threads
 *     build/chapters/02-threads/echo-pool -p 0 -w 2
 */
#include "conn-queue.h"
#include "net.h"

#include <errno.h>
#include <fcntl.h>
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

struct pool;

struct worker {
    pthread_t thread;
    struct pool *pool;
    int fd; /* the connection being served, -1 when idle; guarded by pool->busy_lock */
};

struct pool {
    struct conn_queue queue;
    pthread_mutex_t busy_lock;
    bool stopping; /* guarded by busy_lock: no new connection may start */
    struct worker *workers;
    long nworkers;
    sigset_t stop_signals; /* SIGINT, SIGTERM: blocked everywhere, taken by sigwait() */
    pthread_t signal_thread;
    int stop_pipe[2]; /* the signal thread writes [1] to wake the main thread's poll() */
};

struct pool_opts {
    long workers;     /* -w */
    long queue_slots; /* -q */
};

static void report(const char *call, int fd, int err)
{
    fprintf(stderr, "echo-pool: %s(fd=%d): %s\n", call, fd, strerror(err));
}

/* The same per-client loop as echo-threads. */
static void conn_echo(int fd)
{
    char buf[ECHO_BUF_SIZE];

    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n == 0)
            return;
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

/* A test hook, off unless a test sets ECHO_POOL_TEST_BEGIN_DELAY_MS=N: a
 * worker that has taken a client then says so on stderr and sleeps N ms
 * before it publishes it, so that a test can stop the server at that very
 * moment, the one the `stopping` flag is for. */
static long test_begin_delay_ms;

static void test_begin_delay(int fd)
{
    struct timespec ts = {test_begin_delay_ms / 1000, test_begin_delay_ms % 1000 * 1000000L};

    if (test_begin_delay_ms <= 0)
        return;
    fprintf(stderr, "echo-pool: test hook: took fd %d, sleeping %ld ms before serving it\n", fd,
            test_begin_delay_ms);
    nanosleep(&ts, NULL);
}

/* Publish the connection this worker serves, so pool_stop() can shut it down.
 * Returns false when the pool is already stopping: the stopper may have gone
 * past this worker, so nobody would wake it. */
static bool worker_begin(struct worker *w, int fd)
{
    bool ok;

    test_begin_delay(fd);
    pthread_mutex_lock(&w->pool->busy_lock);
    ok = !w->pool->stopping;
    if (ok)
        w->fd = fd;
    pthread_mutex_unlock(&w->pool->busy_lock);
    return ok;
}

/* snippet: worker */
static void *worker_main(void *arg)
{
    struct worker *w = arg;
    int fd;

    while ((fd = conn_queue_pop(&w->pool->queue)) >= 0) {
        if (!worker_begin(w, fd)) {
            close(fd);
            break;
        }
        conn_echo(fd);
        pthread_mutex_lock(&w->pool->busy_lock);
        w->fd = -1; /* before close(): the stopper must not shut down a reused number */
        pthread_mutex_unlock(&w->pool->busy_lock);
        close(fd);
    }
    return NULL;
}
/* end snippet */

/* snippet: stop */
static void *pool_signal_main(void *arg)
{
    struct pool *p = arg;
    int sig;
    char one = 1;

    if (sigwait(&p->stop_signals, &sig) != 0)
        return NULL; /* cannot happen with a valid set */
    /* EXERCISE BEGIN pool-stop: stop the queue, shut down busy workers' sockets, wake main */
    conn_queue_stop(&p->queue); /* wakes the acceptor in push, idle workers in pop */
    pthread_mutex_lock(&p->busy_lock);
    p->stopping = true;
    for (long i = 0; i < p->nworkers; i++)
        if (p->workers[i].fd >= 0)
            shutdown(p->workers[i].fd, SHUT_RDWR); /* wakes a worker in read or write */
    pthread_mutex_unlock(&p->busy_lock);
    if (write(p->stop_pipe[1], &one, 1) < 0)
        report("write", p->stop_pipe[1], errno);
    /* EXERCISE END */
    return NULL;
}
/* end snippet */

/* Accept one client and queue it. Returns 1 to go on, 0 when the queue is
 * stopping, -1 to stop accepting for a moment (out of descriptors or memory). */
static int pool_accept(struct pool *p, int listen_fd)
{
    int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    int err;

    if (fd < 0) {
        switch (errno) {
        case EINTR:
        case EAGAIN:       /* the client left between poll() and accept() */
        case ECONNABORTED: /* likewise */
            return 1;
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
    if (conn_queue_push(&p->queue, fd) < 0) { /* may sleep while the queue is full */
        close(fd);
        return 0;
    }
    return 1;
}

static int on_opt(int opt, const char *arg, void *ctx)
{
    struct pool_opts *o = ctx;

    if (opt == 'w' && net_parse_int(arg, 1, 4096, &o->workers) == 0)
        return 0;
    if (opt == 'q' && net_parse_int(arg, 1, 65536, &o->queue_slots) == 0)
        return 0;
    fprintf(stderr, "echo-pool: -%c %s: not a number in range\n", opt, arg);
    return -1;
}

int main(int argc, char **argv)
{
    struct pool_opts opts = {.workers = 4, .queue_slots = 16};
    const struct net_cli_extra extra = {
        .optstring = "w:q:",
        .usage = "  -w N      worker threads, 1 to 4096 (default 4)\n"
                 "  -q N      queue slots for accepted clients, 1 to 65536 (default 16)\n",
        .on_opt = on_opt,
        .ctx = &opts,
    };
    struct pool p = {.busy_lock = PTHREAD_MUTEX_INITIALIZER};
    struct net_cli cli;
    long started = 0;
    int listen_fd, err;

    net_cli_parse(&cli, argc, argv, "Echo server: a fixed pool of worker threads.", &extra);
    if (getenv("ECHO_POOL_TEST_BEGIN_DELAY_MS"))
        test_begin_delay_ms = atol(getenv("ECHO_POOL_TEST_BEGIN_DELAY_MS"));

    /* Before any thread exists, so that every thread inherits the mask. */
    sigemptyset(&p.stop_signals);
    sigaddset(&p.stop_signals, SIGINT);
    sigaddset(&p.stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &p.stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN); /* a write to a reset client fails with EPIPE instead */

    if (pipe2(p.stop_pipe, O_CLOEXEC) < 0)
        net_die(errno, "pipe2");
    if ((err = conn_queue_init(&p.queue, (size_t)opts.queue_slots)) < 0)
        net_die(-err, "queue of %ld slots", opts.queue_slots);
    p.nworkers = opts.workers;
    p.workers = calloc((size_t)p.nworkers, sizeof(*p.workers));
    if (!p.workers)
        net_die(ENOMEM, "%ld workers", p.nworkers);
    for (; started < p.nworkers; started++) {
        struct worker *w = &p.workers[started];
        w->pool = &p;
        w->fd = -1;
        if ((err = pthread_create(&w->thread, NULL, worker_main, w)))
            net_die(err, "pthread_create(worker %ld)", started);
    }
    if ((err = pthread_create(&p.signal_thread, NULL, pool_signal_main, &p)))
        net_die(err, "pthread_create(signal thread)");

    /* Announce only once the workers are ready to serve. */
    listen_fd = net_listen_or_die(&cli, SOMAXCONN);
    if ((err = net_set_nonblocking(listen_fd)) < 0)
        net_die(-err, "fcntl(fd=%d, O_NONBLOCK)", listen_fd);

    /* snippet: main-loop */
    struct pollfd pfd[2] = {
        {.fd = p.stop_pipe[0], .events = POLLIN},
        {.fd = listen_fd, .events = POLLIN},
    };
    for (;;) {
        int n = poll(pfd, 2, pfd[1].fd < 0 ? ACCEPT_PAUSE_MS : -1);
        if (n < 0 && errno != EINTR)
            net_die(errno, "poll");
        if (n > 0 && pfd[0].revents)
            break; /* the signal thread has stopped the queue */
        if (pfd[1].fd < 0) {
            pfd[1].fd = listen_fd;
            continue;
        }
        int r = n > 0 && pfd[1].revents ? pool_accept(&p, listen_fd) : 1;
        if (r == 0)
            break;
        if (r < 0)
            pfd[1].fd = -1;
    }

    close(listen_fd);
    pthread_join(p.signal_thread, NULL); /* it has stopped the queue: now every worker returns */
    for (long i = 0; i < p.nworkers; i++)
        pthread_join(p.workers[i].thread, NULL);
    /* end snippet */
    conn_queue_destroy(&p.queue);
    free(p.workers);
    pthread_mutex_destroy(&p.busy_lock);
    close(p.stop_pipe[0]);
    close(p.stop_pipe[1]);
    return 0;
}
