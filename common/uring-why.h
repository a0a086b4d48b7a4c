/* SPDX-License-Identifier: MIT */
/* uring-why.h: why this process may not use io_uring, in words.
 *
 * io_uring_setup() answers a refusal with a bare errno, and the same EPERM
 * comes from several places. uring_why() names the cause, from the errno,
 * the kernel release, /proc/sys/kernel/io_uring_disabled and the Seccomp
 * line of /proc/self/status:
 *   ENOSYS  no io_uring in this kernel: older than 5.1, or built without
 *           CONFIG_IO_URING;
 *   EPERM   the sysctl kernel.io_uring_disabled (6.6+): 1 leaves io_uring to
 *           processes with CAP_SYS_ADMIN and the members of
 *           kernel.io_uring_group, 2 to nobody;
 *           or a seccomp filter (Docker's default profile refuses the
 *           io_uring calls since Docker 25);
 *           or SQPOLL before 5.11, which needed CAP_SYS_ADMIN;
 *           or else a security module or a sandbox;
 *   ENOMEM  before 5.12 the rings count against the locked-memory limit.
 *
 * Chapter 07's uring-probe works this out itself (exercise probe-refusal);
 * chapter 08's ring_open(), chapter 11's io_uring backend (and through it
 * chapter 13's runtime) and the doctor's probe (common/mk/uring-allowed.c)
 * say it with this function. It needs no liburing, only the kernel's
 * headers, so the doctor's probe answers on a machine without liburing-dev.
 */
#ifndef COURSE_URING_WHY_H
#define COURSE_URING_WHY_H

#include <stddef.h>

/* Write into why[len] one sentence that names the call, the errno and its
 * cause here: `err` is what io_uring_setup() (or liburing's
 * io_uring_queue_init_params()) returned, -errno, for a ring of `entries`
 * SQEs with the IORING_SETUP_* `flags`. Returns why. */
const char *uring_why(int err, unsigned entries, unsigned flags, char *why, size_t len);

#endif
