/* SPDX-License-Identifier: MIT */
/* echo-epoll-oneshot.c: worker threads sharing one epoll, with EPOLLONESHOT.
 *
 * N threads (-w N) all sit in epoll_wait() on the same epoll instance, and
 * whichever wakes first serves what it got. Without care, two of them can
 * get events for the same connection at once (a level-triggered fd is
 * reported to every caller until it is read; an edge-triggered one again on
 * the next byte), and then both read the socket, both write the echo, and
 * one may free the connection while the other still uses it.
 *
 * EPOLLONESHOT closes that door: once an event for an fd is handed to one
 * thread, the kernel disables the fd in the interest list, and nothing more
 * is reported for it until that thread re-arms it with EPOLL_CTL_MOD. So:
 *   - only the thread that got the event touches the connection, with no
 *     lock, until it re-arms it;
 *   - the re-arm re-checks the socket: bytes left unread are reported again
 *     at once (to any thread), so one read per event is enough and a busy
 *     client goes to the back of the kernel's ready list: fairness for free,
 *     paid with one epoll_ctl() per event;
 *   - the thread that decides to close a connection simply does not re-arm
 *     it: no other thread can hold an event for it, so it may free it.
 * A per-connection owner word checks the first rule on every event (a
 * second owner aborts the server), and tells ThreadSanitizer about the
 * hand-off between threads, which happens inside the kernel where it cannot
 * see.
 *
 *     make -C chapters/05-epoll-edge
 *     build/chapters/05-epoll-edge/echo-epoll-oneshot -p 0 -w 4
 *     build/common/tools/echo-load -p PORT -c 100 -n 100   (from another terminal)
 *
 * On exit it prints the events each worker handled. Linux 2.6.28 or later.
 */
#include "conn.h"
#include "net.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_WORKERS     64
#define MAX_EVENTS      8    /* per call: a worker holding a big batch keeps it from idle ones */
#define ACCEPT_BATCH    64   /* accepts per listener event */
#define ACCEPT_RETRY_MS 1000 /* out of fds: try accept() again after this long anyway */
#define READS_PER_EVENT 1    /* the re-arm reports what is left: no need to drain */

/* snippet: shared-conn */
struct shared_conn {
    struct conn c;     /* first: data.ptr points to c.w */
    atomic_uint owner; /* OWNER_FREE, OWNER_REARMING, or 1 + the id of the worker serving it */
};

#define OWNER_FREE     0u       /* armed in epoll: the next event's worker takes it */
#define OWNER_REARMING UINT_MAX /* its worker is inside epoll_ctl(MOD), about to let go */
/* end snippet */

struct server {
    int epfd;
    struct watch sig;           /* level-triggered, never read: every worker sees it */
    struct watch listener;      /* EPOLLONESHOT, re-armed after each batch of accepts */
    pthread_mutex_t lock;       /* guards conns and accept_errno */
    struct list_node conns;     /* every open connection (conn.link), to close them on exit */
    int accept_errno;           /* last accept() error logged: a streak is logged once */
    atomic_bool accept_blocked; /* out of fds: the listener is left disarmed */
};

struct worker {
    struct server *s;
    unsigned id;
    pthread_t thread;
    unsigned long events;   /* connection events served */
    unsigned long waited;   /* of which found the previous owner still letting go */
    unsigned long accepted; /* connections accepted */
};

/* For the tests: ONESHOT_REARM_DELAY_US=N makes every re-arm take N more
 * microseconds before it returns. A connection with bytes left is reported
 * to another worker the moment it is re-armed, so that worker's event then
 * arrives, every time, while the re-arming worker has not let go yet: the
 * hand-off's race, forced instead of hoped for. 0 (unset) in normal use. */
static useconds_t rearm_delay_us;

/* (Re-)arm fd for one more event. MOD looks at the fd as it is now: what is
 * already ready is reported at once. Returns 0 or -errno. */
static int server__arm(struct server *s, int fd, void *ptr, uint32_t events)
{
    struct epoll_event ev = {.events = events | EPOLLONESHOT, .data.ptr = ptr};

    if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
        return -errno;
    if (rearm_delay_us > 0)
        usleep(rearm_delay_us);
    return 0;
}

static void server__arm_listener(struct server *s)
{
    int err = server__arm(s, s->listener.fd, &s->listener, EPOLLIN);

    if (err < 0)
        net_die(-err, "epoll_ctl(MOD, fd=%d)", s->listener.fd);
}

static void server__unlink(struct server *s, struct conn *c)
{
    pthread_mutex_lock(&s->lock);
    list_remove(&c->link);
    pthread_mutex_unlock(&s->lock);
}

/* snippet: drop */
/* Close and free a connection. Only the worker that got its last event may
 * call this, and only instead of re-arming it: since EPOLLONESHOT disabled
 * the fd when that event was handed out, no other worker holds an event
 * that points here. (Without ONESHOT, another worker could be about to read
 * sc from an event fetched a moment ago: a use after free.) */
