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
 */
#include "kq.h"

#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

static void kq_user__trigger(struct kq_knote *kn)
{
    uint64_t one = 1;

    if (write(kn->fd, &one, sizeof(one)) < 0) {
        /* EAGAIN only if the counter is near 2^64: triggered already */
    }
}

static void kq_user__untrigger(struct kq_knote *kn)
{
    uint64_t n;

    if (read(kn->fd, &n, sizeof(n)) < 0) {
        /* EAGAIN: it was not triggered */
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

static bool kq_user_deliver(struct kq_knote *kn, struct kevent *out)
{
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
