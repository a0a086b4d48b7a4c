/* SPDX-License-Identifier: MIT */
/* uring-wait.h: the next io_uring completion, within a time limit.
 *
 * For code that submits a trial request (does this kernel know the flag?)
 * and must not hang if no completion ever comes: chapter 07's probe-try.c
 * and chapter 08's ring.c. Header-only, over liburing, which whoever
 * includes it links already.
 */
#ifndef COURSE_URING_WAIT_H
#define COURSE_URING_WAIT_H

#include <errno.h>
#include <liburing.h>

/* Wait up to timeout_ms for one CQE, copy it into *out and give its slot
 * back to the kernel. Returns 0, or -errno (-ETIME: none came in time). */
static inline int uring_wait_one(struct io_uring *ring, struct io_uring_cqe *out,
                                 unsigned timeout_ms)
{
    struct __kernel_timespec ts = {.tv_sec = timeout_ms / 1000,
                                   .tv_nsec = (long long)(timeout_ms % 1000) * 1000000};
    struct io_uring_cqe *cqe;
    int ret;

    do {
        ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
    } while (ret == -EINTR);
    if (ret < 0)
        return ret;
    *out = *cqe;
    io_uring_cqe_seen(ring, cqe);
    return 0;
}

#endif
