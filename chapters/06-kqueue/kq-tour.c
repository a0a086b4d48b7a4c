/* SPDX-License-Identifier: MIT */
/* kq-tour.c: the kqueue flags echo-kqueue does not use, each checked.
 *
 *     make -C chapters/06-kqueue
 *     build/chapters/06-kqueue/kq-tour
 *
 * Written against <sys/event.h> only, like echo-kqueue: on FreeBSD and macOS
 * the system's kqueue, on Linux common/kqueue-linux. Chapter 05's et-tour
 * showed EPOLLONESHOT; here kqueue's two answers to the same need, and the
 * filter that is not about the kernel at all:
 *
 *   1. EV_ONESHOT: one event, then the knote is deleted. Another byte is not
 *      reported, and EV_DELETE finds nothing (ENOENT).
 *   2. EV_DISPATCH: one event, then the knote is disabled but kept, with its
 *      udata. EV_ENABLE re-arms it, and what came meanwhile is reported.
 *   3. EVFILT_USER: an event the program fires itself (NOTE_TRIGGER), the
 *      portable way for one thread to wake another asleep in kevent(); with
 *      EV_CLEAR one event per trigger, without it stays triggered.
 *   4. EVFILT_TIMER sets EV_CLEAR on its events itself: flags the program
 *      did not ask for come back.
 *   5. A change that fails comes back as an EV_ERROR entry only if the
 *      eventlist has room for it; with none, kevent() itself fails.
 *
 * If kqueue does something else than the text says, the program says so and
 * exits 1.
 */
#include "clock.h"
#include "net.h"

#include <sys/event.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int kq_open(void)
{
    int kq = kqueue();

    if (kq < 0)
        net_die(errno, "kqueue()");
    return kq;
}

/* One change; returns its errno (0: applied), from its EV_RECEIPT entry. */
static int change(int kq, uintptr_t ident, short filter, unsigned short flags, unsigned int fflags,
                  int64_t data, void *udata)
{
    struct kevent ch, res;

    EV_SET(&ch, ident, filter, flags | EV_RECEIPT, fflags, data, udata);
    if (kevent(kq, &ch, 1, &res, 1, NULL) != 1)
        net_die(errno, "kevent(kq=%d, ident=%lu, filter=%d)", kq, (unsigned long)ident, filter);
    return (int)res.data;
}

