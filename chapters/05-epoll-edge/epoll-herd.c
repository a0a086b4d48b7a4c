/* SPDX-License-Identifier: MIT */
/* epoll-herd.c: how many threads does one new connection wake?
 *
 *     make -C chapters/05-epoll-edge
 *     build/chapters/05-epoll-edge/epoll-herd [-t THREADS] [-n CONNECTIONS]
 *
 * The "shared listener" design: THREADS threads, each with its own epoll
 * instance, all watching the same listening socket. When a connection
 * arrives, the socket wakes every epoll instance that watches it, so every
 * thread wakes up, and all but one find nothing to accept: the thundering
 * herd. EPOLLEXCLUSIVE (Linux 4.5) on each registration asks the kernel to
 * wake one of them (or a few) instead of all.
 *
 * The connections come one at a time, and a wake-up is counted the way the
 * kernel counts it: each time a thread sleeps again, its voluntary context
 * switches (/proc/self/task/TID/status) go up by one. A woken thread that
 * finds the listener already emptied goes back to sleep inside
 * epoll_wait() without returning, so counting returns would miss it.
 *
 * SO_REUSEPORT (echo-epoll-reuseport) avoids the question: each thread has
 * a listener of its own, and the kernel picks one per connection.
 */
#include "net.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 32

struct herd;

struct member {
    struct herd *h;
    pthread_t thread;
    int epfd;
    atomic_int tid;         /* set by the thread once it runs */
    unsigned long accepted; /* connections it accepted (read after join) */
    unsigned long empty;    /* accept() calls that found nothing: EAGAIN */
};

struct herd {
    int listener;        /* non-blocking, shared by every member */
    int stopfd;          /* eventfd, level-triggered in every epoll: ends them all */
    atomic_int accepted; /* total so far, for the connecting side to wait on */
    struct member m[MAX_THREADS];
    int n;
};

