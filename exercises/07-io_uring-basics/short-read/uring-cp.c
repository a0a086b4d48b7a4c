/* SPDX-License-Identifier: MIT */
/* uring-cp.c: copy a file with io_uring, many requests in flight.
 *
 * cp with a queue depth. The file is cut into blocks; up to DEPTH of them are
 * being copied at once, each one a read and then a write at the same offset.
 * A read()/write() loop (blocking-cat, chapter 01) has one request in flight
 * and makes two system calls per block. Here every request queued since the
 * last system call goes to the kernel in one io_uring_enter(), which also
 * waits for the next completions: one call per batch, not per block.
 *
 *   -q DEPTH  blocks in flight (default 32)
 *   -b SIZE   bytes per block, k and m suffixes allowed (default 128k)
 *   -w WAIT   completions to wait for in each io_uring_enter() (default: a
 *             quarter of the requests in flight): batching against waiting
 *   -l        link each block's write to its read (IOSQE_IO_LINK): the kernel
 *             starts the write when the read is done, with no trip back to
 *             us. A short read breaks the link (the write completes with
 *             -ECANCELED); the block is then finished unlinked.
 *   -f        registered ("fixed") buffers: io_uring_register_buffers() once,
 *             then READ_FIXED/WRITE_FIXED, so the kernel does not have to
 *             look up and pin the buffer's pages for every request.
 *   -d        O_DIRECT on the source: reads bypass the page cache.
 *   -v        statistics on stderr: time, throughput, SQEs per io_uring_enter().
 *
 * Build and run, from the repository root:
 *     make -C chapters/07-io_uring-basics
 *     head -c 64M /dev/urandom > /tmp/big
 *     build/chapters/07-io_uring-basics/uring-cp -v -q 32 /tmp/big /tmp/big.copy
 *
 * Needs Linux 5.6+ (IORING_OP_READ/WRITE) and liburing. Exit status: 0 copied,
 * 1 an error (named on stderr), 2 bad arguments.
 */
#include "clock.h"
#include "cp.h"
#include "net.h"

#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define CP_MAX_DEPTH 4096

/* user_data layout: bit 0 is 1 for a write, 0 for a read; the bits above it
 * hold the block's index. It is 64 bits the kernel hands back untouched. */
static inline uint64_t cp__user_data(unsigned idx, bool write)
{
    return (uint64_t)idx << 1 | (write ? 1 : 0);
}

static void cp__usage(FILE *to)
{
    fprintf(to, "usage: uring-cp [-q DEPTH] [-b SIZE] [-w WAIT] [-l] [-f] [-d] [-v] SRC DST\n"
                "Copy SRC to DST with io_uring, DEPTH blocks in flight.\n"
                "  -q DEPTH  blocks in flight (default 32, max 4096)\n"
                "  -b SIZE   bytes per block, k/m suffixes allowed (default 128k, max 64m)\n"
                "  -w WAIT   completions to wait for per io_uring_enter() (default: a quarter\n"
                "            of the requests in flight, at least 1)\n"
                "  -l        link each write to its read (IOSQE_IO_LINK)\n"
                "  -f        registered buffers (READ_FIXED/WRITE_FIXED)\n"
                "  -d        O_DIRECT reads (SIZE must be a multiple of 4096)\n"
                "  -v        time, throughput and io_uring_enter() statistics on stderr\n"
                "  -h        show this help\n");
}

/* One io_uring_enter(): hand over every SQE queued, wait for wait_nr CQEs. */
static void cp__submit(struct cp *cp, unsigned wait_nr)
{
    int ret;

    do {
        ret = io_uring_submit_and_wait(&cp->ring, wait_nr);
    } while (ret == -EINTR); /* nothing was submitted: try again */
    if (ret < 0)
        net_die(-ret, "uring-cp: io_uring_submit_and_wait(%u)", wait_nr);
    cp->st.enters++;
    cp->st.sqes += (unsigned)ret;
}

static struct io_uring_sqe *cp__get_sqe(struct cp *cp)
{
    struct io_uring_sqe *sqe;

    /* NULL: every SQ slot holds an SQE the kernel has not read yet. Submit
     * them; the kernel reads them inside io_uring_enter(), so the slots are
     * free when it returns, long before those requests complete. Retry. */
    while (!(sqe = io_uring_get_sqe(&cp->ring))) {
        cp->st.sq_full++;
        cp__submit(cp, 0);
    }
    return sqe;
}

