/* SPDX-License-Identifier: MIT */
/* kq_user.c: EVFILT_USER on an eventfd per event.
 *
 * BSD: a user event is tied to nothing in the kernel. A change with
 * NOTE_TRIGGER fires it; it then stays triggered (reported by every kevent()
 * call) until it is deleted, unless it has EV_CLEAR, which untriggers it once
 * reported. The low 24 bits of fflags are stored flags, changed by each
 * change as its top two bits say (NOTE_FFAND, NOTE_FFOR, NOTE_FFCOPY) and
 * handed back in every event, with data as the last change set it.
 *
 * The eventfd is the "triggered" bit: writing 1 makes it readable (and wakes
 * a thread asleep in epoll_wait(), which is what EVFILT_USER is mostly used
 * for), reading it back untriggers it.
 *
 * kn->triggered is the same bit, kept under the kqueue's mutex, and every
 * report is checked against it. The eventfd is level-triggered in epoll, so
 * one trigger can wake every thread asleep in epoll_wait() on the kqueue,
 * each with a report of it; they come here one after the other. The first
 * takes an EV_CLEAR event's trigger; the others hold a stale report and must
 * find nothing left. (The read() that untriggers would tell them too, by
 * failing with EAGAIN; but a level-triggered event is not read when it is
 * reported, and a change with EV_CLEAR may reset it while a report is on its
 * way: the bit answers every case, with no system call.) BSD does the same:
 * kqueue_scan() takes the knote off the queue and runs the filter again under
 * the kqueue's lock, so an EV_CLEAR event goes to one kevent() call.
 */
#include "kq.h"

#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

static void kq_user__trigger(struct kq_knote *kn)
{
    uint64_t one = 1;

    kn->triggered = true;
    if (write(kn->fd, &one, sizeof(one)) < 0) {
        /* EAGAIN only if the counter is near 2^64: triggered already */
    }
}

static void kq_user__untrigger(struct kq_knote *kn)
{
    uint64_t n;

    if (!kn->triggered)
        return; /* the count is 0 already: no read() */
    kn->triggered = false;
    if (read(kn->fd, &n, sizeof(n)) < 0) {
        /* EAGAIN cannot happen: triggered means the count is not 0 */
    }
}

/* snippet: user-fflags */
static void kq_user__apply_fflags(struct kq_knote *kn, unsigned int fflags)
{
    unsigned int bits = fflags & NOTE_FFLAGSMASK;

    switch (fflags & NOTE_FFCTRLMASK) {
    case NOTE_FFAND:
        kn->ufflags &= bits;
        break;
    case NOTE_FFOR:
        kn->ufflags |= bits;
        break;
    case NOTE_FFCOPY:
        kn->ufflags = bits;
        break;
    default: /* NOTE_FFNOP */
        break;
    }
}
/* end snippet */

static int kq_user_attach(struct kq_knote *kn)
{
    if ((kn->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
        return errno;
    /* The first change stores its user bits whatever its control bits say. */
    kn->ufflags = kn->kev.fflags & NOTE_FFLAGSMASK;
    if (kn->kev.fflags & NOTE_TRIGGER)
        kq_user__trigger(kn);
    return 0;
}

static int kq_user_touch(struct kq_knote *kn, const struct kevent *ch)
{
    kq_user__apply_fflags(kn, ch->fflags);
    kn->kev.data = ch->data;
    if (ch->fflags & NOTE_TRIGGER)
        kq_user__trigger(kn);
    if (ch->flags & EV_CLEAR)
        kq_user__untrigger(kn);
    return 0;
}

static void kq_user_detach(struct kq_knote *kn)
{
    close(kn->fd);
}

/* A report of the eventfd: stale if another thread's report of the same
 * trigger took it first (EV_CLEAR), or a change with EV_CLEAR reset it
 * since. Then nothing is reported, and the caller waits on. */
static bool kq_user_deliver(struct kq_knote *kn, struct kevent *out)
{
    if (!kn->triggered)
        return false;
    *out = kn->kev;
    out->fflags = kn->ufflags;
    if (kn->kev.flags & EV_CLEAR)
        kq_user__untrigger(kn);
    return true;
}

const struct kq_filter kq_user_filter = {
    .attach = kq_user_attach,
    .touch = kq_user_touch,
    .detach = kq_user_detach,
    .deliver = kq_user_deliver,
};
