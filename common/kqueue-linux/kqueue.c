/* SPDX-License-Identifier: MIT */
/* kqueue.c: kqueue() and kevent() for Linux (see include/sys/event.h, kq.h).
 *
 * kqueue() returns an epoll fd, and the layer keeps its state (the knotes) in
 * a registry indexed by that fd. The program closes the kqueue with close(),
 * as on BSD, which the layer cannot see; the state of a closed kqueue is
 * freed when kqueue() gets the same fd number again, when kevent() finds the
 * fd is no longer an epoll fd, and at exit.
 */
#include "kq.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

static pthread_mutex_t kq_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kq **kq_registry; /* indexed by the kqueue's fd */
static int kq_registry_len;
bool kq_exiting;

static const struct kq_filter *kqueue__filter(short filter)
{
    switch (filter) {
    case EVFILT_SIGNAL:
        return &kq_signal_filter;
    case EVFILT_USER:
        return &kq_user_filter;
    default:
        return NULL;
    }
}

/* The epoll events a slot's knotes need: 0 when it has none (no registration),
 * KQ_EPOLL_SILENT when they are all disabled. EPOLLET only when every enabled
 * knote asked for EV_CLEAR: the mode belongs to the whole registration. */
static uint32_t kqueue__slot_events(const struct kq_slot *s)
{
    const struct kq_knote *r = s->read, *w = s->write;
    uint32_t ev = 0;
    bool clear = true;

    if (s->timers)
        return EPOLLIN;
    if (s->helper)
        return s->helper->enabled ? EPOLLIN : KQ_EPOLL_SILENT;
    if (!r && !w)
        return 0;
    if (r && r->enabled) {
        ev |= EPOLLIN | EPOLLRDHUP;
        clear = clear && (r->kev.flags & EV_CLEAR);
    }
    if (w && w->enabled) {
        ev |= EPOLLOUT;
        clear = clear && (w->kev.flags & EV_CLEAR);
    }
    if (!ev)
        return KQ_EPOLL_SILENT;
    return clear ? ev | EPOLLET : ev;
}

/* snippet: sync */
/* Make fd's epoll registration match its knotes: one epoll_ctl() at most.
 * `rearm` forces an EPOLL_CTL_MOD even if nothing changed: epoll then polls
 * the fd again, which re-reports an edge-triggered fd that is still ready.
 * *stale is set when epoll no longer knew the fd: it was closed (and maybe
 * reopened) since it was registered, which removed it from the epoll set. */
int kq_slot_sync(struct kq *kq, int fd, bool rearm, bool *stale)
{
    struct kq_slot *s = &kq->slots[fd];
    uint32_t want = kqueue__slot_events(s);
    int op;

    *stale = false;
    if (want == s->events && !(rearm && want))
        return 0;
    op = !want ? EPOLL_CTL_DEL : !s->events ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
    if (op != EPOLL_CTL_MOD) /* registered afresh, or no longer: maybe another file next time */
        s->kind = KQ_KIND_UNKNOWN;
    if (op == EPOLL_CTL_ADD)
        s->gen++;
    struct epoll_event ev = {.events = want, .data.u64 = (uint64_t)s->gen << 32 | (uint32_t)fd};
    if (epoll_ctl(kq->epfd, op, fd, &ev) < 0) {
        int err = errno;
        if (op != EPOLL_CTL_ADD && (err == ENOENT || err == EBADF)) {
            *stale = true;
            s->events = 0;
        }
        return err;
    }
    s->events = want;
    return 0;
}
/* end snippet */

/* Delete a signal or user knote: close its helper fd (which removes it
 * from the epoll set) and forget it. */
void kq_helper_drop(struct kq *kq, struct kq_knote *kn)
{
    const struct kq_filter *f = kqueue__filter(kn->kev.filter);
    struct kq_slot *s = kq_slot_get(kq, kn->fd, false);

    if (s) {
        s->helper = NULL;
        s->events = 0;
    }
    kq_table_remove(kq, kn);
    f->detach(kn);
    free(kn);
}