static void *member_main(void *arg)
{
    struct member *m = arg;
    struct epoll_event ev;

    atomic_store(&m->tid, gettid());
    for (;;) {
        int n = epoll_wait(m->epfd, &ev, 1, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            net_die(errno, "epoll_wait(epfd=%d)", m->epfd);
        if (ev.data.fd == m->h->stopfd)
            return NULL;
        int fd = accept4(m->h->listener, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) {
            close(fd);
            m->accepted++;
            atomic_fetch_add(&m->h->accepted, 1);
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            m->empty++; /* another thread took it: this wake-up was for nothing */
        } else {
            net_die(errno, "accept(fd=%d)", m->h->listener);
        }
    }
}

/* Voluntary context switches of one thread of this process so far. */
static long switches_of(int tid)
{
    char path[64], line[128];
    long n = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
    if (!(f = fopen(path, "r")))
        net_die(errno, "fopen(%s)", path);
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
            break;
    fclose(f);
    return n;
}

static long herd_switches(const struct herd *h)
{
    long total = 0;

    for (int i = 0; i < h->n; i++)
        total += switches_of(atomic_load(&h->m[i].tid));
    return total;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};

    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* snippet: run */
/* Start the herd, connect `conns` times, one connection at a time, and
 * count the wake-ups. */
static void run(int threads, int conns, bool exclusive)
{
    struct herd h = {.n = threads};
    struct epoll_event ev;
    unsigned long accepted = 0, empty = 0;
    long before, after;
    int port;

    if ((h.listener = net_listen("127.0.0.1", 0, 128)) < 0)
        net_die(-h.listener, "listen(127.0.0.1:0)");
    if (net_set_nonblocking(h.listener) < 0 || (h.stopfd = eventfd(0, EFD_CLOEXEC)) < 0)
        net_die(errno, "fcntl or eventfd");
    port = net_local_port(h.listener);
    for (int i = 0; i < threads; i++) {
        struct member *m = &h.m[i];
        *m = (struct member){.h = &h};
        if ((m->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
            net_die(errno, "epoll_create1");
        ev = (struct epoll_event){.events = EPOLLIN | (exclusive ? EPOLLEXCLUSIVE : 0),
                                  .data.fd = h.listener};
        if (epoll_ctl(m->epfd, EPOLL_CTL_ADD, h.listener, &ev) < 0)
            net_die(errno, "epoll_ctl(ADD, fd=%d%s)", h.listener,
                    exclusive ? ", EPOLLEXCLUSIVE" : "");
        ev = (struct epoll_event){.events = EPOLLIN, .data.fd = h.stopfd};
        if (epoll_ctl(m->epfd, EPOLL_CTL_ADD, h.stopfd, &ev) < 0)
            net_die(errno, "epoll_ctl(ADD, fd=%d)", h.stopfd);
        int err = pthread_create(&m->thread, NULL, member_main, m);
        if (err)
            net_die(err, "pthread_create");
    }
    for (int i = 0; i < threads; i++)
        while (atomic_load(&h.m[i].tid) == 0)
            sleep_ms(1);
    sleep_ms(100); /* let every thread reach epoll_wait() and sleep */

    before = herd_switches(&h);
    for (int i = 0; i < conns; i++) {
        int fd = net_connect("127.0.0.1", port);
        if (fd < 0)
            net_die(-fd, "connect(127.0.0.1:%d)", port);
        for (int ms = 0; atomic_load(&h.accepted) <= i && ms < 2000; ms++)
            sleep_ms(1);
        close(fd);
        sleep_ms(20); /* every woken thread is back asleep before the next one */
    }
    after = herd_switches(&h);
    /* end snippet */

    if (eventfd_write(h.stopfd, 1) < 0)
        net_die(errno, "eventfd_write(fd=%d)", h.stopfd);
    for (int i = 0; i < threads; i++) {
        pthread_join(h.m[i].thread, NULL);
        accepted += h.m[i].accepted;
        empty += h.m[i].empty;
        close(h.m[i].epfd);
    }
    printf("  %-24s %ld thread wake-ups (%.1f per connection), %lu accepted, "
           "%lu accept() calls found nothing\n",
           exclusive ? "with EPOLLEXCLUSIVE:" : "without EPOLLEXCLUSIVE:", after - before,
           (double)(after - before) / conns, accepted, empty);
    if (accepted != (unsigned long)conns) {
        fprintf(stderr, "epoll-herd: %lu of %d connections accepted\n", accepted, conns);
        exit(1);
    }
    close(h.stopfd);
    close(h.listener);
}

/* What the kernel refuses with EPOLLEXCLUSIVE (man 2 epoll_ctl). */
static void exclusive_rules(void)
{
    int ep = epoll_create1(EPOLL_CLOEXEC), efd = eventfd(0, EFD_CLOEXEC), r1, r2, e1, e2;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE | EPOLLONESHOT};

    if (ep < 0 || efd < 0)
        net_die(errno, "epoll_create1 or eventfd");
    r1 = epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev), e1 = errno;
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev) < 0)
        net_die(errno, "epoll_ctl(ADD, fd=%d, EPOLLEXCLUSIVE)", efd);
    ev.events = EPOLLIN;
    r2 = epoll_ctl(ep, EPOLL_CTL_MOD, efd, &ev), e2 = errno;
    printf("  EPOLLEXCLUSIVE with EPOLLONESHOT: %s; EPOLL_CTL_MOD of an exclusive entry: %s\n",
           r1 < 0 ? strerrorname_np(e1) : "accepted", r2 < 0 ? strerrorname_np(e2) : "accepted");
    close(efd);
    close(ep);
}

int main(int argc, char **argv)
{
    long threads = 4, conns = 20;
    int opt;

    while ((opt = getopt(argc, argv, "t:n:h")) != -1) {
        if (opt == 't' && net_parse_int(optarg, 2, MAX_THREADS, &threads) == 0)
            continue;
        if (opt == 'n' && net_parse_int(optarg, 1, 1000, &conns) == 0)
            continue;
        fprintf(opt == 'h' ? stdout : stderr,
                "usage: epoll-herd [-t THREADS] [-n CONNECTIONS]\n"
                "Counts the threads one new connection wakes, with and without "
                "EPOLLEXCLUSIVE.\n"
                "  -t THREADS      threads, each with its own epoll (2-%d, default 4)\n"
                "  -n CONNECTIONS  connections, one at a time (1-1000, default 20)\n",
                MAX_THREADS);
        return opt == 'h' ? 0 : 2;
    }
    if (optind < argc) {
        fprintf(stderr, "usage: epoll-herd [-t THREADS] [-n CONNECTIONS]\n");
        return 2;
    }
    printf("%ld threads, each with its own epoll instance watching one listening socket;\n"
           "%ld connections, one at a time:\n",
           threads, conns);
    run((int)threads, (int)conns, false);
    run((int)threads, (int)conns, true);
    exclusive_rules();
    return 0;
}
