/* SPDX-License-Identifier: MIT */
/* handoff.c: finished jobs go back to the loop thread. See pool.h.
 *
 * A pool thread that finished a job must not call its done callback itself:
 * the callback touches state the loop thread owns (a connection's buffers,
 * the epoll set), and would race with it. So the pool thread appends the job
 * to a list and wakes the loop through an fd the loop already watches; the
 * loop thread then takes the whole list and runs the callbacks itself.
 *
 * The wake-up is an eventfd on Linux (one fd, an 8-byte counter: a write adds
 * to it, a read returns it and resets it to 0) and a pipe elsewhere (a byte per
 * wake-up). libuv does the same for uv_async_send(), which its thread pool
 * uses to signal finished work.
 *
 * One write per burst is enough: a pool thread writes only when it makes the
 * list non-empty. If the list already held jobs, a wake-up is already on its
 * way (or the loop has not taken the list yet), and the loop will find this
 * job with the others. That is why the loop must read the fd BEFORE it takes
 * the list: the other order can consume the wake-up of a job it did not take.
 */
#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/eventfd.h>
#endif

int pool__handoff_init(struct pool *p)
{
#ifdef __linux__
    /* Non-blocking: the loop's read must never sleep, even after a spurious
     * wake-up found nothing to do. */
    p->wake_fd = p->wake_wfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return p->wake_fd < 0 ? -errno : 0;
#else
    int fds[2];

    if (pipe(fds) < 0)
        return -errno;
    for (int i = 0; i < 2; i++) {
        fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
        fcntl(fds[i], F_SETFD, FD_CLOEXEC);
    }
    p->wake_fd = fds[0];
    p->wake_wfd = fds[1];
    return 0;
#endif
}

void pool__handoff_close(struct pool *p)
{
    if (p->wake_wfd >= 0 && p->wake_wfd != p->wake_fd)
        close(p->wake_wfd);
    if (p->wake_fd >= 0)
        close(p->wake_fd);
    p->wake_fd = p->wake_wfd = -1;
}

/* Wake the loop: make wake_fd readable. EAGAIN is success here: an eventfd
 * counter at its maximum, or a full pipe, is already readable. */
static void handoff__wake(struct pool *p)
{
#ifdef __linux__
    uint64_t one = 1;
    ssize_t n;

    while ((n = write(p->wake_wfd, &one, sizeof(one))) < 0 && errno == EINTR)
        ;
#else
    char one = 1;
    ssize_t n;

    while ((n = write(p->wake_wfd, &one, 1)) < 0 && errno == EINTR)
        ;
#endif
    if (n < 0 && errno != EAGAIN) {
        /* Without the wake-up the loop would never learn that this job is
         * done: losing it silently is the one thing not to do. */
        perror("pool: write(wake fd)");
        abort();
    }
}

void (*pool__test_before_clear)(struct pool *p);

/* Consume every pending wake-up, so a level-triggered epoll stops reporting
 * the fd until the next one. */
static void handoff__clear(struct pool *p)
{
    if (pool__test_before_clear)
        pool__test_before_clear(p);
#ifdef __linux__
    uint64_t count;

    while (read(p->wake_fd, &count, sizeof(count)) < 0 && errno == EINTR)
        ;
#else
    char bytes[256];

    while (read(p->wake_fd, bytes, sizeof(bytes)) > 0 || errno == EINTR)
        ;
#endif
}

/* snippet: complete */
void pool__complete(struct pool *p, struct pool_job *job)
{
    /* EXERCISE BEGIN handoff: append job to the done list; wake the loop if it was empty */
    bool was_empty;

    job->next = NULL;
    pthread_mutex_lock(&p->done_lock);
    was_empty = p->done_head == NULL;
    if (p->done_tail)
        p->done_tail->next = job;
    else
        p->done_head = job;
    p->done_tail = job;
    pthread_mutex_unlock(&p->done_lock);
    /* After the job is in the list, never before: a loop woken early could
     * find the list empty, go back to sleep, and never hear of this job. */
    if (was_empty)
        handoff__wake(p);
    /* EXERCISE END */
}
/* end snippet */

/* snippet: drain */
size_t pool_drain(struct pool *p)
{
    size_t n = 0;

    /* EXERCISE BEGIN handoff: clear the wake fd, take the whole done list, run each callback */
    struct pool_job *job;

    handoff__clear(p); /* first: see the comment at the top of this file */
    pthread_mutex_lock(&p->done_lock);
    job = p->done_head;
    p->done_head = p->done_tail = NULL;
    pthread_mutex_unlock(&p->done_lock);
    /* Outside the lock: a callback may submit new work, and a pool thread
     * finishing meanwhile must not wait for our callbacks to return. */
    while (job) {
        struct pool_job *next = job->next; /* done may free the job */
        job->done(job, 0);
        job = next;
        n++;
    }
    /* EXERCISE END */
    return n;
}
/* end snippet */
