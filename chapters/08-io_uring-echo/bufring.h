/* SPDX-License-Identifier: MIT */
/* bufring.h: a provided buffer ring (Linux 5.19+).
 *
 * With single-shot recv, every waiting recv owns a buffer, even on a socket
 * that stays silent for an hour. A provided buffer ring turns that around:
 * the program gives the kernel a pool of buffers up front, and a recv with
 * IOSQE_BUFFER_SELECT takes one from the pool only when bytes actually
 * arrive. The CQE says which one (its buffer id, in cqe->flags >> 16); from
 * then on the buffer is the program's, until it gives it back.
 *
 *   the ring: an array of {addr, len, bid} shared with the kernel
 *
 *     kernel takes from here (head)         program adds here (tail)
 *                 v                                      v
 *     [ buf 7 ][ buf 2 ][ buf 9 ][ buf 4 ][  free   ][  free   ]
 *
 * The program moves the tail (io_uring_buf_ring_add + _advance); the kernel
 * moves its head, privately. When head meets tail the pool is empty, and a
 * recv that needs a buffer fails with -ENOBUFS.
 *
 * liburing 2.4 has io_uring_setup_buf_ring() for the set-up below; Debian 12
 * ships 2.3, so the ring memory is mapped and registered by hand.
 */
#ifndef CH08_BUFRING_H
#define CH08_BUFRING_H

#include <liburing.h>

struct bufring {
    struct io_uring_buf_ring *br; /* the shared ring of buffer descriptors (page-aligned) */
    size_t br_bytes;              /* its size, for munmap */
    char *mem;                    /* count * size bytes: the buffers themselves */
    unsigned count;               /* buffers, a power of two */
    unsigned size;                /* bytes per buffer */
    unsigned short bgid;          /* buffer group id that SQEs name in buf_group */
    unsigned staged;              /* given back since the last bufring_publish() */
    unsigned in_kernel;           /* buffers the kernel may still hand out, as far as we know */
};

/* Map count buffers of size bytes and register them as group bgid. Every
 * buffer starts in the kernel's hands. Returns 0 or -errno. */
int bufring_init(struct bufring *b, struct io_uring *ring, unsigned short bgid, unsigned count,
                 unsigned size);
void bufring_free(struct bufring *b, struct io_uring *ring);

static inline char *bufring_buf(const struct bufring *b, unsigned bid)
{
    return b->mem + (size_t)bid * b->size;
}

/* A CQE told us the kernel took a buffer out of the ring. */
static inline void bufring_taken(struct bufring *b)
{
    b->in_kernel--;
}

/* Give buffer bid back: it is visible to the kernel after bufring_publish(). */
void bufring_give(struct bufring *b, unsigned bid);
/* Make every buffer given since the last call visible, with one store. */
void bufring_publish(struct bufring *b);

#endif