static int kqueue__helper_add(struct kq *kq, const struct kq_filter *f, const struct kevent *ch)
{
    struct kq_knote *kn = calloc(1, sizeof(*kn));
    struct kq_slot *s;
    bool stale;
    int err;

    if (!kn)
        return ENOMEM;
    kn->kev = *ch;
    kn->kev.flags &= KQ_KEPT_FLAGS;
    kn->enabled = !(ch->flags & EV_DISABLE);
    if ((err = f->attach(kn)) != 0)
        goto fail_free;
    if (!(s = kq_slot_get(kq, kn->fd, true))) {
        err = ENOMEM;
        goto fail_detach;
    }
    if (s->read || s->write) /* the kernel reused the number: that fd was closed */
        kq_fd_purge(kq, kn->fd);
    s->helper = kn;
    s->events = 0;
    if ((err = kq_slot_sync(kq, kn->fd, false, &stale)) != 0)
        goto fail_slot;
    if ((err = kq_table_insert(kq, kn)) != 0)
        goto fail_slot;
    return 0;

fail_slot:
    s->helper = NULL;
    s->events = 0;
fail_detach:
    f->detach(kn); /* closing the helper fd also drops its epoll registration */
fail_free:
    free(kn);
    return err;
}

/* A change for a signal or user knote, with BSD's order: find it, add
 * it, delete it, or update it (udata, the filter's touch), then enable or
 * disable it. Returns 0 or an errno. */
static int kqueue__helper_change(struct kq *kq, const struct kq_filter *f, const struct kevent *ch)
{
    struct kq_knote *kn = kq_table_find(kq, ch->filter, ch->ident);
    bool stale;
    int err;

    if (!kn)
        return (ch->flags & EV_ADD) ? kqueue__helper_add(kq, f, ch) : ENOENT;
    if (ch->flags & EV_DELETE) {
        kq_helper_drop(kq, kn);
        return 0;
    }
    kn->kev.udata = ch->udata;
    if ((err = f->touch(kn, ch)) != 0)
        return err;
    if (ch->flags & EV_ENABLE)
        kn->enabled = true;
    else if (ch->flags & EV_DISABLE)
        kn->enabled = false;
    return kq_slot_sync(kq, kn->fd, false, &stale);
}

static int kqueue__apply(struct kq *kq, const struct kevent *ch)
{
    const struct kq_filter *f;

    if ((ch->flags & (EV_ENABLE | EV_DISABLE)) == (EV_ENABLE | EV_DISABLE))
        return EINVAL; /* FreeBSD's kqueue_register() refuses both at once */
    if (ch->filter == EVFILT_READ || ch->filter == EVFILT_WRITE)
        return kq_fd_change(kq, ch);
    if (ch->filter == EVFILT_TIMER)
        return kq_timer_change(kq, ch);
    if (!(f = kqueue__filter(ch->filter)))
        return EINVAL;
    return kqueue__helper_change(kq, f, ch);
}

/* Free a kqueue's state. Its epoll fd is the program's to close (and may be
 * closed already, its number reused). */
static void kqueue__destroy(struct kq *kq)
{
    kq_timer_free(kq); /* first: it walks the table, which holds the others too */
    for (int fd = 0; fd < kq->nslots; fd++) {
        struct kq_slot *s = &kq->slots[fd];
        if (s->helper) {
            kqueue__filter(s->helper->kev.filter)->detach(s->helper);
            free(s->helper);
        }
        free(s->read);
        free(s->write);
    }
    kq_table_free(kq);
    pthread_mutex_destroy(&kq->lock);
    free(kq);
}

/* Take kq out of the registry (if it is still there) and free it. */
static void kqueue__forget(int fd, struct kq *kq)
{
    pthread_mutex_lock(&kq_registry_lock);
    if (fd < kq_registry_len && kq_registry[fd] == kq)
        kq_registry[fd] = NULL;
    else
        kq = NULL; /* another thread forgot it first */
    pthread_mutex_unlock(&kq_registry_lock);
    if (kq)
        kqueue__destroy(kq);
}

