/* SPDX-License-Identifier: MIT */
/* test-kq-reuse.c: a new fd that gets the number of an old one reports its
 * own data.
 *
 *   make -C common/kqueue-linux && build/common/kqueue-linux/tests/test-kq-reuse
 *
 * kqueue(2): "A kevent is identified by the (ident, filter) pair", and for
 * EVFILT_READ and EVFILT_WRITE the ident is a number the kernel hands out
 * again as soon as it is free. What the knote reports in data depends on
 * what the fd is: the connections waiting on a listener, the bytes in a
 * socket or a pipe, the room to write. So once a knote is gone (deleted,
 * fired with EV_ONESHOT, or dropped by close()), a new knote on the same
 * number must look at the new file, whatever the old one was. The layer
 * finds out what an fd is once per epoll registration (kq_fd.c), and for
 * each kind below, the old fd is the kind whose answer would be wrong here:
 *
 *   a listener (2 connections waiting)         after a pipe
 *   a connected socket (1,000 bytes to read)   after a listener
 *   a connected socket, writable               after a pipe's write end, an eventfd
 *   a pipe (22 bytes to read)                  after a listener
 *   a pipe at EOF (0 bytes, EV_EOF)            after a listener
 *   a pipe's write end (room: the pipe)        after a socket
 *   an eventfd (counter 5; Linux, FreeBSD 13)  after a listener
 *
 * each time the old knote went away in each of the three ways. The new fd
 * takes the old number with dup2(), so the number is the same every time.
 */
#include "kq_check.h"

#include <signal.h>
#include <stdbool.h>

#if defined(__linux__) || (defined(__FreeBSD__) && __FreeBSD__ >= 13)
#include <sys/eventfd.h>
#define KQ_HAVE_EVENTFD 1
#endif

/* An fd of some kind, ready, with what keeps it so (peers, the other end). */
struct opened {
    int fd;
    int keep[3];
    int nkeep;
};

struct kind {
    const char *name;
    const char *data; /* what its data is, in words */
    short filter;
    void (*open)(struct opened *o);
    int64_t (*want)(const struct opened *o); /* its data; -1: any above 0 */
    bool eof;                                /* EV_EOF expected */
};

static void listener_open(struct opened *o)
{
    int port;

    o->fd = tcp_listener(&port);
    o->keep[0] = tcp_connect(port);
    o->keep[1] = tcp_connect(port);
    o->nkeep = 2;
}

static int64_t two(const struct opened *o)
{
    (void)o;
    return 2; /* FreeBSD's filt_solisten: data = the accept queue's length */
}

