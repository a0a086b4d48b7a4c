/* SPDX-License-Identifier: MIT */
/* kq_signal.c: EVFILT_SIGNAL on a signalfd per signal.
 *
 * BSD records every attempt to deliver the signal, even when its disposition
 * is SIG_IGN (the usual way: ignore SIGTERM, watch it with EVFILT_SIGNAL),
 * and the signal's handler or default action still happens first.
 *
 * A signalfd only sees a signal that stays pending, which means blocked: an
 * ignored signal that is not blocked is thrown away when it is sent, and a
 * handled one is consumed by its handler. So adding the knote blocks the
 * signal in the calling thread (a blocked signal is never discarded, even
 * with SIG_IGN), and deleting the last knote for it unblocks it again if it
 * was not blocked before. Threads created afterwards inherit the mask; ones
 * that already exist do not, and a signal the kernel delivers to one of them
 * never reaches the signalfd. Block the signal in every thread (or add the
 * knote before creating threads) in a threaded program.
 */
#include "kq.h"

#include <errno.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

/* How many knotes (of any kqueue) hold a block on each signal, and whether the
 * layer blocked it itself (then it unblocks it when the count drops to 0). */
static pthread_mutex_t kq_signal_lock = PTHREAD_MUTEX_INITIALIZER;
static int kq_signal_holds[NSIG];
static bool kq_signal_blocked_by_us[NSIG];

static int kq_signal__hold(int sig)
{
    sigset_t set, old;
    int err = 0;

    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_mutex_lock(&kq_signal_lock);
    if (kq_signal_holds[sig] == 0) {
        err = pthread_sigmask(SIG_BLOCK, &set, &old);
        kq_signal_blocked_by_us[sig] = !err && !sigismember(&old, sig);
    }
    if (!err)
        kq_signal_holds[sig]++;
    pthread_mutex_unlock(&kq_signal_lock);
    return err;
}

static void kq_signal__release(int sig)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_mutex_lock(&kq_signal_lock);
    if (--kq_signal_holds[sig] == 0 && kq_signal_blocked_by_us[sig]) {
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        kq_signal_blocked_by_us[sig] = false;
    }
    pthread_mutex_unlock(&kq_signal_lock);
}

static int kq_signal_attach(struct kq_knote *kn)
{
    sigset_t set;
    int sig = kn->kev.ident < NSIG ? (int)kn->kev.ident : 0, err;

    if (sig <= 0 || sig == SIGKILL || sig == SIGSTOP)
        return EINVAL;
    kn->kev.flags |= EV_CLEAR; /* BSD sets it: data counts since the last event */
    sigemptyset(&set);
    sigaddset(&set, sig);
    if ((kn->fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
        return errno;
    if ((err = kq_signal__hold(sig)) != 0) {
        close(kn->fd);
        return err;
    }
    kn->blocked_signal = true;
    return 0;
}

static int kq_signal_touch(struct kq_knote *kn, const struct kevent *ch)
{
    (void)kn;
    (void)ch;
    return 0;
}

static void kq_signal_detach(struct kq_knote *kn)
{
    close(kn->fd);
    if (kn->blocked_signal && !kq_exiting)
        kq_signal__release((int)kn->kev.ident);
}

/* snippet: signal-deliver */
/* data = how many were read. Ordinary signals do not queue: sent three times
 * while pending, one is read (BSD would count 3). Real-time signals queue. */
static bool kq_signal_deliver(struct kq_knote *kn, struct kevent *out)
{
    struct signalfd_siginfo si[16];
    ssize_t got;
    int64_t n = 0;

    while ((got = read(kn->fd, si, sizeof(si))) > 0)
        n += got / (ssize_t)sizeof(si[0]);
    if (n == 0)
        return false; /* another thread's report of the same signal read it first */
    *out = kn->kev;
    out->fflags = 0;
    out->data = n;
    return true;
}
/* end snippet */

const struct kq_filter kq_signal_filter = {
    .attach = kq_signal_attach,
    .touch = kq_signal_touch,
    .detach = kq_signal_detach,
    .deliver = kq_signal_deliver,
};
