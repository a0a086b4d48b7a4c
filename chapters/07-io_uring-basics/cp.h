/* SPDX-License-Identifier: MIT */
/* cp.h: the state of uring-cp, shared by uring-cp.c (the copy itself) and
 * cp-setup.c (the files, the ring, the buffers, the statistics).
 */
#ifndef URING_CP_H
#define URING_CP_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CP_MAX_BLOCK    (64L << 20)
#define CP_DIRECT_ALIGN 4096 /* O_DIRECT wants offsets, lengths and buffers aligned */

/* One block of the file being copied: a read, then a write, of the same bytes. */
struct cp_block {
    uint64_t offset;   /* where the block starts, in both files */
    size_t len;        /* its bytes (the last block of the file may be shorter) */
    size_t read_done;  /* bytes read so far */
    size_t write_done; /* bytes written so far */
    unsigned inflight; /* its requests the kernel has not completed yet */
    bool linked;       /* its requests were a read+write pair (IOSQE_IO_LINK) */
    bool busy;         /* copying a block; false: free for the next one */
    char *buf;         /* block-sized; registered buffer number = block index */
};

struct cp {
    struct io_uring ring;
    int in, out;
    const char *src, *dst;
    uint64_t size, next_offset; /* bytes to copy; first byte no block has taken */
    unsigned depth, wait;       /* blocks in flight at most; -w (0: automatic) */
    unsigned active, inflight;  /* blocks busy now; requests not completed */
    size_t block;
    bool link, fixed, direct, verbose, failed;
    struct cp_block *blocks;
    char *bufs;
    struct { /* -v */
        unsigned long long enters, sqes, cqes, short_reads, short_writes, links_broken, sq_full;
    } st;
};

/* Print "uring-cp: MESSAGE" on stderr. Returns -1, for `return cp_error(...)`. */
__attribute__((format(printf, 1, 2))) int cp_error(const char *fmt, ...);
/* A size in bytes, with an optional k or m suffix, 1 to CP_MAX_BLOCK. 0 or -1. */
int cp_parse_size(const char *s, size_t *out);
/* Open SRC and DST, set up the ring and the buffers. 0, or -1 (reported). */
int cp_open(struct cp *cp);
/* Release what cp_open() got, whatever point it reached. */
void cp_close(struct cp *cp);
/* Register the buffers with the kernel (-f). 0, or -1 (reported). */
int cp_register_buffers(struct cp *cp);
/* The -v statistics, for a copy that took `seconds`. */
void cp_report(const struct cp *cp, double seconds);

#endif
