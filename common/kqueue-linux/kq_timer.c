/* SPDX-License-Identifier: MIT */
/* kq_timer.c: EVFILT_TIMER, every timer of a kqueue on one timerfd.
 *
 * BSD: data is the period, in milliseconds unless fflags says NOTE_SECONDS,
 * NOTE_USECONDS or NOTE_NSECONDS; the timer repeats unless EV_ONESHOT; each
 * event's data is the number of expirations since the last one, and its
 * flags carry EV_CLEAR, which the filter sets itself. Adding a timer that
 * exists restarts it with the new period, throwing away the expirations not
 * yet reported. A disabled timer keeps counting. With NOTE_ABSTIME, data is
 * a time since the Epoch instead, and the timer fires once (FreeBSD's
 * filt_timerattach() then leaves EV_CLEAR out; see kq_timer__deliver()).
 *
 * A timerfd per timer would do all of that by itself, but it is an fd per
 * timer: a server with an idle timeout per connection would need two fds per
 * connection, where BSD needs one (its timers are kernel callouts). So each
 * kqueue keeps its enabled timers in a binary min-heap ordered by deadline,
 * with ONE timerfd armed for the deadline at the top, as redis's ae.c or
 * libuv keep their timers. A timer's deadline is an absolute CLOCK_MONOTONIC
 * time in nanoseconds, like BSD's callouts: setting the wall clock moves
 * nothing. Each knote remembers its index in the heap, so deleting or
 * disabling a timer from the middle costs O(log n), not a search.
 *
 * When the timerfd fires, every timer whose deadline has passed is reported
 * (as many as fit in the event list; the others stay at the top, due, and the
 * timerfd is armed for a time already past, so the next kevent() reports them
 * at once). data = 1 + (now - deadline) / period for a periodic timer, which
 * is then moved on by that many periods; an EV_ONESHOT timer is deleted. A
 * disabled timer leaves the heap but keeps its deadline: enabled again, the
 * expirations it missed are counted the same way.
 *
 * System calls: a change costs one timerfd_settime() when it moves the
 * earliest deadline (restarting the only timer does), none otherwise.
 */
#include "kq.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define KQ_TIMER_UNITS  (NOTE_SECONDS | NOTE_MSECONDS | NOTE_USECONDS | NOTE_NSECONDS)
#define KQ_TIMER_MAX_NS (INT64_MAX / 4) /* about 73 years: deadlines cannot overflow */
#define KQ_TIMER_NEVER  INT64_MAX       /* the deadline of a timer that is done */

