/* SPDX-License-Identifier: MIT */
/* probe-try.h: io_uring capabilities tried for real (probe-try.c). Each
 * returns 0 when the capability works here, or the -errno that said no.
 */
#ifndef PROBE_TRY_H
#define PROBE_TRY_H

#include <liburing.h>

/* Two NOPs, the first with IOSQE_IO_LINK (5.3). */
int probe_try_link(struct io_uring *ring);
/* io_uring_register_buffers() of one 4 KiB buffer (5.1). */
int probe_try_registered_buffers(struct io_uring *ring);
/* A multishot ACCEPT on a loopback listener (5.19), on a ring of its own. */
int probe_try_multishot_accept(void);
/* A provided buffer ring (5.19), then a multishot RECV from it (6.0), on a
 * ring of their own: one result for each. */
void probe_try_multishot_recv(int *buf_ring, int *recv);

#endif
