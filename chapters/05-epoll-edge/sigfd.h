/* sigfd.h: SIGINT and SIGTERM as a readable fd, as in chapter 04.
 *
 * Call it before starting any thread: the blocked mask is inherited, so the
 * signals stay queued for the signalfd instead of running a handler on
 * whichever thread the kernel picks. The servers watch the fd and never read
 * it, so it stays readable, level-triggered, for every thread that looks.
 */
#ifndef CH05_SIGFD_H
#define CH05_SIGFD_H

#include "net.h"

#include <errno.h>
#include <signal.h>
#include <sys/signalfd.h>

static inline int signals_to_fd(void)
{
    sigset_t mask;
    int fd;

    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
        net_die(errno, "sigprocmask(SIG_BLOCK, SIGINT|SIGTERM)");
    if ((fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
        net_die(errno, "signalfd(SIGINT|SIGTERM)");
    signal(SIGPIPE, SIG_IGN); /* a write to a reset client returns EPIPE instead */
    return fd;
}

#endif