static void server__drop(struct server *s, struct shared_conn *sc)
{
    server__unlink(s, &sc->c);
    conn_close(&sc->c); /* also leaves the interest list */
    free(sc);
    /* An fd is free again: if accepting stopped for lack of one, resume. */
    if (atomic_exchange(&s->accept_blocked, false))
        server__arm_listener(s);
}
/* end snippet */

static void server__add_conn(struct server *s, int fd)
{
    struct shared_conn *sc = malloc(sizeof(*sc));
    struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT};

    if (!sc) {
        fprintf(stderr, "accept(fd=%d): no memory for client fd=%d, closing it\n", s->listener.fd,
                fd);
        close(fd);
        return;
    }
    conn_init(&sc->c, fd);
    /* Publish the initialised connection to the worker that gets its first event. */
    atomic_store_explicit(&sc->owner, OWNER_FREE, memory_order_release);
    pthread_mutex_lock(&s->lock); /* on the list before any worker can see it, and drop it */
    list_insert(&s->conns, &sc->c.link);
    pthread_mutex_unlock(&s->lock);
    ev.data.ptr = &sc->c.w;
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        fprintf(stderr, "epoll_ctl(ADD, fd=%d): %s, closing it\n", fd, strerror(errno));
        server__unlink(s, &sc->c);
        conn_close(&sc->c);
        free(sc);
    }
}

static void worker__accept(struct worker *w)
{
    struct server *s = w->s;

    for (int k = 0; k < ACCEPT_BATCH; k++) {
        int fd = accept4(s->listener.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            net_set_nodelay(fd);
            server__add_conn(s, fd);
            w->accepted++;
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            break;
        /* EMFILE and the like: leave the listener disarmed (no busy loop),
         * and let the next connection to close re-arm it. */
        int err = errno;
        pthread_mutex_lock(&s->lock);
        if (err != s->accept_errno)
            fprintf(stderr, "accept(fd=%d): %s: retrying when a connection closes\n",
                    s->listener.fd, strerror(err));
        s->accept_errno = err;
        pthread_mutex_unlock(&s->lock);
        atomic_store(&s->accept_blocked, true);
        return;
    }
    pthread_mutex_lock(&s->lock);
    s->accept_errno = 0;
    pthread_mutex_unlock(&s->lock);
    server__arm_listener(s); /* a backlog left is reported at once */
}

/* A second worker got an event for a connection another one is serving:
 * EPOLLONESHOT was not honoured. Say so and stop before memory is corrupted. */
_Noreturn static void worker__two_owners(const struct worker *w, const struct shared_conn *sc,
                                         unsigned other)
{
    fprintf(stderr, "fd %d: worker %u got an event while worker %u still serves it\n", sc->c.w.fd,
            w->id, other - 1);
    abort();
}

/* snippet: take */
/* Become the connection's owner. acquire: see everything the previous owner
 * did before it let go. */
static void worker__take(struct worker *w, struct shared_conn *sc)
{
    unsigned seen = OWNER_FREE;

    while (!atomic_compare_exchange_weak_explicit(&sc->owner, &seen, w->id + 1,
                                                  memory_order_acquire, memory_order_relaxed)) {
        if (seen != OWNER_REARMING && seen != OWNER_FREE)
            worker__two_owners(w, sc, seen);
        /* The previous owner re-armed the fd and the kernel handed us the
         * next event before that worker could store OWNER_FREE: a moment. */
        if (seen == OWNER_REARMING) {
            w->waited++;
            sched_yield();
        }
        seen = OWNER_FREE;
    }
}
/* end snippet */

/* snippet: serve */
static void worker__serve(struct worker *w, struct shared_conn *sc, uint32_t events)
{
    struct server *s = w->s;
    int err;

    worker__take(w, sc);
    w->events++;
    conn_on_events(&sc->c, events);
    if (conn_run(&sc->c, READS_PER_EVENT) == CONN_CLOSE) {
        server__drop(s, sc); /* not re-armed: no one else can reach it */
        return;
    }
    /* EXERCISE BEGIN oneshot-handoff: re-arm the fd for what it wants, and let go of it */
    /* The hand-off to the next worker happens inside the kernel: the MOD
     * makes the fd reportable again, and another worker's epoll_wait() may
     * return it before this call has even returned. OWNER_REARMING tells
     * that worker to wait for the release below, so that it sees this
     * worker's last touches (the epoll_ctl() included) as done. */
    atomic_store_explicit(&sc->owner, OWNER_REARMING, memory_order_relaxed);
    if ((err = server__arm(s, sc->c.w.fd, &sc->c.w, conn_wanted_events(&sc->c))) < 0) {
        /* not re-armed: still disabled, so still ours alone; close it */
        fprintf(stderr, "epoll_ctl(MOD, fd=%d): %s, closing it\n", sc->c.w.fd, strerror(-err));
        server__drop(s, sc);
        return;
    }
    atomic_store_explicit(&sc->owner, OWNER_FREE, memory_order_release); /* sc is not ours now */
    /* EXERCISE END */
}
/* end snippet */

/* snippet: worker */
static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct server *s = w->s;
    struct epoll_event events[MAX_EVENTS];

    for (bool stop = false; !stop;) {
        int timeout = atomic_load(&s->accept_blocked) ? ACCEPT_RETRY_MS : -1;
        int n = epoll_wait(s->epfd, events, MAX_EVENTS, timeout);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            net_die(errno, "epoll_wait(epfd=%d, %d)", s->epfd, MAX_EVENTS);
        if (n == 0 && atomic_exchange(&s->accept_blocked, false))
            server__arm_listener(s); /* ENFILE and the like: time to try again */
        for (int i = 0; i < n; i++) {
            void *p = events[i].data.ptr; /* compared, not read: only an owner reads a conn */
            if (p == &s->sig)
                stop = true; /* finish this batch, then leave */
            else if (p == &s->listener)
                worker__accept(w);
            else
                worker__serve(w, p, events[i].events);
        }
    }
    return NULL;
}
/* end snippet */

