/* SPDX-License-Identifier: MIT */
/* loop.c: the epoll loop of chapter 12 (see loop.h). */
#include "loop.h"
#include "net.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define LOOP_BATCH 64

int loop_init(struct loop *l)
{
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    l->armed = 0;
    l->stop = false;
    l->resumes = 0;
    return l->epfd < 0 ? -errno : 0;
}

void loop_fini(struct loop *l)
{
    if (l->epfd >= 0)
        close(l->epfd);
    l->epfd = -1;
}

/* snippet: await */
void loop_await_fd(struct loop *l, struct loop_wait *w, uint32_t events)
{
    struct epoll_event ev = {.events = events | EPOLLONESHOT, .data.ptr = w};
    int op = w->in_epoll ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;

    if (w->armed) /* one resume per wait: a second await would be lost */
        net_die(EBUSY, "loop_await_fd(fd=%d): already armed", w->fd);
    if (epoll_ctl(l->epfd, op, w->fd, &ev) < 0)
        net_die(errno, "epoll_ctl(%s, fd=%d)", w->in_epoll ? "MOD" : "ADD", w->fd);
    w->in_epoll = true;
    w->armed = true;
    l->armed++;
}
/* end snippet */

void loop_forget(struct loop *l, struct loop_wait *w)
{
    if (w->in_epoll && epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL) < 0)
        fprintf(stderr, "epoll_ctl(DEL, fd=%d): %s\n", w->fd, strerror(errno));
    if (w->armed)
        l->armed--;
    w->in_epoll = false;
    w->armed = false;
}

/* snippet: run */
int loop_run(struct loop *l)
{
    struct epoll_event evs[LOOP_BATCH];

    while (!l->stop && l->armed > 0) {
        int n = epoll_wait(l->epfd, evs, LOOP_BATCH, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        for (int i = 0; i < n; i++) {
            struct loop_wait *w = evs[i].data.ptr;
            /* Disarm before resuming: the continuation may arm it again. Each
             * event here belongs to a frame suspended on it, which nothing
             * else frees, so the later events of the batch stay valid. */
            w->armed = false;
            l->armed--;
            l->resumes++;
            w->resume(w->frame);
        }
    }
    return 0;
}
/* end snippet */

void loop_stop(struct loop *l)
{
    l->stop = true;
}

int loop_timerfd(int first_ms, int period_ms)
{
    struct itimerspec its = {
        .it_value = {first_ms / 1000, (long)(first_ms % 1000) * 1000000},
        .it_interval = {period_ms / 1000, (long)(period_ms % 1000) * 1000000},
    };
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);

    if (fd < 0)
        return -errno;
    if (first_ms == 0 && period_ms == 0)
        its.it_value.tv_nsec = 1; /* 0 would disarm it: fire at once instead */
    if (timerfd_settime(fd, 0, &its, NULL) < 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    return fd;
}
