/* kq_timer.c: EVFILT_TIMER on a timerfd per timer.
 *
 * BSD: data is the period, in milliseconds unless fflags says NOTE_SECONDS,
 * NOTE_USECONDS or NOTE_NSECONDS; the timer repeats unless EV_ONESHOT; each
 * event's data is the number of expirations since the last one. Adding a
 * timer that exists restarts it with the new period, throwing away the
 * expirations not yet reported.
 *
 * A timerfd does the same: it counts expirations, read() returns the count
 * and resets it, and timerfd_settime() restarts it and zeroes the count.
 * CLOCK_MONOTONIC, like BSD's timers: setting the wall clock moves nothing.
 */
#include "kq.h"

#include <errno.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define KQ_TIMER_UNITS (NOTE_SECONDS | NOTE_MSECONDS | NOTE_USECONDS | NOTE_NSECONDS)

/* snippet: timer-arm */
/* The period as a timespec, from data in the unit fflags names. */
static int kq_timer__period(const struct kevent *kev, struct timespec *ts)
{
    int64_t d = kev->data, per_sec;

    switch (kev->fflags & KQ_TIMER_UNITS) {
    case NOTE_SECONDS:
        per_sec = 1;
        break;
    case 0:
    case NOTE_MSECONDS:
        per_sec = 1000;
        break;
    case NOTE_USECONDS:
        per_sec = 1000000;
        break;
    case NOTE_NSECONDS:
        per_sec = 1000000000;
        break;
    default:
        return EINVAL; /* two units at once */
    }
    if (d < 0 || (kev->fflags & ~(unsigned int)KQ_TIMER_UNITS))
        return EINVAL; /* negative, or NOTE_ABSTIME and friends: not provided */
    ts->tv_sec = (time_t)(d / per_sec);
    ts->tv_nsec = (long)(d % per_sec * (1000000000 / per_sec));
    if (ts->tv_sec == 0 && ts->tv_nsec == 0)
        ts->tv_nsec = 1; /* 0 would disarm a timerfd; BSD fires at once */
    return 0;
}

static int kq_timer__arm(struct kq_knote *kn, const struct kevent *kev)
{
    struct itimerspec its = {0};
    int err = kq_timer__period(kev, &its.it_value);

    if (err)
        return err;
    if (!(kn->kev.flags & EV_ONESHOT))
        its.it_interval = its.it_value;
    return timerfd_settime(kn->fd, 0, &its, NULL) < 0 ? errno : 0;
}
/* end snippet */

static int kq_timer_attach(struct kq_knote *kn)
{
    struct timespec unused;
    int err = kq_timer__period(&kn->kev, &unused);

    if (err)
        return err;
    if ((kn->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)) < 0)
        return errno;
    if ((err = kq_timer__arm(kn, &kn->kev)) != 0)
        close(kn->fd);
    return err;
}

/* EV_ADD on an existing timer restarts it; other changes leave it running. */
static int kq_timer_touch(struct kq_knote *kn, const struct kevent *ch)
{
    int err;

    if (!(ch->flags & EV_ADD))
        return 0;
    if ((err = kq_timer__arm(kn, ch)) != 0)
        return err;
    kn->kev.fflags = ch->fflags;
    kn->kev.data = ch->data;
    return 0;
}

static void kq_timer_detach(struct kq_knote *kn)
{
    close(kn->fd);
}

static bool kq_timer_deliver(struct kq_knote *kn, struct kevent *out)
{
    uint64_t n;

    if (read(kn->fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
        return false; /* EAGAIN: restarted since epoll looked */
    *out = kn->kev;
    out->fflags = 0;
    out->data = (int64_t)n;
    return true;
}

const struct kq_filter kq_timer_filter = {
    .attach = kq_timer_attach,
    .touch = kq_timer_touch,
    .detach = kq_timer_detach,
    .deliver = kq_timer_deliver,
};