/* How many events one kevent() returns (0 or 1 here), waiting up to ms. */
static int events_in(int kq, struct kevent *ev, long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    int n;

    while ((n = kevent(kq, NULL, 0, ev, 1, &ts)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        net_die(errno, "kevent(kq=%d)", kq);
    return n;
}

static void pipe_or_die(int p[2])
{
    if (pipe(p) < 0)
        net_die(errno, "pipe");
}

static void send_byte(int fd)
{
    if (write(fd, "x", 1) != 1)
        net_die(errno, "write(fd=%d)", fd);
}

/* The name of the errors this program expects, as the man pages spell them. */
static const char *err_name(int err)
{
    return err == 0 ? "0" : err == ENOENT ? "ENOENT" : strerror(err);
}

static void step_oneshot(void)
{
    struct kevent ev;
    int kq = kq_open(), p[2], first, after, err;

    pipe_or_die(p);
    change(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD | EV_ONESHOT, 0, 0, NULL);
    send_byte(p[1]);
    first = events_in(kq, &ev, 1000);
    printf("  a byte in a pipe: %d event, flags %s EV_ONESHOT\n", first,
           first == 1 && (ev.flags & EV_ONESHOT) ? "with" : "without");
    send_byte(p[1]);
    after = events_in(kq, &ev, 200);
    err = change(kq, (uintptr_t)p[0], EVFILT_READ, EV_DELETE, 0, 0, NULL);
    printf("  another byte: %d events; EV_DELETE then: %s, the knote is gone\n", after,
           err_name(err));
    if (first != 1 || !(ev.flags & EV_ONESHOT) || after != 0 || err != ENOENT)
        net_unexpected("EV_ONESHOT: expected 1 event, then none and ENOENT");
    close(p[0]);
    close(p[1]);
    close(kq);
}

/* snippet: dispatch */
static void step_dispatch(void)
{
    struct kevent ev;
    static int conn; /* stands for the connection a server would hand back */
    int kq = kq_open(), p[2], first, after, rearmed, err;

    pipe_or_die(p);
    change(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD | EV_DISPATCH, 0, 0, &conn);
    send_byte(p[1]);
    first = events_in(kq, &ev, 1000);
    send_byte(p[1]); /* while the first is being handled */
    after = events_in(kq, &ev, 200);
    printf("  a byte: %d event; another byte: %d events (disabled by the first)\n", first, after);
    change(kq, (uintptr_t)p[0], EVFILT_READ, EV_ENABLE, 0, 0, &conn); /* handled: re-arm */
    rearmed = events_in(kq, &ev, 0);
    printf("  EV_ENABLE: %d event at once, data %lld (both bytes), udata kept: %s\n", rearmed,
           (long long)ev.data, ev.udata == &conn ? "yes" : "no");
    err = change(kq, (uintptr_t)p[0], EVFILT_READ, EV_DELETE, 0, 0, NULL);
    printf("  EV_DELETE: %s, the knote was still there\n", err_name(err));
    /* end snippet */
    if (first != 1 || after != 0 || rearmed != 1 || ev.data != 2 || ev.udata != &conn || err)
        net_unexpected("EV_DISPATCH: expected 1 event, none while disabled, 1 with data 2 after");
    close(p[0]);
    close(p[1]);
    close(kq);
}

struct sleeper {
    int kq;
    int events;       /* what its kevent() returned */
    unsigned int why; /* the fflags of its event */
    int64_t woke_at;  /* clock_now_ms() when it returned */
};

/* snippet: user-wake */
#define WAKE_IDENT 1
#define WAKE_NEWS  0x1 /* the 24 low bits of fflags are the program's own */
#define WAKE_STOP  0x4

/* Thread B: asleep in kevent() with no timeout, no fd to wake it. */
static void *sleeper_main(void *arg)
{
    struct sleeper *b = arg;
    struct kevent ev;

    b->events = kevent(b->kq, NULL, 0, &ev, 1, NULL);
    b->why = b->events == 1 ? ev.fflags : 0;
    b->woke_at = clock_now_ms();
    return NULL;
}

static void step_user_wake(void)
{
    struct sleeper b = {.kq = kq_open()};
    pthread_t t;
    int64_t woken_at;
    int err;

    change(b.kq, WAKE_IDENT, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, NULL);
    if ((err = pthread_create(&t, NULL, sleeper_main, &b)) != 0)
        net_die(err, "pthread_create");
    usleep(100 * 1000); /* B is asleep by now */
    woken_at = clock_now_ms();
    change(b.kq, WAKE_IDENT, EVFILT_USER, 0, NOTE_TRIGGER | NOTE_FFOR | WAKE_NEWS | WAKE_STOP, 0,
           NULL);
    pthread_join(t, NULL);
    printf("  thread B asleep in kevent(); thread A triggers it: B returns %d event,"
           " fflags 0x%x (A's reasons)\n",
           b.events, b.why);
    /* end snippet */
    if (b.events != 1 || b.why != (WAKE_NEWS | WAKE_STOP) || b.woke_at - woken_at > 1000)
        net_unexpected(
            "EVFILT_USER: thread B was not woken by the trigger (%d events, fflags 0x%x)", b.events,
            b.why);
    close(b.kq);
}

/* How many of `calls` kevent() calls report the user event, each waiting
 * up to 50 ms (a trigger is there before the first call, or not at all). */
static int reported_by(int kq, int calls)
{
    struct kevent ev;
    int n = 0;

    for (int i = 0; i < calls; i++)
        n += events_in(kq, &ev, 50);
    return n;
}

static void step_user_clear(void)
{
    int kq = kq_open(), cleared, level, after;

    change(kq, 2, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, NULL);
    change(kq, 2, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
    change(kq, 2, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
    cleared = reported_by(kq, 3);
    change(kq, 3, EVFILT_USER, EV_ADD, 0, 0, NULL);
    change(kq, 3, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
    level = reported_by(kq, 3);
    change(kq, 3, EVFILT_USER, EV_CLEAR, 0, 0, NULL); /* a change with EV_CLEAR untriggers it */
    after = reported_by(kq, 1);
    printf("  with EV_CLEAR, two triggers: reported by %d of 3 calls\n", cleared);
    printf("  without EV_CLEAR, one trigger: reported by %d of 3 calls;"
           " a change with EV_CLEAR: %d of 1\n",
           level, after);
    if (cleared != 1 || level != 3 || after != 0)
        net_unexpected("EVFILT_USER: expected 1 of 3, 3 of 3 and 0 of 1");
    close(kq);
}

static void step_timer_clear(void)
{
    struct kevent ch, ev;
    int kq = kq_open(), n;

    EV_SET(&ch, 1, EVFILT_TIMER, EV_ADD, 0, 10, NULL); /* no EV_CLEAR asked for */
    if (kevent(kq, &ch, 1, NULL, 0, NULL) < 0)
        net_die(errno, "kevent(kq=%d, EV_ADD timer)", kq);
    n = events_in(kq, &ev, 2000);
    printf("  EV_ADD of a 10 ms timer, flags EV_ADD only: its event's flags %s EV_CLEAR\n",
           n == 1 && (ev.flags & EV_CLEAR) ? "have" : "lack");
    if (n != 1 || !(ev.flags & EV_CLEAR))
        net_unexpected("EVFILT_TIMER: the event does not carry EV_CLEAR");
    close(kq);
}

static void step_error_room(void)
{
    struct kevent ch, out;
    int kq = kq_open(), with_room, without_room, err;

    EV_SET(&ch, 42, EVFILT_TIMER, EV_DELETE, 0, 0, NULL); /* never added */
    with_room = kevent(kq, &ch, 1, &out, 1, NULL);
    printf("  EV_DELETE of a timer never added, room for 1 event: kevent() = %d,"
           " flags %s, data %s\n",
           with_room, out.flags == EV_ERROR ? "EV_ERROR" : "?", err_name((int)out.data));
    without_room = kevent(kq, &ch, 1, NULL, 0, NULL);
    err = errno;
    printf("  the same with nevents 0: kevent() = %d, errno %s\n", without_room, err_name(err));
    if (with_room != 1 || out.flags != EV_ERROR || out.data != ENOENT || without_room != -1 ||
        err != ENOENT)
        net_unexpected("a failed change: expected an EV_ERROR entry, then -1 with ENOENT");
    close(kq);
}

int main(int argc, char **argv)
{
    net_cli_none(argc, argv,
                 "Shows EV_ONESHOT, EV_DISPATCH, EVFILT_USER, a timer's EV_CLEAR and EV_ERROR, "
                 "one step at a time, each checked.");
    printf("step 1: EV_ONESHOT: one event, then the knote is deleted\n");
    step_oneshot();
    printf("step 2: EV_DISPATCH: one event, then the knote is disabled, not deleted\n");
    step_dispatch();
    printf("step 3: EVFILT_USER: an event the program fires itself\n");
    step_user_wake();
    step_user_clear();
    printf("step 4: EVFILT_TIMER sets EV_CLEAR itself\n");
    step_timer_clear();
    printf("step 5: a change that fails, with and without room for its EV_ERROR entry\n");
    step_error_room();
    printf("every step behaved as described\n");
    return 0;
}
