/* SPDX-License-Identifier: MIT */
/* kq.h: the inside of common/kqueue-linux, shared by its files.
 *
 *   kqueue.c     kqueue(), kevent(): the registry of queues, applying changes
 *   kq_wait.c    waiting in epoll_wait() and turning its reports into kevents
 *   kq_fd.c      EVFILT_READ and EVFILT_WRITE: two knotes, one epoll registration
 *   kq_timer.c   EVFILT_TIMER: a heap of timers per kqueue, on one timerfd
 *   kq_signal.c  EVFILT_SIGNAL on a signalfd per signal
 *   kq_user.c    EVFILT_USER on an eventfd per event
 *   kq_table.c   where knotes are found: by fd, and by (filter, ident)
 *
 * The unit is the knote: one (ident, filter) pair in one kqueue, as in BSD.
 * Every knote ends up as an epoll registration of some fd. For READ and WRITE
 * that fd is the ident itself, and both knotes of an fd share its one
 * registration (epoll allows one per fd per epoll instance). SIGNAL and USER
 * knotes each own a helper fd the layer creates (signalfd, eventfd). TIMER
 * knotes own no fd: they wait in a heap in their kqueue, behind the one
 * timerfd the kqueue creates with its first timer.
 *
 * Locking: one mutex per kqueue guards its knotes and tables; it is never held
 * while sleeping in epoll_wait(), so another thread can add changes (or
 * trigger an EVFILT_USER event) meanwhile. A report from epoll carries the fd
 * and a generation number, and is looked up again under the mutex: a knote
 * deleted in the meantime is simply not found.
 */
#ifndef COURSE_KQ_H
#define COURSE_KQ_H

#include <sys/event.h>

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Flags a knote keeps from the change that created it and hands back with
 * every event (FreeBSD drops the action flags and keeps these). */
#define KQ_KEPT_FLAGS (EV_ONESHOT | EV_CLEAR | EV_RECEIPT | EV_DISPATCH)

/* A timer's heap_index when it is not in the heap (disabled, or done). */
#define KQ_NOT_QUEUED UINT32_MAX

/* NOTE_LOWAT's value on FreeBSD and macOS: the one fflags bit BSD gives
 * EVFILT_READ and EVFILT_WRITE. The header leaves the name out; the value is
 * refused (EINVAL) rather than ignored. */
#define KQ_NOTE_LOWAT 0x00000001u

struct kq_knote {
    struct kevent kev; /* ident, filter, kept flags, saved fflags and data, udata */
    union {            /* a timer needs no fd: its deadline takes the place */
        struct {
            int fd;               /* READ/WRITE: the ident; SIGNAL, USER: the helper fd */
            unsigned int ufflags; /* EVFILT_USER: the stored 24 user flag bits */
            bool triggered;       /* EVFILT_USER: fired and not cleared (eventfd count > 0) */
        };
        int64_t deadline; /* EVFILT_TIMER: next expiration, CLOCK_MONOTONIC ns; or never */
    };
    uint32_t heap_index;   /* EVFILT_TIMER: its place in kq->timers, or KQ_NOT_QUEUED */
    bool enabled;          /* EV_ENABLE / EV_DISABLE */
    bool blocked_signal;   /* EVFILT_SIGNAL: this knote holds a block on its signal */
    struct kq_knote *next; /* hash chain in kq->buckets (all but READ/WRITE) */
};

/* What an fd turned out to be, found the first time its `data` is needed,
 * and forgotten whenever its epoll registration is added or removed: the
 * number may be another file's by then (kq_slot_sync()). */
enum kq_kind { KQ_KIND_UNKNOWN, KQ_KIND_SOCKET, KQ_KIND_LISTENER, KQ_KIND_FIFO, KQ_KIND_OTHER };

/* One per fd number the kqueue knows: a user fd with READ/WRITE knotes, a
 * helper fd behind one signal or user knote, or the kqueue's timerfd. */
struct kq_slot {
    struct kq_knote *read;   /* EVFILT_READ on this fd */
    struct kq_knote *write;  /* EVFILT_WRITE on this fd */
    struct kq_knote *helper; /* or: the knote this helper fd implements */
    uint32_t events;         /* the epoll registration now; 0 = none */
    uint32_t gen;            /* bumped by each EPOLL_CTL_ADD, sent with the reports */
    uint8_t kind;            /* enum kq_kind */
    bool write_first;        /* the write event did not fit last time: it goes first */
    bool timers;             /* this is kq->timer_fd, behind every EVFILT_TIMER */
};

struct kq {
    int epfd; /* the fd kqueue() returned; the user closes it */
    pthread_mutex_t lock;
    struct kq_slot *slots; /* indexed by fd */
    int nslots;
    struct kq_knote **buckets; /* (filter, ident) -> knote, for all but READ/WRITE */
    size_t nbuckets, nknotes;
    int timer_fd;             /* -1 until the first timer; then one for them all */
    int64_t timer_armed;      /* the deadline timer_fd is armed for; 0: disarmed */
    struct kq_knote **timers; /* the enabled timers, a min-heap by deadline */
    uint32_t ntimers, timers_cap;
};

/* The registration is kept, silent, while every knote of the fd is disabled:
 * epoll then still drops it when the fd is closed, which is how a later change
 * finds out (MOD fails with ENOENT or EBADF). The kernel adds EPOLLERR and
 * EPOLLHUP to every registration; with EPOLLONESHOT they are reported at most
 * once, and ignored. */
#define KQ_EPOLL_SILENT 0x40000000u /* EPOLLONESHOT */

/* EVFILT_SIGNAL or EVFILT_USER: its knote owns a helper fd. */
struct kq_filter {
    /* Create the helper fd (kn->fd) and arm it from kn->kev. Returns 0 or an errno. */
    int (*attach)(struct kq_knote *kn);
    /* A change on an existing knote (EV_ADD again, NOTE_TRIGGER...). 0 or errno. */
    int (*touch)(struct kq_knote *kn, const struct kevent *change);
    /* Undo attach: close the helper fd. */
    void (*detach)(struct kq_knote *kn);
    /* The helper fd was reported readable: fill *out; false if nothing to report. */
    bool (*deliver)(struct kq_knote *kn, struct kevent *out);
};

extern const struct kq_filter kq_signal_filter;
extern const struct kq_filter kq_user_filter;

/* kq_table.c */
struct kq_slot *kq_slot_get(struct kq *kq, int fd, bool create);
struct kq_knote *kq_table_find(struct kq *kq, short filter, uintptr_t ident);
int kq_table_insert(struct kq *kq, struct kq_knote *kn);
void kq_table_remove(struct kq *kq, struct kq_knote *kn);
void kq_table_free(struct kq *kq);

/* kqueue.c */
int kq_slot_sync(struct kq *kq, int fd, bool rearm, bool *stale);
void kq_helper_drop(struct kq *kq, struct kq_knote *kn);

/* kq_timer.c */
int kq_timer_change(struct kq *kq, const struct kevent *change);
int kq_timer_report(struct kq *kq, struct kevent *out, int room);
void kq_timer_free(struct kq *kq);

/* kq_fd.c */
int kq_fd_change(struct kq *kq, const struct kevent *change);
int kq_fd_report(struct kq *kq, int fd, uint32_t revents, struct kevent *out, int room);
void kq_fd_purge(struct kq *kq, int fd);

/* kq_wait.c */
int kq_wait(struct kq *kq, struct kevent *eventlist, int nevents, const struct timespec *timeout);

/* Set while the layer frees everything at exit: signal masks are left alone
 * then, so a signal still pending cannot strike the exiting program. */
extern bool kq_exiting;

#endif
