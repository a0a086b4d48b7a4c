/* SPDX-License-Identifier: MIT */
/* kq_wait.c: the waiting half of kevent(): epoll_wait(), then each report
 * turned back into kevents under the kqueue's mutex.
 */
#include "kq.h"

#include <errno.h>
#include <limits.h>
#include <sys/epoll.h>
#include <time.h>

/* epoll_wait() reports per call; more than this many events are simply left
 * for the next kevent() call. */
#define KQ_WAIT_BATCH 256

static int64_t kq_wait__now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* epoll_wait() counts in milliseconds: round up, so a short timeout never
 * becomes a busy poll, and cap (BSD caps at 24 hours, epoll at INT_MAX ms). */
static int kq_wait__ms(int64_t ns)
{
    int64_t ms = ns / 1000000 + (ns % 1000000 != 0);

    return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* The kevents of one epoll report, or 0 if it no longer means anything: the
 * knote was deleted or disabled since, or the fd reregistered (generation).
 * With no room left, an edge-triggered fd is re-armed to be reported again. */
static int kq_wait__report(struct kq *kq, const struct epoll_event *e, struct kevent *out, int room)
{
    int fd = (int)(uint32_t)e->data.u64;
    struct kq_slot *s = kq_slot_get(kq, fd, false);
    struct kq_knote *kn;
    bool stale;

    if (!s || s->gen != (uint32_t)(e->data.u64 >> 32))
        return 0;
    if (s->timers)
        return kq_timer_report(kq, out, room);
    if (!s->helper)
        return kq_fd_report(kq, fd, e->events, out, room);
    kn = s->helper;
    if (!kn->enabled || room == 0)
        return 0; /* a helper fd is level-triggered: it is reported again */
    if (!(kn->kev.filter == EVFILT_SIGNAL ? kq_signal_filter.deliver(kn, out)
                                          : kq_user_filter.deliver(kn, out)))
        return 0;
    if (kn->kev.flags & EV_ONESHOT) {
        kq_helper_drop(kq, kn);
    } else if (kn->kev.flags & EV_DISPATCH) {
        kn->enabled = false;
        kq_slot_sync(kq, fd, false, &stale);
    }
    return 1;
}

/* snippet: wait */
int kq_wait(struct kq *kq, struct kevent *eventlist, int nevents, const struct timespec *timeout)
{
    struct epoll_event evs[KQ_WAIT_BATCH];
    int64_t left = timeout ? (int64_t)timeout->tv_sec * 1000000000 + timeout->tv_nsec : -1;
    int64_t deadline = left > 0 ? kq_wait__now_ns() + left : 0;
    int max = nevents < KQ_WAIT_BATCH ? nevents : KQ_WAIT_BATCH;

    for (;;) {
        int n = epoll_wait(kq->epfd, evs, max, left < 0 ? -1 : kq_wait__ms(left)), got = 0;
        if (n < 0)
            return -1; /* EINTR included: the changes are applied, as on BSD */
        pthread_mutex_lock(&kq->lock);
        for (int i = 0; i < n; i++) /* all of them: a full list still re-arms */
            got += kq_wait__report(kq, &evs[i], eventlist + got, nevents - got);
        pthread_mutex_unlock(&kq->lock);
        /* Every report may have turned out stale: then wait on, for the rest
         * of the timeout, as BSD would not have woken up at all. */
        if (got > 0 || n == 0 || left == 0)
            return got;
        if (left > 0 && (left = deadline - kq_wait__now_ns()) <= 0)
            return 0;
    }
}
/* end snippet */
