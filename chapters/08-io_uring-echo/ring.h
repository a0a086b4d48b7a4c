/* SPDX-License-Identifier: MIT */
/* ring.h: what this chapter's io_uring servers share around the ring itself.
 *
 *   - ring_open(): io_uring_queue_init_params() that says in words why a
 *     machine refuses io_uring (a sysctl, a seccomp filter, an old kernel)
 *     instead of a bare "Operation not permitted" (common/uring-why.c);
 *   - ring_check(): are the opcodes and flags a server relies on there? An
 *     opcode the kernel lists (io_uring_get_probe); a flag (multishot) it
 *     cannot list, so it is tried for real, on a throwaway socket;
 *   - ring_sqe(): an SQE, never NULL: a full submission queue is submitted
 *     first;
 *
 * Chapter 07 builds the rings by hand; this file only wraps liburing.
 */
#ifndef CH08_RING_H
#define CH08_RING_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>

/* What a server needs from the kernel, one bit each (ring_check). */
enum ring_need {
    RING_NEED_NET_OPS = 1u << 0,          /* ACCEPT, RECV, SEND, READ, TIMEOUT, ASYNC_CANCEL */
    RING_NEED_FAST_POLL = 1u << 1,        /* a waiting recv costs no thread (5.7) */
    RING_NEED_BUF_RING = 1u << 2,         /* provided buffer rings (5.19) */
    RING_NEED_MULTISHOT_ACCEPT = 1u << 3, /* IORING_ACCEPT_MULTISHOT (5.19) */
    RING_NEED_MULTISHOT_RECV = 1u << 4,   /* IORING_RECV_MULTISHOT (6.0) */
    RING_NEED_CANCEL_FD = 1u << 5,        /* IORING_ASYNC_CANCEL_FD | _ALL (5.19) */
};

/* Exit status of a server that cannot run on this kernel or in this
 * sandbox: the tests read it as "skip", as automake's test drivers do. */
#define RING_EXIT_UNSUPPORTED 77

/* io_uring_queue_init_params() with `entries` SQEs and `cq_entries` CQEs
 * (0: the kernel's default, twice the SQ), `flags` (IORING_SETUP_SQPOLL...)
 * and, with SQPOLL, `sq_idle_ms`. Returns 0, or -errno with a sentence in
 * `why` that names the cause. */
int ring_open(struct io_uring *ring, unsigned entries, unsigned cq_entries, unsigned flags,
              unsigned sq_idle_ms, char *why, size_t len);

/* Is every feature in `needs` (enum ring_need bits) there? Returns 0, or
 * -EOPNOTSUPP with the first missing one named in `why`, with the kernel
 * release that brought it. Call it on a fresh ring, before any request. */
int ring_check(struct io_uring *ring, unsigned needs, char *why, size_t len);

/* ring_open() then ring_check(); on failure print "PROG: WHY" on stderr and
 * exit RING_EXIT_UNSUPPORTED. With `report`, print what was checked on
 * stdout and exit 0 when all is there (a server's -K option). */
void ring_open_checked(struct io_uring *ring, const char *prog, unsigned entries,
                       unsigned cq_entries, unsigned flags, unsigned sq_idle_ms, unsigned needs,
                       bool report);

/* The next free SQE. When the submission queue is full, submit what is in
 * it first (and with SQPOLL, wait for the kernel thread to take some). */
struct io_uring_sqe *ring_sqe(struct io_uring *ring);

#endif