int kqueue(void)
{
    struct kq *kq = calloc(1, sizeof(*kq)), *old = NULL;
    int fd, err = ENOMEM;

    if (!kq)
        goto fail;
    if ((fd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        err = errno;
        goto fail_free;
    }
    kq->epfd = fd;
    kq->timer_fd = -1;
    pthread_mutex_init(&kq->lock, NULL);
    pthread_mutex_lock(&kq_registry_lock);
    if (fd >= kq_registry_len) {
        int n = kq_registry_len ? kq_registry_len : 16;
        while (n <= fd)
            n *= 2;
        struct kq **r = realloc(kq_registry, (size_t)n * sizeof(*r));
        if (!r) {
            pthread_mutex_unlock(&kq_registry_lock);
            goto fail_close;
        }
        for (int i = kq_registry_len; i < n; i++)
            r[i] = NULL;
        kq_registry = r;
        kq_registry_len = n;
    }
    /* The kernel gave us this number, so the kqueue that had it was closed. */
    old = kq_registry[fd];
    kq_registry[fd] = kq;
    pthread_mutex_unlock(&kq_registry_lock);
    if (old)
        kqueue__destroy(old);
    return fd;

fail_close:
    pthread_mutex_destroy(&kq->lock);
    close(fd);
fail_free:
    free(kq);
fail:
    errno = err;
    return -1;
}

/* snippet: changes */
/* Every change in order. A change that fails, or carries EV_RECEIPT, becomes
 * an EV_ERROR entry (data = errno, 0 for success) in eventlist; when there is
 * no room left for one, kevent() fails with that errno (or returns the
 * receipts so far) and the remaining changes are not applied: BSD does the
 * same. Returns the entries written, or -1 with *err set. */
static int kqueue__apply_changes(struct kq *kq, const struct kevent *changes, int nchanges,
                                 struct kevent *eventlist, int nevents, int *err)
{
    int nout = 0;

    for (int i = 0; i < nchanges; i++) {
        struct kevent ch = changes[i]; /* a copy: eventlist may be the same array */
        if (ch.filter == 0)
            continue;
        ch.flags &= (unsigned short)~EV_SYSFLAGS;
        int e = kqueue__apply(kq, &ch);
        if (e == 0 && !(ch.flags & EV_RECEIPT))
            continue;
        if (nout == nevents) {
            *err = e;
            return e ? -1 : nout;
        }
        ch.flags = EV_ERROR;
        ch.data = e;
        eventlist[nout++] = ch;
    }
    *err = 0;
    return nout;
}
/* end snippet */

static struct kq *kqueue__lookup(int fd)
{
    struct kq *kq = NULL;

    pthread_mutex_lock(&kq_registry_lock);
    if (fd >= 0 && fd < kq_registry_len)
        kq = kq_registry[fd];
    pthread_mutex_unlock(&kq_registry_lock);
    return kq;
}

int kevent(int kqfd, const struct kevent *changelist, int nchanges, struct kevent *eventlist,
           int nevents, const struct timespec *timeout)
{
    struct kq *kq = kqueue__lookup(kqfd);
    int n, err;

    if (!kq) {
        errno = EBADF;
        return -1;
    }
    if (nchanges < 0 || nevents < 0 ||
        (timeout &&
         (timeout->tv_sec < 0 || timeout->tv_nsec < 0 || timeout->tv_nsec >= 1000000000L))) {
        errno = EINVAL;
        return -1;
    }
    if ((nchanges > 0 && !changelist) || (nevents > 0 && !eventlist)) {
        errno = EFAULT;
        return -1;
    }
    pthread_mutex_lock(&kq->lock);
    n = kqueue__apply_changes(kq, changelist, nchanges, eventlist, nevents, &err);
    pthread_mutex_unlock(&kq->lock);
    if (n != 0 || err || nevents == 0) {
        errno = err;
        return err ? -1 : n;
    }
    n = kq_wait(kq, eventlist, nevents, timeout);
    if (n < 0 && (errno == EBADF || errno == EINVAL)) {
        /* kqfd was closed, and its number maybe reused by another kind of fd */
        kqueue__forget(kqfd, kq);
        errno = EBADF;
    }
    return n;
}

/* At exit, free every kqueue's state and close its helper fds, so that a
 * program that closed its kqueues leaves nothing behind (valgrind checks). */
__attribute__((destructor)) static void kqueue__free_all(void)
{
    pthread_mutex_lock(&kq_registry_lock);
    kq_exiting = true;
    for (int fd = 0; fd < kq_registry_len; fd++) {
        if (kq_registry[fd])
            kqueue__destroy(kq_registry[fd]);
    }
    free(kq_registry);
    kq_registry = NULL;
    kq_registry_len = 0;
    pthread_mutex_unlock(&kq_registry_lock);
}