static void socket_read_open(struct opened *o)
{
    char buf[1000] = {0};

    tcp_pair(&o->fd, &o->keep[0]);
    o->nkeep = 1;
    if (write(o->keep[0], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
        die("write(socket)");
}

static int64_t thousand(const struct opened *o)
{
    (void)o;
    return 1000;
}

static void socket_write_open(struct opened *o)
{
    tcp_pair(&o->fd, &o->keep[0]);
    o->nkeep = 1;
}

/* The layer: SO_SNDBUF less the bytes queued (none). BSD: the room, above 0. */
static int64_t socket_room(const struct opened *o)
{
    int size = 0;
    socklen_t len = sizeof(size);

    if (!KQ_LAYER)
        return -1;
    if (getsockopt(o->fd, SOL_SOCKET, SO_SNDBUF, &size, &len) < 0)
        die("getsockopt(SO_SNDBUF)");
    return size;
}

static void pipe_read_open(struct opened *o)
{
    int p[2];

    if (pipe(p) < 0)
        die("pipe");
    if (write(p[1], "twenty-two bytes here.", 22) != 22)
        die("write(pipe)");
    o->fd = p[0];
    o->keep[0] = p[1];
    o->nkeep = 1;
}

static int64_t twenty_two(const struct opened *o)
{
    (void)o;
    return 22;
}

static void pipe_eof_open(struct opened *o)
{
    int p[2];

    if (pipe(p) < 0)
        die("pipe");
    close(p[1]); /* the last writer is gone */
    o->fd = p[0];
    o->nkeep = 0;
}

static int64_t zero(const struct opened *o)
{
    (void)o;
    return 0;
}

static void pipe_write_open(struct opened *o)
{
    int p[2];

    if (pipe(p) < 0)
        die("pipe");
    o->fd = p[1];
    o->keep[0] = p[0];
    o->nkeep = 1;
}

/* The layer: the pipe's size (F_GETPIPE_SZ), all of it free. BSD: above 0. */
static int64_t pipe_room(const struct opened *o)
{
#ifdef F_GETPIPE_SZ
    int size = fcntl(o->fd, F_GETPIPE_SZ);

    if (size < 0)
        die("fcntl(F_GETPIPE_SZ)");
    return KQ_LAYER ? size : -1;
#else
    (void)o;
    return -1;
#endif
}

#ifdef KQ_HAVE_EVENTFD
static void eventfd_open(struct opened *o)
{
    uint64_t five = 5;

    if ((o->fd = eventfd(0, 0)) < 0)
        die("eventfd");
    if (write(o->fd, &five, sizeof(five)) != (ssize_t)sizeof(five))
        die("write(eventfd)");
    o->nkeep = 0;
}

/* FreeBSD: the counter (filt_eventfdread() in sys/kern/sys_eventfd.c). The
 * layer cannot see it without reading it, and FIONREAD refuses an eventfd:
 * 0 (a documented difference). */
static int64_t eventfd_count(const struct opened *o)
{
    (void)o;
    return KQ_LAYER ? 0 : 5;
}
#endif

/* name, what its data is, filter, open, want, EOF */
static const struct kind listener = {
    "a listener", "the 2 connections waiting", EVFILT_READ, listener_open, two, false,
};
static const struct kind socket_read = {
    "a connected socket", "the 1000 bytes to read", EVFILT_READ, socket_read_open, thousand, false,
};
static const struct kind socket_write = {
    "a connected socket", "its room to write", EVFILT_WRITE, socket_write_open, socket_room, false,
};
static const struct kind pipe_read = {
    "a pipe", "the 22 bytes to read", EVFILT_READ, pipe_read_open, twenty_two, false,
};
static const struct kind pipe_eof = {
    "a pipe at EOF", "0, with EV_EOF", EVFILT_READ, pipe_eof_open, zero, true,
};
static const struct kind pipe_write = {
    "a pipe's write end", "its room to write", EVFILT_WRITE, pipe_write_open, pipe_room, false,
};
#ifdef KQ_HAVE_EVENTFD
static const struct kind an_eventfd = {
    "an eventfd", "0 here (FreeBSD: its counter, 5)", EVFILT_READ, eventfd_open, eventfd_count,
    false,
};
#endif

static void close_opened(struct opened *o)
{
    close(o->fd);
    for (int i = 0; i < o->nkeep; i++)
        close(o->keep[i]);
}

enum gone { DELETED, ONESHOT_FIRED, CLOSED };
static const char *const gone_name[] = {"deleted", "one-shot-fired", "closed"};

/* The old fd gets a knote and one event (so its kind is known), the knote
 * goes away as `how` says, and the new fd takes the old number. */
static void reuse(const struct kind *now, const struct kind *before, enum gone how)
{
    struct opened old, new;
    struct kevent ev;
    unsigned short oneshot = how == ONESHOT_FIRED ? EV_ONESHOT : 0;
    int kq = kq_new(), number;
    int64_t want;

    before->open(&old);
    number = old.fd;
    if (!CHECK_ERR(0, change(kq, number, before->filter, EV_ADD | oneshot, 0, 0, NULL)) ||
        !CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000)))
        goto out_old;
    if (how == DELETED)
        CHECK_ERR(0, change(kq, number, before->filter, EV_DELETE, 0, 0, NULL));
    now->open(&new); /* while the old number is taken: none of its fds gets it */
    close_opened(&old);
    if (dup2(new.fd, number) < 0)
        die("dup2");
    close(new.fd);
    new.fd = number;
    want = now->want(&new);
    CHECK_ERR(0, change(kq, number, now->filter, EV_ADD, 0, 0, NULL));
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000))) {
        CHECK_EQ(now->filter, ev.filter);
        if (want >= 0 && !CHECK_EQ(want, ev.data))
            fprintf(stderr, "  %s on the number of %s %s: data %lld, expected %lld\n", now->name,
                    before->name, gone_name[how], (long long)ev.data, (long long)want);
        if (want < 0)
            CHECK(ev.data > 0);
        CHECK_EQ(now->eof ? EV_EOF : 0, ev.flags & EV_EOF);
    }
    close(kq);
    close_opened(&new);
    return;

out_old:
    close(kq);
    close_opened(&old);
}

static void run(const struct kind *now, const struct kind *before)
{
    char name[200];
    int before_failures = check_failures;

    for (int how = DELETED; how <= CLOSED; how++)
        reuse(now, before, (enum gone)how);
    snprintf(name, sizeof(name),
             "%s %s on the number of %s (deleted, one-shot-fired, closed): data is %s",
             now->filter == EVFILT_READ ? "EVFILT_READ" : "EVFILT_WRITE", now->name, before->name,
             now->data);
    check_report(name, before_failures);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    run(&listener, &pipe_read);
    run(&socket_read, &listener);
    run(&socket_write, &pipe_write);
    run(&pipe_read, &listener);
    run(&pipe_eof, &listener);
    run(&pipe_write, &socket_write);
#ifdef KQ_HAVE_EVENTFD
    run(&an_eventfd, &listener);
    run(&socket_write, &an_eventfd);
#endif
    return check_exit();
}
