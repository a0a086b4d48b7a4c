/* SPDX-License-Identifier: MIT */
/* bufring.c: see bufring.h. */
#include "bufring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* snippet: init */
int bufring_init(struct bufring *b, struct io_uring *ring, unsigned short bgid, unsigned count,
                 unsigned size)
{
    struct io_uring_buf_reg reg = {.ring_entries = count, .bgid = bgid};
    int ret;

    memset(b, 0, sizeof(*b));
    if (count == 0 || (count & (count - 1)) || count > 32768)
        return -EINVAL; /* the kernel wants a power of two, at most 2^15 */
    b->count = count;
    b->size = size;
    b->bgid = bgid;
    /* The descriptor ring must start on a page boundary: mmap gives that. */
    b->br_bytes = count * sizeof(struct io_uring_buf);
    b->br = mmap(NULL, b->br_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b->br == MAP_FAILED) {
        b->br = NULL;
        return -errno;
    }
    if (!(b->mem = malloc((size_t)count * size))) {
        ret = -ENOMEM;
        goto fail_unmap;
    }
    io_uring_buf_ring_init(b->br);
    reg.ring_addr = (unsigned long)b->br;
    if ((ret = io_uring_register_buf_ring(ring, &reg, 0)) < 0)
        goto fail_free;
    for (unsigned bid = 0; bid < count; bid++)
        bufring_give(b, bid);
    bufring_publish(b);
    return 0;

fail_free:
    free(b->mem);
fail_unmap:
    munmap(b->br, b->br_bytes);
    b->br = NULL;
    return ret;
}
/* end snippet */

void bufring_free(struct bufring *b, struct io_uring *ring)
{
    if (!b->br)
        return;
    io_uring_unregister_buf_ring(ring, b->bgid);
    munmap(b->br, b->br_bytes);
    free(b->mem);
    b->br = NULL;
}

/* snippet: give */
void bufring_give(struct bufring *b, unsigned bid)
{
    /* EXERCISE BEGIN bufring-give: stage buffer bid in the next free slot past the tail */
    /* Written past the tail, at offset `staged`: the kernel does not look
     * there until the tail moves. */
    io_uring_buf_ring_add(b->br, bufring_buf(b, bid), b->size, (unsigned short)bid,
                          io_uring_buf_ring_mask(b->count), (int)b->staged);
    b->staged++;
    /* EXERCISE END */
}

void bufring_publish(struct bufring *b)
{
    /* EXERCISE BEGIN bufring-give: move the tail past every staged buffer in one store */
    if (b->staged == 0)
        return;
    /* One store-release of the new tail hands all of them over. */
    io_uring_buf_ring_advance(b->br, (int)b->staged);
    b->in_kernel += b->staged;
    b->staged = 0;
    /* EXERCISE END */
}
/* end snippet */