/* Queue a read (or a write) of bytes [from, from + len) of block idx. */
static void cp__queue(struct cp *cp, unsigned idx, bool write, size_t from, size_t len,
                      unsigned sqe_flags)
{
    struct cp_block *b = &cp->blocks[idx];
    struct io_uring_sqe *sqe = cp__get_sqe(cp);
    int fd = write ? cp->out : cp->in;
    uint64_t off = b->offset + from;

    if (cp->fixed && write)
        io_uring_prep_write_fixed(sqe, fd, b->buf + from, (unsigned)len, off, (int)idx);
    else if (cp->fixed)
        io_uring_prep_read_fixed(sqe, fd, b->buf + from, (unsigned)len, off, (int)idx);
    else if (write)
        io_uring_prep_write(sqe, fd, b->buf + from, (unsigned)len, off);
    else
        io_uring_prep_read(sqe, fd, b->buf + from, (unsigned)len, off);
    sqe->flags |= sqe_flags;
    io_uring_sqe_set_data64(sqe, cp__user_data(idx, write));
    b->inflight++;
    cp->inflight++;
}

/* How much to ask for to read the last `left` bytes of a block: O_DIRECT reads
 * whole sectors, and the kernel stops at the end of the file (a short read). */
static size_t cp__read_len(const struct cp *cp, size_t left)
{
    return cp->direct ? (left + CP_DIRECT_ALIGN - 1) / CP_DIRECT_ALIGN * CP_DIRECT_ALIGN : left;
}

/* Give block idx the next part of the file, or retire it if there is none. */
static void cp__start_block(struct cp *cp, unsigned idx)
{
    struct cp_block *b = &cp->blocks[idx];

    if (cp->failed || cp->next_offset >= cp->size) {
        if (b->busy)
            cp->active--;
        b->busy = false;
        return;
    }
    if (!b->busy)
        cp->active++;
    b->busy = true;
    b->offset = cp->next_offset;
    b->len = cp->size - b->offset < cp->block ? (size_t)(cp->size - b->offset) : cp->block;
    b->read_done = b->write_done = 0;
    cp->next_offset += b->len;
    b->linked = cp->link;
    if (!cp->link) {
        cp__queue(cp, idx, false, 0, cp__read_len(cp, b->len), 0);
        return;
    }
    /* A chain ends with its submission: if only the read got in before an
     * SQ-full submit, the write would run on its own, whatever the read did.
     * So make room for both first. */
    if (io_uring_sq_space_left(&cp->ring) < 2) {
        cp->st.sq_full++;
        cp__submit(cp, 0);
    }
    cp__queue(cp, idx, false, 0, cp__read_len(cp, b->len), IOSQE_IO_LINK);
    cp__queue(cp, idx, true, 0, b->len, 0);
}

/* A block's requests have all completed: what does it need next? */
static void cp__advance(struct cp *cp, unsigned idx)
{
    struct cp_block *b = &cp->blocks[idx];

    b->linked = false; /* whatever is left of this block goes unlinked */
    if (cp->failed)
        cp__start_block(cp, idx);   /* retires it */
    else if (b->write_done < b->len) /* all read: write what is not written yet */
        cp__queue(cp, idx, true, b->write_done, b->len - b->write_done, 0);
    else
        cp__start_block(cp, idx); /* copied: on to the next block of the file */
}

static void cp__on_cqe(struct cp *cp, const struct io_uring_cqe *cqe)
{
    unsigned idx = (unsigned)(cqe->user_data >> 1);
    bool write = cqe->user_data & 1;
    struct cp_block *b = &cp->blocks[idx];
    int res = cqe->res; /* bytes moved, or -errno: io_uring never sets errno */

    b->inflight--;
    cp->inflight--;
    if (write && res == -ECANCELED && b->linked) {
        cp->st.links_broken++; /* its read was short: the kernel did not start it */
    } else if (res < 0 || (res == 0 && write) ||
               (res == 0 && b->read_done < b->len)) { /* EOF early: the file shrank */
        fprintf(stderr, "uring-cp: %s(%s, offset %llu): %s (cqe->res = %d)\n",
                write ? "write" : "read", write ? cp->dst : cp->src,
                (unsigned long long)(b->offset + (write ? b->write_done : b->read_done)),
                res < 0 ? strerror(-res)
                : write ? "wrote nothing"
                        : "end of file before its size",
                res);
        cp->failed = true; /* no new requests; the ones in flight still complete */
    } else if (write) {
        b->write_done += (size_t)res;
        cp->st.short_writes += b->write_done < b->len;
    } else {
        b->read_done += (size_t)res;
        if (b->read_done > b->len) /* an O_DIRECT read of a file that grew meanwhile */
            b->read_done = b->len;
        cp->st.short_reads += b->read_done < b->len;
    }
    if (b->inflight == 0)
        cp__advance(cp, idx);
}

