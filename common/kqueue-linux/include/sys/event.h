/* SPDX-License-Identifier: MIT */
/* event.h: <sys/event.h> for Linux, kqueue(2) and kevent(2) over epoll,
 * timerfd, signalfd and eventfd (common/kqueue-linux).
 *
 * Code written for FreeBSD or macOS compiles unchanged against this header:
 *
 *     cc -I common/kqueue-linux/include prog.c build/common/kqueue-linux/libkqueue-linux.a
 *
 * The names and values follow FreeBSD's header. Only the filters and flags
 * this layer implements are defined, so a program that needs another one
 * (EVFILT_VNODE, EVFILT_PROC, NOTE_LOWAT, ...) fails to compile instead of
 * failing at run time.
 * common/kqueue-linux/README.md lists every place where the behaviour differs
 * from BSD.
 */
#ifndef COURSE_KQUEUE_LINUX_SYS_EVENT_H
#define COURSE_KQUEUE_LINUX_SYS_EVENT_H

#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EVFILT_READ   (-1)  /* ident is an fd: readable; data = bytes to read */
#define EVFILT_WRITE  (-2)  /* ident is an fd: writable; data = room in the send buffer */
#define EVFILT_SIGNAL (-6)  /* ident is a signal number; data = deliveries since last time */
#define EVFILT_TIMER  (-7)  /* ident is any number; data = the period (ms by default) */
#define EVFILT_USER   (-11) /* ident is any number; triggered by NOTE_TRIGGER */

struct kevent {
    uintptr_t ident;      /* identifier for this event: an fd, a signal, any number */
    short filter;         /* EVFILT_* */
    unsigned short flags; /* EV_* actions in, EV_* state out */
    unsigned int fflags;  /* filter-specific flags (NOTE_*) */
    int64_t data;         /* filter-specific data, in and out */
    void *udata;          /* opaque: handed back unchanged with every event */
};

/* actions */
#define EV_ADD     0x0001 /* add, or modify if (ident, filter) exists; enables it */
#define EV_DELETE  0x0002 /* remove */
#define EV_ENABLE  0x0004 /* report it again */
#define EV_DISABLE 0x0008 /* keep it, but do not report it */

/* flags */
#define EV_ONESHOT  0x0010 /* delete after the first event */
#define EV_CLEAR    0x0020 /* reset the state after an event: edge-triggered */
#define EV_RECEIPT  0x0040 /* always return an EV_ERROR entry for this change */
#define EV_DISPATCH 0x0080 /* disable after each event */

#define EV_SYSFLAGS 0xF000 /* set by the system only */

/* returned values */
#define EV_EOF   0x8000 /* end of file or connection: see fflags for the error */
#define EV_ERROR 0x4000 /* a change failed: data is the errno */

/* EVFILT_READ and EVFILT_WRITE take no fflags here: BSD's NOTE_LOWAT (a
 * low-water mark per knote) is not defined, as epoll has no mark per
 * registration, and its value (1) in fflags is refused with EINVAL. */

/* EVFILT_TIMER: the unit of data (milliseconds when none is given) */
#define NOTE_SECONDS  0x00000001
#define NOTE_MSECONDS 0x00000002
#define NOTE_USECONDS 0x00000004
#define NOTE_NSECONDS 0x00000008
/* EVFILT_TIMER: data is a time since the Epoch (CLOCK_REALTIME) in that unit,
 * not a period; the timer fires once. NOTE_ABSOLUTE is macOS's name for it
 * (0x8 there), with FreeBSD's value and behaviour here. */
#define NOTE_ABSTIME  0x00000010
#define NOTE_ABSOLUTE NOTE_ABSTIME

/* EVFILT_USER: the top two bits of fflags say how the low 24 bits change the
 * stored flags; NOTE_TRIGGER fires the event. */
#define NOTE_FFNOP      0x00000000
#define NOTE_FFAND      0x40000000
#define NOTE_FFOR       0x80000000
#define NOTE_FFCOPY     0xc0000000
#define NOTE_FFCTRLMASK 0xc0000000
#define NOTE_FFLAGSMASK 0x00ffffff
#define NOTE_TRIGGER    0x01000000

#define EV_SET(kevp, a, b, c, d, e, f)                                                             \
    do {                                                                                           \
        struct kevent *kq__kevp = (kevp);                                                          \
        kq__kevp->ident = (a);                                                                     \
        kq__kevp->filter = (b);                                                                    \
        kq__kevp->flags = (c);                                                                     \
        kq__kevp->fflags = (d);                                                                    \
        kq__kevp->data = (e);                                                                      \
        kq__kevp->udata = (f);                                                                     \
    } while (0)

/* A new kernel event queue (an epoll fd here, close-on-exec), or -1 and errno. */
int kqueue(void);

/* Apply every change in changelist, then wait for up to nevents events
 * (timeout NULL: for ever; nevents 0: apply the changes and return at once).
 * Returns the number of entries placed in eventlist, or -1 and errno. */
int kevent(int kq, const struct kevent *changelist, int nchanges, struct kevent *eventlist,
           int nevents, const struct timespec *timeout);

#ifdef __cplusplus
}
#endif

#endif
