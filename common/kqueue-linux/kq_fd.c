/* SPDX-License-Identifier: MIT */
/* kq_fd.c: EVFILT_READ and EVFILT_WRITE over epoll.
 *
 * In kqueue, reading and writing on one fd are two knotes, (fd, EVFILT_READ)
 * and (fd, EVFILT_WRITE), each with its own flags, udata, enabled state and
 * EV_ONESHOT. epoll has one registration per fd, with one events mask and one
 * data word. So both knotes of an fd share its registration:
 *
 *   - the mask is the union of what the enabled knotes need (EPOLLIN |
 *     EPOLLRDHUP for READ, EPOLLOUT for WRITE), recomputed after every change
 *     (kq_slot_sync() in kqueue.c);
 *   - the data word holds the fd (and a generation), not a knote: one report
 *     is split back into zero, one or two kevents here, each with its own
 *     knote's udata;
 *   - EV_CLEAR is epoll's EPOLLET, which applies to the whole registration:
 *     the fd is edge-triggered when every enabled knote asked for EV_CLEAR,
 *     level-triggered otherwise (then an EV_CLEAR knote is reported again
 *     while its condition holds, which a correct program tolerates: readiness
 *     is a hint, and the read or write that follows says EAGAIN).
 *
 * Why not dup() the fd to get a second registration? Because the duplicate
 * would keep the socket open after the program's close(): the peer would
 * never see the connection end.
 */
#include "kq.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

static struct kq_knote **kq_fd__knote(struct kq_slot *s, short filter)
{
    return filter == EVFILT_READ ? &s->read : &s->write;
}

/* The fd was closed since its knotes were registered: on BSD, close()
 * deleted them. Forget them here too. */
void kq_fd_purge(struct kq *kq, int fd)
{
    struct kq_slot *s = &kq->slots[fd];

    free(s->read);
    free(s->write);
    s->read = s->write = NULL;
    s->events = 0;
    s->kind = KQ_KIND_UNKNOWN;
    s->write_first = false;
}

static int kq_fd__add(struct kq_slot *s, int fd, const struct kevent *ch)
{
    struct kq_knote *kn = calloc(1, sizeof(*kn));

    if (!kn)
        return ENOMEM;
    kn->kev = *ch;
    kn->kev.flags &= KQ_KEPT_FLAGS;
    kn->enabled = !(ch->flags & EV_DISABLE);
    kn->fd = fd;
    *kq_fd__knote(s, ch->filter) = kn;
    return 0;
}

/* snippet: fd-change */
int kq_fd_change(struct kq *kq, const struct kevent *ch)
{
    bool adding = (ch->flags & EV_ADD) != 0, added, stale;
    int fd = ch->ident <= INT_MAX ? (int)ch->ident : -1, err = 0;
    struct kq_slot *s = kq_slot_get(kq, fd, false);
    struct kq_knote **pk;

    if (fd < 0 || (!s && adding && fcntl(fd, F_GETFD) < 0))
        return EBADF; /* before growing the slots up to a number that is not open */
    if ((ch->fflags & KQ_NOTE_LOWAT) && !(ch->flags & EV_DELETE))
        return EINVAL; /* a low-water mark: not provided (see sys/event.h) */
    if (!s && adding && !(s = kq_slot_get(kq, fd, true)))
        return ENOMEM;
    if (s && (s->helper || s->timers))
        return EBADF; /* a timerfd, signalfd or eventfd of this layer */
    for (int attempt = 0; attempt < 2; attempt++) {
        pk = s ? kq_fd__knote(s, ch->filter) : NULL;
        added = false;
        if (!pk || !*pk) {
            if (!adding)
                return fcntl(fd, F_GETFD) < 0 ? EBADF : ENOENT;
            if ((err = kq_fd__add(s, fd, ch)) != 0)
                return err;
            added = true;
        } else if (ch->flags & EV_DELETE) {
            free(*pk);
            *pk = NULL;
        } else {
            (*pk)->kev.udata = ch->udata;
            (*pk)->kev.fflags = ch->fflags;
            (*pk)->kev.data = ch->data;
            if (ch->flags & EV_ENABLE)
                (*pk)->enabled = true;
            else if (ch->flags & EV_DISABLE)
                (*pk)->enabled = false;
        }
        /* EV_ADD always reaches epoll: it re-polls the fd, as BSD runs the
         * filter again, and it finds out whether the fd was closed. */
        err = kq_slot_sync(kq, fd, adding, &stale);
        if (!stale) {
            if (err && added) {
                free(*pk);
                *pk = NULL;
            }
            return err;
        }
        kq_fd_purge(kq, fd);
        if (!adding || (ch->flags & EV_DELETE))
            return err; /* ENOENT (the number was reused) or EBADF (closed) */
        /* EV_ADD on a reused fd number: start afresh */
    }
    return err;
}
/* end snippet */

