/* SPDX-License-Identifier: MIT */
/* uring-cp (exercise): copy a file with io_uring, DEPTH blocks in flight.
 *
 * The chapter's uring-cp in one file, without its options for linked
 * requests, registered buffers and O_DIRECT. The file is cut into blocks;
 * each of DEPTH slots copies one block at a time: a read, then a write of the
 * same bytes at the same offset, then the next block nobody has taken yet.
 * Every request queued since the last system call goes to the kernel in one
 * io_uring_enter(), which also waits for completions.
 *
 * Build and run, from the repository root:
 *     make -C exercises/07-io_uring-basics/uring-cp
 *     build/exercises/07-io_uring-basics/uring-cp/uring-cp -v -q 32 SRC DST
 *
 * Needs Linux 5.6+ and liburing. Exit status: 0 copied, 1 an error (named on
 * stderr), 2 bad arguments.
 */
#include "net.h"
#include "todo.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CP_MAX_DEPTH 4096
#define CP_MAX_BLOCK (64L << 20)

/* One slot: the block it is copying, and how far the copy has got. */
struct cp_block {
    uint64_t offset;   /* where the block starts, in both files */
    size_t len;        /* its bytes (the last block of the file may be shorter) */
    size_t read_done;  /* bytes read so far: buf[0, read_done) holds them */
    size_t write_done; /* bytes written so far */
    bool busy;         /* copying a block; false: retired, nothing left to take */
    char *buf;         /* len bytes at most */
};

struct cp {
    struct io_uring ring;
    int in, out;
    const char *src, *dst;
    uint64_t size;        /* bytes to copy */
    uint64_t next_offset; /* first byte no slot has taken yet */
    unsigned depth;       /* slots: blocks in flight at most */
    unsigned active;      /* slots busy now; the copy is over at 0 */
    unsigned inflight;    /* requests queued or submitted, not completed */
    size_t block;
    bool verbose, failed;
    struct cp_block *blocks;
    char *bufs;
    unsigned long long enters, sqes;
};

/* user_data layout: bit 0 is 1 for a write, 0 for a read; the bits above it
 * hold the slot's index. The kernel hands it back untouched in the CQE. */
static inline uint64_t cp__user_data(unsigned idx, bool write)
{
    return (uint64_t)idx << 1 | (write ? 1 : 0);
}