/* How many completions to sleep for in one io_uring_enter(). One returns as
 * soon as anything finishes: the least waiting, the most system calls. All of
 * them is the other extreme: the queue drains and nothing new starts while
 * the slowest request finishes. A quarter keeps three quarters of the
 * requests going while we sleep. Never more than are in flight, or the wait
 * would never end. */
static unsigned cp__wait_nr(const struct cp *cp)
{
    unsigned n = cp->wait ? cp->wait : cp->inflight / 4;

    if (n > cp->inflight)
        n = cp->inflight;
    return n ? n : 1;
}

static void cp_run(struct cp *cp)
{
    struct io_uring_cqe *cqe;

    for (unsigned i = 0; i < cp->depth; i++)
        cp__start_block(cp, i); /* up to DEPTH blocks in flight */
    while (cp->active > 0) {
        /* One system call: submit everything queued since the last one,
         * and sleep until some of the requests in flight have completed. */
        cp__submit(cp, cp__wait_nr(cp));
        /* Then take every completion that is there, without entering the kernel. */
        while (io_uring_peek_cqe(&cp->ring, &cqe) == 0) {
            struct io_uring_cqe c = *cqe;
            io_uring_cqe_seen(&cp->ring, cqe); /* the slot is the kernel's again */
            cp->st.cqes++;
            cp__on_cqe(cp, &c); /* may queue the block's next request */
        }
    }
}

int cp_register_buffers(struct cp *cp)
{
    struct iovec *iov = calloc(cp->depth, sizeof(*iov));
    int ret;

    if (!iov)
        return cp_error("no memory for %u iovecs", cp->depth);
    for (unsigned i = 0; i < cp->depth; i++)
        iov[i] = (struct iovec){.iov_base = cp->blocks[i].buf, .iov_len = cp->block};
    /* Once, up front: the kernel pins these pages and keeps them mapped, so
     * a READ_FIXED/WRITE_FIXED names buffer i instead of handing over an
     * address to look up and pin again for every request. */
    ret = io_uring_register_buffers(&cp->ring, iov, cp->depth);
    free(iov);
    if (ret == -ENOMEM)
        return cp_error("io_uring_register_buffers(%u x %zu bytes): %s (pinned memory counts "
                        "against ulimit -l, unless the process has CAP_IPC_LOCK)",
                        cp->depth, cp->block, strerror(-ret));
    if (ret < 0)
        return cp_error("io_uring_register_buffers(%u x %zu bytes): %s", cp->depth, cp->block,
                        strerror(-ret));
    return 0;
}

int main(int argc, char **argv)
{
    struct cp cp = {.in = -1, .out = -1, .depth = 32, .block = 128 * 1024};
    long v;
    int opt, status;
    double t0;

    cp.ring.ring_fd = -1;
    opterr = 0;
    while ((opt = getopt(argc, argv, ":q:b:w:lfdvh")) != -1) {
        switch (opt) {
        case 'q':
            if (net_parse_int(optarg, 1, CP_MAX_DEPTH, &v) < 0)
                goto bad_value;
            cp.depth = (unsigned)v;
            break;
        case 'b':
            if (cp_parse_size(optarg, &cp.block) < 0)
                goto bad_value;
            break;
        case 'w':
            if (net_parse_int(optarg, 1, 2 * CP_MAX_DEPTH, &v) < 0)
                goto bad_value;
            cp.wait = (unsigned)v;
            break;
        case 'l':
            cp.link = true;
            break;
        case 'f':
            cp.fixed = true;
            break;
        case 'd':
            cp.direct = true;
            break;
        case 'v':
            cp.verbose = true;
            break;
        case 'h':
            cp__usage(stdout);
            return 0;
        case ':':
            cp_error("option -%c needs a value", optopt);
            goto usage;
        default:
            cp_error("unknown option -%c", optopt);
            goto usage;
        }
    }
    if (argc - optind != 2) {
        cp_error("expected SRC and DST");
        goto usage;
    }
    if (cp.direct && cp.block % CP_DIRECT_ALIGN) {
        cp_error("-d (O_DIRECT) needs a block size that is a multiple of %d", CP_DIRECT_ALIGN);
        goto usage;
    }
    cp.src = argv[optind];
    cp.dst = argv[optind + 1];
    if (cp_open(&cp) < 0 || (cp.fixed && cp_register_buffers(&cp) < 0)) {
        cp_close(&cp);
        return 1;
    }
    t0 = clock_now_s();
    cp_run(&cp);
    if (cp.verbose)
        cp_report(&cp, clock_now_s() - t0);
    status = cp.failed ? 1 : 0;
    cp_close(&cp);
    return status;
bad_value:
    cp_error("bad value for -%c: %s", opt, optarg);
usage:
    cp__usage(stderr);
    return 2;
}