static void kq_fd__classify(struct kq_slot *s, int fd)
{
    struct stat st;
    int on = 0;
    socklen_t len = sizeof(on);

    if (s->kind != KQ_KIND_UNKNOWN)
        return;
    if (fstat(fd, &st) < 0)
        s->kind = KQ_KIND_OTHER;
    else if (S_ISSOCK(st.st_mode))
        s->kind = getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on ? KQ_KIND_LISTENER
                                                                                  : KQ_KIND_SOCKET;
    else if (S_ISFIFO(st.st_mode))
        s->kind = KQ_KIND_FIFO;
    else
        s->kind = KQ_KIND_OTHER;
}

/* snippet: data */
/* EVFILT_READ's data: the bytes ready to read (FIONREAD); for a listening
 * socket, the connections waiting in its accept queue. FIONREAD refuses a
 * listener (EINVAL), but TCP_INFO on one reports the queue's length in
 * tcpi_unacked: what `ss -l` shows as Recv-Q. */
static int64_t kq_fd__readable(struct kq_slot *s, int fd)
{
    int n = 0;

    if (s->kind == KQ_KIND_LISTENER) {
        struct tcp_info ti;
        socklen_t len = sizeof(ti);
        if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 && ti.tcpi_unacked > 0)
            return ti.tcpi_unacked;
        return 1; /* not TCP: at least one, or it would not be readable */
    }
    return ioctl(fd, FIONREAD, &n) == 0 ? n : 0;
}

/* EVFILT_WRITE's data: the room left in the send buffer, SO_SNDBUF less the
 * bytes queued in it (SIOCOUTQ), or in a pipe. Linux counts its bookkeeping
 * in SO_SNDBUF, so this is an upper bound: a write may take less. */
static int64_t kq_fd__writable(struct kq_slot *s, int fd)
{
    int size = 0, used = 0;
    socklen_t len = sizeof(size);

    if (s->kind == KQ_KIND_SOCKET) {
        if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, &len) < 0 ||
            ioctl(fd, SIOCOUTQ, &used) < 0)
            return 0;
    } else if (s->kind == KQ_KIND_FIFO) {
        if ((size = fcntl(fd, F_GETPIPE_SZ)) < 0 || ioctl(fd, FIONREAD, &used) < 0)
            return 0;
    }
    return size > used ? size - used : 0;
}
/* end snippet */

/* The socket's pending error, read once per report (reading it clears it). */
static unsigned int kq_fd__error(const struct kq_slot *s, int fd, int *cached)
{
    socklen_t len = sizeof(*cached);

    if (*cached < 0 &&
        (s->kind != KQ_KIND_SOCKET || getsockopt(fd, SOL_SOCKET, SO_ERROR, cached, &len) < 0))
        *cached = 0;
    return (unsigned int)*cached;
}

static void kq_fd__fill(struct kq_slot *s, struct kq_knote *kn, uint32_t revents, int *so_error,
                        struct kevent *out)
{
    bool rd = kn->kev.filter == EVFILT_READ;
    uint32_t eof = rd ? EPOLLRDHUP | EPOLLHUP : EPOLLHUP | EPOLLERR;

    *out = kn->kev;
    out->fflags = 0;
    if (revents & eof) {
        out->flags |= EV_EOF;
        if (revents & EPOLLERR)
            out->fflags = kq_fd__error(s, kn->fd, so_error);
    }
    out->data = rd ? kq_fd__readable(s, kn->fd) : kq_fd__writable(s, kn->fd);
}

/* snippet: fd-report */
/* One epoll report for fd, split into its READ and WRITE kevents (at most
 * `room` of them). Returns how many were written to out. */
int kq_fd_report(struct kq *kq, int fd, uint32_t revents, struct kevent *out, int room)
{
    struct kq_slot *s = &kq->slots[fd];
    struct kq_knote *r = s->read, *w = s->write, *order[2];
    bool rearm = false, changed = false, stale;
    int n = 0, so_error = -1;

    if (!(r && r->enabled && (revents & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))))
        r = NULL;
    if (!(w && w->enabled && (revents & (EPOLLOUT | EPOLLHUP | EPOLLERR))))
        w = NULL;
    order[0] = s->write_first ? w : r;
    order[1] = s->write_first ? r : w;
    kq_fd__classify(s, fd);
    for (int i = 0; i < 2; i++) {
        struct kq_knote *kn = order[i];
        if (!kn)
            continue;
        if (n == room) { /* no room: report it next time, and first */
            s->write_first = kn == s->write;
            rearm = true;
            continue;
        }
        s->write_first = false;
        kq_fd__fill(s, kn, revents, &so_error, &out[n++]);
        if (kn->kev.flags & EV_ONESHOT) {
            *kq_fd__knote(s, kn->kev.filter) = NULL;
            free(kn);
            changed = true;
        } else if (kn->kev.flags & EV_DISPATCH) {
            kn->enabled = false;
            changed = true;
        }
    }
    /* Level-triggered, epoll reports a skipped knote again by itself;
     * edge-triggered, EPOLL_CTL_MOD makes it look at the fd once more. */
    rearm = rearm && (s->events & EPOLLET);
    if (changed || rearm)
        kq_slot_sync(kq, fd, rearm, &stale); /* a closed fd's registration is gone already */
    return n;
}
/* end snippet */