__attribute__((format(printf, 1, 2))) static int cp__error(const char *fmt, ...)
{
    va_list ap;

    fputs("uring-cp: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return -1;
}

/* One io_uring_enter(): hand over every SQE queued, wait for wait_nr CQEs. */
static void cp_submit(struct cp *cp, unsigned wait_nr)
{
    int ret;

    do {
        ret = io_uring_submit_and_wait(&cp->ring, wait_nr);
    } while (ret == -EINTR);
    if (ret < 0)
        net_die(-ret, "uring-cp: io_uring_submit_and_wait(%u)", wait_nr);
    cp->enters++;
    cp->sqes += (unsigned)ret;
}

/* Queue a read (or a write) of bytes [from, from + len) of slot idx's block:
 * the file offset and the buffer address both start `from` bytes in. */
static void cp_queue(struct cp *cp, unsigned idx, bool write, size_t from, size_t len)
{
    struct cp_block *b = &cp->blocks[idx];
    struct io_uring_sqe *sqe;

    /* NULL: the SQ is full of SQEs the kernel has not read yet. Submitting
     * frees the slots at once (the kernel reads SQEs inside the call). */
    while (!(sqe = io_uring_get_sqe(&cp->ring)))
        cp_submit(cp, 0);
    if (write)
        io_uring_prep_write(sqe, cp->out, b->buf + from, (unsigned)len, b->offset + from);
    else
        io_uring_prep_read(sqe, cp->in, b->buf + from, (unsigned)len, b->offset + from);
    io_uring_sqe_set_data64(sqe, cp__user_data(idx, write));
    cp->inflight++;
}

/* Slot idx has nothing more to do: the copy ends when no slot is busy. */
static void cp_retire(struct cp *cp, unsigned idx)
{
    if (cp->blocks[idx].busy)
        cp->active--;
    cp->blocks[idx].busy = false;
}

/* Say what failed: "read(SRC, offset N): Bad address (cqe->res = -14)". */
static void cp_report(const struct cp *cp, const struct cp_block *b, bool write, int res)
{
    cp__error("%s(%s, offset %llu): %s (cqe->res = %d)", write ? "write" : "read",
              write ? cp->dst : cp->src,
              (unsigned long long)(b->offset + (write ? b->write_done : b->read_done)),
              res < 0 ? strerror(-res)
              : write ? "wrote nothing"
                      : "end of file before its size",
              res);
}

/* Give slot idx the next block of the file (at cp->next_offset, at most
 * cp->block bytes) and queue its read; retire the slot once the whole file
 * has been given out. */
static void cp_start_block(struct cp *cp, unsigned idx)
{
    struct cp_block *b = &cp->blocks[idx];

    if (cp->failed) { /* after an error, only the requests in flight finish */
        cp_retire(cp, idx);
        return;
    }
    /* EXERCISE BEGIN: take the next block of the file for slot idx and queue its read */
    if (cp->next_offset >= cp->size) {
        cp_retire(cp, idx);
        return;
    }
    if (!b->busy)
        cp->active++;
    b->busy = true;
    b->offset = cp->next_offset;
    b->len = cp->size - b->offset < cp->block ? (size_t)(cp->size - b->offset) : cp->block;
    b->read_done = b->write_done = 0;
    cp->next_offset += b->len;
    cp_queue(cp, idx, false, 0, b->len);
    /* EXERCISE END */
}

/* One completion: the result of slot idx's read or write. An error is
 * reported (cp_report), stops the copy (cp->failed) and retires the slot.
 * Otherwise count the bytes; then ask for the rest of a short read or write,
 * write the block once it is all read, and start the next block once it is
 * all written. */
static void cp_on_cqe(struct cp *cp, const struct io_uring_cqe *cqe)
{
    unsigned idx = (unsigned)(cqe->user_data >> 1);
    bool write = cqe->user_data & 1;
    struct cp_block *b = &cp->blocks[idx];
    int res = cqe->res; /* bytes moved, or -errno */

    cp->inflight--;
    /* EXERCISE BEGIN: handle one completion: errors, short reads and writes, the next step */
    if (res < 0 || (res == 0 && (write || b->read_done < b->len))) {
        cp_report(cp, b, write, res); /* res 0 before the end: the file shrank */
        cp->failed = true;
        cp_retire(cp, idx);
        return;
    }
    if (write)
        b->write_done += (size_t)res;
    else
        b->read_done += (size_t)res;
    if (b->read_done < b->len) /* a short read: ask for the rest, where it stopped */
        cp_queue(cp, idx, false, b->read_done, b->len - b->read_done);
    else if (b->write_done < b->len) /* all read: write what is not written yet */
        cp_queue(cp, idx, true, b->write_done, b->len - b->write_done);
    else
        cp_start_block(cp, idx); /* copied: on to the next block */
    /* EXERCISE END */
}

/* Sleep for a quarter of the requests in flight: enough to batch, while
 * three quarters keep going. Never more than are in flight. */
static unsigned cp__wait_nr(const struct cp *cp)
{
    unsigned n = cp->inflight / 4;
    return n ? n : 1;
}

static void cp_run(struct cp *cp)
{
    struct io_uring_cqe *cqe;

    for (unsigned i = 0; i < cp->depth; i++)
        cp_start_block(cp, i); /* DEPTH reads queued: the first enter submits them all */
    while (cp->active > 0) {
        cp_submit(cp, cp__wait_nr(cp));
        while (io_uring_peek_cqe(&cp->ring, &cqe) == 0) {
            struct io_uring_cqe c = *cqe;
            io_uring_cqe_seen(&cp->ring, cqe);
            cp_on_cqe(cp, &c);
        }
    }
}

static int cp_open(struct cp *cp)
{
    struct stat st, dst_st;
    int ret;

    if ((cp->in = open(cp->src, O_RDONLY | O_CLOEXEC)) < 0)
        return cp__error("open(%s): %s", cp->src, strerror(errno));
    if (fstat(cp->in, &st) < 0 || !S_ISREG(st.st_mode))
        return cp__error("%s: not a regular file", cp->src);
    if (stat(cp->dst, &dst_st) == 0 && dst_st.st_dev == st.st_dev && dst_st.st_ino == st.st_ino)
        return cp__error("%s and %s are the same file", cp->src, cp->dst);
    if ((cp->out = open(cp->dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        return cp__error("open(%s): %s", cp->dst, strerror(errno));
    cp->size = (uint64_t)st.st_size;
    if ((ret = io_uring_queue_init(cp->depth, &cp->ring, 0)) < 0) {
        cp->ring.ring_fd = -1;
        return cp__error("io_uring_queue_init(%u): %s%s", cp->depth, strerror(-ret),
                         ret == -EPERM || ret == -ENOSYS
                             ? " (io_uring is not allowed here: run make doctor)"
                             : "");
    }
    if (!(cp->bufs = malloc(cp->depth * cp->block)) ||
        !(cp->blocks = calloc(cp->depth, sizeof(*cp->blocks))))
        return cp__error("no memory for %u blocks of %zu bytes", cp->depth, cp->block);
    for (unsigned i = 0; i < cp->depth; i++)
        cp->blocks[i].buf = cp->bufs + (size_t)i * cp->block;
    return 0;
}

static void cp_close(struct cp *cp)
{
    if (cp->ring.ring_fd >= 0)
        io_uring_queue_exit(&cp->ring);
    free(cp->blocks);
    free(cp->bufs);
    if (cp->out >= 0)
        close(cp->out);
    if (cp->in >= 0)
        close(cp->in);
}

static int cp__parse_size(const char *s, size_t *out)
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

static void cp__usage(FILE *to)
{
    fprintf(to, "usage: uring-cp [-q DEPTH] [-b SIZE] [-v] SRC DST\n"
                "Copy SRC to DST with io_uring, DEPTH blocks in flight.\n"
                "  -q DEPTH  blocks in flight (default 32, max 4096)\n"
                "  -b SIZE   bytes per block, k/m suffixes allowed (default 128k, max 64m)\n"
                "  -v        SQEs and io_uring_enter() calls on stderr\n"
                "  -h        show this help\n");
}

int main(int argc, char **argv)
{
    struct cp cp = {.in = -1, .out = -1, .depth = 32, .block = 128 * 1024};
    long v;
    int opt, status;

    cp.ring.ring_fd = -1;
    opterr = 0;
    while ((opt = getopt(argc, argv, ":q:b:vh")) != -1) {
        switch (opt) {
        case 'q':
            if (net_parse_int(optarg, 1, CP_MAX_DEPTH, &v) < 0)
                goto bad_value;
            cp.depth = (unsigned)v;
            break;
        case 'b':
            if (cp__parse_size(optarg, &cp.block) < 0)
                goto bad_value;
            break;
        case 'v':
            cp.verbose = true;
            break;
        case 'h':
            cp__usage(stdout);
            return 0;
        case ':':
            cp__error("option -%c needs a value", optopt);
            goto usage;
        default:
            cp__error("unknown option -%c", optopt);
            goto usage;
        }
    }
    if (argc - optind != 2) {
        cp__error("expected SRC and DST");
        goto usage;
    }
    cp.src = argv[optind];
    cp.dst = argv[optind + 1];
    if (cp_open(&cp) < 0) {
        cp_close(&cp);
        return 1;
    }
    cp_run(&cp);
    if (cp.verbose)
        fprintf(stderr, "uring-cp: %llu bytes, %llu SQEs in %llu io_uring_enter() calls\n",
                (unsigned long long)cp.size, cp.sqes, cp.enters);
    status = cp.failed ? 1 : 0;
    cp_close(&cp);
    return status;
bad_value:
    cp__error("bad value for -%c: %s", opt, optarg);
usage:
    cp__usage(stderr);
    return 2;
}
