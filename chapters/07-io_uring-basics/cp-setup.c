/* SPDX-License-Identifier: MIT */
/* cp-setup.c: the parts of uring-cp that are not about io_uring requests:
 * opening the files, creating the ring and the buffers, the statistics.
 */
#include "cp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cp_error(const char *fmt, ...)
{
    va_list ap;

    fputs("uring-cp: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return -1;
}

int cp_parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (end == s || errno)
        return -1;
    if (*end == 'k' || *end == 'K')
        v <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        v <<= 20, end++;
    if (*end || v < 1 || v > (unsigned long long)CP_MAX_BLOCK)
        return -1;
    *out = (size_t)v;
    return 0;
}

/* Open both files, the ring and the buffers. Returns 0, or -1 (reported). */
int cp_open(struct cp *cp)
{
    struct io_uring_params p = {0};
    struct stat st, dst_st;
    int ret;

    if ((cp->in = open(cp->src, O_RDONLY | O_CLOEXEC | (cp->direct ? O_DIRECT : 0))) < 0)
        return cp_error("open(%s%s): %s", cp->src, cp->direct ? ", O_DIRECT" : "", strerror(errno));
    if (fstat(cp->in, &st) < 0 || !S_ISREG(st.st_mode))
        return cp_error("%s: not a regular file", cp->src);
    if (stat(cp->dst, &dst_st) == 0 && dst_st.st_dev == st.st_dev && dst_st.st_ino == st.st_ino)
        return cp_error("%s and %s are the same file", cp->src, cp->dst);
    if ((cp->out = open(cp->dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        return cp_error("open(%s): %s", cp->dst, strerror(errno));
    cp->size = (uint64_t)st.st_size;

    /* SQ: one entry per block in flight, at least 2 (a linked pair needs
     * two, so -l fills it: the SQ-full path runs). CQ: room for every
     * request that can be in flight, 2 per block. */
    p.flags = IORING_SETUP_CQSIZE;
    p.cq_entries = 2 * cp->depth;
    if ((ret = io_uring_queue_init_params(cp->depth < 2 ? 2 : cp->depth, &cp->ring, &p)) < 0) {
        cp->ring.ring_fd = -1;
        return cp_error("io_uring_queue_init(%u): %s%s", cp->depth, strerror(-ret),
                        ret == -EPERM || ret == -ENOSYS
                            ? " (io_uring is not allowed here: run make doctor)"
                            : "");
    }
    if (posix_memalign((void **)&cp->bufs, CP_DIRECT_ALIGN, cp->depth * cp->block) != 0 ||
        !(cp->blocks = calloc(cp->depth, sizeof(*cp->blocks))))
        return cp_error("no memory for %u blocks of %zu bytes", cp->depth, cp->block);
    for (unsigned i = 0; i < cp->depth; i++)
        cp->blocks[i].buf = cp->bufs + (size_t)i * cp->block;
    return 0;
}

void cp_close(struct cp *cp)
{
    if (cp->ring.ring_fd >= 0)
        io_uring_queue_exit(&cp->ring); /* also drops the registered buffers */
    free(cp->blocks);
    free(cp->bufs);
    if (cp->out >= 0)
        close(cp->out);
    if (cp->in >= 0)
        close(cp->in);
}

void cp_report(const struct cp *cp, double seconds)
{
    fprintf(stderr,
            "uring-cp: copied %llu bytes in %.3f s: %.1f MiB/s (queue depth %u, block %zu%s%s%s)\n",
            (unsigned long long)cp->size, seconds,
            seconds > 0 ? (double)cp->size / (1 << 20) / seconds : 0.0, cp->depth, cp->block,
            cp->link ? ", linked" : "", cp->fixed ? ", registered buffers" : "",
            cp->direct ? ", O_DIRECT reads" : "");
    fprintf(stderr,
            "uring-cp: %llu SQEs in %llu io_uring_enter() calls: %.1f per call; %llu CQEs\n",
            cp->st.sqes, cp->st.enters,
            cp->st.enters ? (double)cp->st.sqes / (double)cp->st.enters : 0.0, cp->st.cqes);
    fprintf(stderr,
            "uring-cp: short reads %llu, short writes %llu, links broken %llu, SQ full %llu\n",
            cp->st.short_reads, cp->st.short_writes, cp->st.links_broken, cp->st.sq_full);
}