static int server__on_opt(int opt, const char *arg, void *ctx)
{
    long v;

    if (opt != 'w' || net_parse_int(arg, 1, MAX_WORKERS, &v) < 0)
        return -1;
    *(int *)ctx = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nworkers = cpus < 1 ? 1 : cpus > MAX_WORKERS ? MAX_WORKERS : (int)cpus;
    struct net_cli_extra extra = {
        .optstring = "w:",
        .usage = "  -w N      worker threads sharing one epoll (1-64, default: one per CPU)\n",
        .on_opt = server__on_opt,
        .ctx = &nworkers,
    };
    struct server s = {.lock = PTHREAD_MUTEX_INITIALIZER};
    struct epoll_event ev = {.events = EPOLLIN};
    struct worker *workers;
    struct net_cli cli;
    struct list_node *n, *next;
    unsigned long total = 0, waited = 0;
    const char *delay;
    int err;

    net_cli_parse(&cli, argc, argv, "An echo server: worker threads on one epoll, EPOLLONESHOT.",
                  &extra);
    if ((delay = getenv("ONESHOT_REARM_DELAY_US")) != NULL) {
        long us;
        if (net_parse_int(delay, 0, 1000000, &us) < 0)
            net_die(EINVAL, "ONESHOT_REARM_DELAY_US=%s: expected microseconds, 0 to 1000000",
                    delay);
        rearm_delay_us = (useconds_t)us;
    }
    list_init(&s.conns);
    if (!(workers = calloc((size_t)nworkers, sizeof(*workers))))
        net_die(ENOMEM, "calloc(%d workers)", nworkers);
    s.sig = (struct watch){.kind = WATCH_SIGNAL, .fd = net_signalfd_or_die(SFD_NONBLOCK)};
    s.listener = (struct watch){.kind = WATCH_LISTENER, .fd = net_listen_or_die(&cli, SOMAXCONN)};
    if ((err = net_set_nonblocking(s.listener.fd)) < 0)
        net_die(-err, "fcntl(fd=%d, F_SETFL, O_NONBLOCK)", s.listener.fd);
    if ((s.epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
        net_die(errno, "epoll_create1");
    ev.data.ptr = &s.sig;
    if (epoll_ctl(s.epfd, EPOLL_CTL_ADD, s.sig.fd, &ev) < 0)
        net_die(errno, "epoll_ctl(ADD, fd=%d)", s.sig.fd);
    ev = (struct epoll_event){.events = EPOLLIN | EPOLLONESHOT, .data.ptr = &s.listener};
    if (epoll_ctl(s.epfd, EPOLL_CTL_ADD, s.listener.fd, &ev) < 0)
        net_die(errno, "epoll_ctl(ADD, fd=%d)", s.listener.fd);

    for (int i = 0; i < nworkers; i++) {
        workers[i] = (struct worker){.s = &s, .id = (unsigned)i};
        if ((err = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i])) != 0)
            net_die(err, "pthread_create(worker %d)", i);
    }
    for (int i = 0; i < nworkers; i++)
        pthread_join(workers[i].thread, NULL);

    for (int i = 0; i < nworkers; i++) {
        printf("worker %d: %lu events, accepted %lu connections\n", i, workers[i].events,
               workers[i].accepted);
        total += workers[i].events;
        waited += workers[i].waited;
    }
    printf("owner check: none of %lu events found its connection held by another worker"
           " (%lu waited for a re-arm to finish)\n",
           total, waited);
    list_for_each_safe(n, next, &s.conns) {
        struct shared_conn *sc = list_entry(n, struct shared_conn, c.link);
        conn_close(&sc->c);
        free(sc);
    }
    close(s.epfd);
    close(s.listener.fd);
    close(s.sig.fd);
    free(workers);
    return 0;
}