static int64_t kq_timer__clock(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t kq_timer__now(void)
{
    return kq_timer__clock(CLOCK_MONOTONIC);
}

/* Check a timer's fflags and data; *unit_ns: what one unit of data is. */
static int kq_timer__check(const struct kevent *kev, int64_t *unit_ns)
{
    switch (kev->fflags & KQ_TIMER_UNITS) {
    case NOTE_SECONDS:
        *unit_ns = 1000000000;
        break;
    case 0:
    case NOTE_MSECONDS:
        *unit_ns = 1000000;
        break;
    case NOTE_USECONDS:
        *unit_ns = 1000;
        break;
    case NOTE_NSECONDS:
        *unit_ns = 1;
        break;
    default:
        return EINVAL; /* two units at once */
    }
    if (kev->data < 0 || (kev->fflags & ~(unsigned int)(KQ_TIMER_UNITS | NOTE_ABSTIME)))
        return EINVAL; /* negative, or a flag FreeBSD's timers do not have */
    return 0;
}

/* The period of a checked timer in nanoseconds; 0 for NOTE_ABSTIME. A
 * periodic timer of 0 repeats every 1 unit, as FreeBSD's filt_timervalidate()
 * makes it; a one-shot timer of 0 fires at once (1 ns). */
static int64_t kq_timer__period(const struct kevent *kev)
{
    int64_t unit_ns, ns, d = kev->data;

    if ((kev->fflags & NOTE_ABSTIME) || kq_timer__check(kev, &unit_ns) != 0)
        return 0;
    if (d == 0 && !(kev->flags & EV_ONESHOT))
        d = 1;
    ns = d > KQ_TIMER_MAX_NS / unit_ns ? KQ_TIMER_MAX_NS : d * unit_ns;
    return ns > 0 ? ns : 1;
}

/* The first deadline of a checked timer set at `now`. An absolute time is
 * turned into a CLOCK_MONOTONIC deadline here, once, as FreeBSD's
 * filt_timervalidate() subtracts the boot time and macOS's converts to
 * mach time: setting the clock afterwards moves neither. A time already
 * past fires at once. */
static int64_t kq_timer__deadline(const struct kevent *kev, int64_t now)
{
    int64_t unit_ns, left;

    if (!(kev->fflags & NOTE_ABSTIME))
        return now + kq_timer__period(kev);
    kq_timer__check(kev, &unit_ns);
    if (kev->data > INT64_MAX / unit_ns)
        left = KQ_TIMER_MAX_NS;
    else
        left = kev->data * unit_ns - kq_timer__clock(CLOCK_REALTIME);
    left = left < 0 ? 0 : left > KQ_TIMER_MAX_NS ? KQ_TIMER_MAX_NS : left;
    return now + left;
}

/* The heap: kq->timers[0] has the earliest deadline, and every timer's
 * deadline is no earlier than its parent's, (i - 1) / 2. */
static void kq_timer__place(struct kq *kq, uint32_t i, struct kq_knote *kn)
{
    kq->timers[i] = kn;
    kn->heap_index = i;
}

static void kq_timer__sift_up(struct kq *kq, uint32_t i)
{
    struct kq_knote *kn = kq->timers[i];

    while (i > 0 && kq->timers[(i - 1) / 2]->deadline > kn->deadline) {
        kq_timer__place(kq, i, kq->timers[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    kq_timer__place(kq, i, kn);
}

static void kq_timer__sift_down(struct kq *kq, uint32_t i)
{
    struct kq_knote *kn = kq->timers[i];

    for (;;) {
        uint32_t child = 2 * i + 1;
        if (child >= kq->ntimers)
            break;
        if (child + 1 < kq->ntimers &&
            kq->timers[child + 1]->deadline < kq->timers[child]->deadline)
            child++;
        if (kq->timers[child]->deadline >= kn->deadline)
            break;
        kq_timer__place(kq, i, kq->timers[child]);
        i = child;
    }
    kq_timer__place(kq, i, kn);
}

static int kq_timer__push(struct kq *kq, struct kq_knote *kn)
{
    if (kq->ntimers == kq->timers_cap) {
        uint32_t cap = kq->timers_cap ? kq->timers_cap * 2 : 16;
        struct kq_knote **t = realloc(kq->timers, cap * sizeof(*t));
        if (!t)
            return ENOMEM;
        kq->timers = t;
        kq->timers_cap = cap;
    }
    kq_timer__place(kq, kq->ntimers++, kn);
    kq_timer__sift_up(kq, kn->heap_index);
    return 0;
}

/* Take kn out of the heap: the last timer fills its place, then moves up or
 * down to where its deadline belongs. */
static void kq_timer__remove(struct kq *kq, struct kq_knote *kn)
{
    uint32_t i = kn->heap_index;
    struct kq_knote *last = kq->timers[--kq->ntimers];

    kn->heap_index = KQ_NOT_QUEUED;
    if (last == kn)
        return;
    kq_timer__place(kq, i, last);
    kq_timer__sift_up(kq, i);
    kq_timer__sift_down(kq, last->heap_index);
}

/* snippet: timer-arm */
/* Arm the one timerfd for the earliest deadline, if it is not already: the
 * only timerfd_settime() of the layer. An absolute time already past fires
 * at once. A timer due but left unreported keeps the timerfd readable. */
static int kq_timer__rearm(struct kq *kq)
{
    int64_t want = kq->ntimers ? kq->timers[0]->deadline : 0; /* 0 disarms */
    struct itimerspec its = {
        .it_value = {.tv_sec = (time_t)(want / 1000000000), .tv_nsec = (long)(want % 1000000000)},
    };

    if (want == kq->timer_armed)
        return 0;
    if (timerfd_settime(kq->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
        return errno;
    kq->timer_armed = want;
    return 0;
}
/* end snippet */

/* After kn's deadline or enabled state changed: put it where it belongs in
 * the heap, or out of it (disabled, or never to fire again). The caller
 * re-arms the timerfd, once. */
static int kq_timer__requeue(struct kq *kq, struct kq_knote *kn)
{
    bool queued = kn->enabled && kn->deadline != KQ_TIMER_NEVER;

    if (queued && kn->heap_index == KQ_NOT_QUEUED)
        return kq_timer__push(kq, kn);
    if (!queued && kn->heap_index != KQ_NOT_QUEUED) {
        kq_timer__remove(kq, kn);
    } else if (queued) {
        kq_timer__sift_up(kq, kn->heap_index);
        kq_timer__sift_down(kq, kn->heap_index);
    }
    return 0;
}

static void kq_timer__drop(struct kq *kq, struct kq_knote *kn)
{
    if (kn->heap_index != KQ_NOT_QUEUED)
        kq_timer__remove(kq, kn);
    kq_table_remove(kq, kn);
    free(kn);
}

/* The kqueue's timerfd, created with its first timer and kept until the
 * kqueue is freed. Its slot says so, and its one epoll registration, like a
 * helper fd's, is level-triggered: readable until read. */
static int kq_timer__open(struct kq *kq)
{
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC), err;
    struct kq_slot *s;
    bool stale;

    if (fd < 0)
        return errno;
    if (!(s = kq_slot_get(kq, fd, true))) {
        close(fd);
        return ENOMEM;
    }
    if (s->read || s->write) /* the kernel reused the number: that fd was closed */
        kq_fd_purge(kq, fd);
    s->timers = true;
    s->events = 0;
    if ((err = kq_slot_sync(kq, fd, false, &stale)) != 0) {
        s->timers = false;
        close(fd);
        return err;
    }
    kq->timer_fd = fd;
    kq->timer_armed = 0;
    return 0;
}

static int kq_timer__add(struct kq *kq, const struct kevent *ch)
{
    struct kq_knote *kn;
    int64_t unit_ns;
    int err;

    if ((err = kq_timer__check(ch, &unit_ns)) != 0)
        return err;
    if (kq->timer_fd < 0 && (err = kq_timer__open(kq)) != 0)
        return err;
    if (!(kn = calloc(1, sizeof(*kn))))
        return ENOMEM;
    kn->kev = *ch;
    kn->kev.flags &= KQ_KEPT_FLAGS;
    if (!(ch->fflags & NOTE_ABSTIME))
        kn->kev.flags |= EV_CLEAR; /* BSD sets it: data counts since the last event */
    kn->enabled = !(ch->flags & EV_DISABLE);
    kn->heap_index = KQ_NOT_QUEUED;
    kn->deadline = kq_timer__deadline(ch, kq_timer__now());
    if ((err = kq_table_insert(kq, kn)) != 0) {
        free(kn);
        return err;
    }
    if ((err = kq_timer__requeue(kq, kn)) != 0 || (err = kq_timer__rearm(kq)) != 0)
        kq_timer__drop(kq, kn);
    return err;
}

/* A change for a timer, in BSD's order: find it, add it, delete it, or
 * update it (udata; EV_ADD restarts it with the new period), then enable or
 * disable it. Returns 0 or an errno. */
int kq_timer_change(struct kq *kq, const struct kevent *ch)
{
    struct kq_knote *kn = kq_table_find(kq, EVFILT_TIMER, ch->ident);
    int64_t unit_ns;
    int err;

    if (!kn)
        return (ch->flags & EV_ADD) ? kq_timer__add(kq, ch) : ENOENT;
    if (ch->flags & EV_DELETE) {
        kq_timer__drop(kq, kn);
        return kq_timer__rearm(kq);
    }
    kn->kev.udata = ch->udata;
    if (ch->flags & EV_ADD) {
        if ((err = kq_timer__check(ch, &unit_ns)) != 0)
            return err;
        kn->kev.fflags = ch->fflags;
        kn->kev.data = ch->data;
        kn->deadline = kq_timer__deadline(ch, kq_timer__now()); /* unreported expirations: gone */
    }
    if (ch->flags & EV_ENABLE)
        kn->enabled = true;
    else if (ch->flags & EV_DISABLE)
        kn->enabled = false;
    if ((err = kq_timer__requeue(kq, kn)) != 0)
        return err;
    return kq_timer__rearm(kq);
}

/* Report the timer at the top of the heap, due at `now`, into *out.
 *
 * An absolute timer does not repeat, and FreeBSD leaves EV_CLEAR out of it:
 * once its time has passed it stays expired, reported (data 1) by every
 * kevent() call until it is deleted. Its deadline moves to just after now,
 * which takes it out of this call's reports and makes it due for the next
 * call's. With EV_CLEAR (the program's own) it is reported once, then never
 * again; with EV_ONESHOT, deleted. */
static void kq_timer__deliver(struct kq *kq, struct kq_knote *kn, int64_t now, struct kevent *out)
{
    int64_t period = kq_timer__period(&kn->kev), n = 1; /* checked when it was set */

    *out = kn->kev;
    out->fflags = 0;
    if (kn->kev.flags & EV_ONESHOT) {
        out->data = 1;
        kq_timer__drop(kq, kn);
        return;
    }
    if (period == 0) {
        kn->deadline = (kn->kev.flags & EV_CLEAR) ? KQ_TIMER_NEVER : now + 1;
    } else {
        n += (now - kn->deadline) / period;
        kn->deadline += n * period; /* the next expiration, after now */
    }
    out->data = n;
    if (kn->kev.flags & EV_DISPATCH)
        kn->enabled = false;
    kq_timer__requeue(kq, kn); /* moving or leaving the heap: cannot fail */
}

/* snippet: timer-report */
/* The timerfd was reported readable: every due timer, earliest first, as many
 * as fit in `room`. Returns the kevents written. */
int kq_timer_report(struct kq *kq, struct kevent *out, int room)
{
    int64_t now;
    uint64_t fired;
    int got = 0;

    if (room == 0)
        return 0; /* still readable: reported again by the next epoll_wait() */
    if (read(kq->timer_fd, &fired, sizeof(fired)) == (ssize_t)sizeof(fired))
        kq->timer_armed = 0; /* it expired, so it is disarmed (no interval) */
    now = kq_timer__now();
    while (got < room && kq->ntimers > 0 && kq->timers[0]->deadline <= now)
        kq_timer__deliver(kq, kq->timers[0], now, &out[got++]);
    kq_timer__rearm(kq); /* for the earliest left: at once if it is due already */
    return got;
}
/* end snippet */

/* Free every timer of kq (those disabled are only in the table) and close
 * the timerfd. */
void kq_timer_free(struct kq *kq)
{
    for (size_t i = 0; i < kq->nbuckets; i++) {
        struct kq_knote **p = &kq->buckets[i];
        while (*p) {
            struct kq_knote *kn = *p;
            if (kn->kev.filter != EVFILT_TIMER) {
                p = &kn->next;
                continue;
            }
            *p = kn->next;
            kq->nknotes--;
            free(kn);
        }
    }
    if (kq->timer_fd >= 0)
        close(kq->timer_fd);
    kq->timer_fd = -1;
    free(kq->timers);
    kq->timers = NULL;
    kq->ntimers = kq->timers_cap = 0;
}
