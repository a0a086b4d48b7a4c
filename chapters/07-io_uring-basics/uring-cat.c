/* SPDX-License-Identifier: MIT */
/* uring-cat.c: uring-cat-raw on liburing.
 *
 * This is uring-cat-raw.c from this chapter, changed only in who does the
 * ring work: the same rounds (DEPTH reads at consecutive offsets, one
 * io_uring_enter() to submit them and wait, then written out in file order
 * up to the first short read), with liburing in place of the raw_* helpers:
 *   io_uring_queue_init()    io_uring_setup() and the mmaps (raw_setup)
 *   io_uring_get_sqe()       a free SQE slot, or NULL when the SQ is full
 *   io_uring_prep_read()     fills the SQE (opcode, fd, addr, len, off)
 *   io_uring_submit_and_wait()  publishes the tail (release) and calls
 *                            io_uring_enter(to_submit, min_complete)
 *   io_uring_wait_cqe()      the next CQE, entering the kernel only if none is there
 *   io_uring_cqe_seen()      moves the CQ head (release): the slot is free again
 * Reading the two side by side is the point: nothing here is magic.
 *
 * Build and run, from the repository root:
 *     make -C chapters/07-io_uring-basics
 *     build/chapters/07-io_uring-basics/uring-cat /etc/os-release
 *
 * Needs Linux 5.6+ (IORING_OP_READ) and liburing. Exit status: 0 every file
 * copied, 1 an error (named on stderr), 2 bad arguments.
 */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CAT_MAX_DEPTH 256
#define CAT_MAX_BLOCK (16 * 1024 * 1024)

struct cat_opts {
    unsigned depth, block;
};

static void cat__usage(FILE *to)
{
    fprintf(to, "usage: uring-cat [-q DEPTH] [-b BLOCK] FILE...\n"
                "Copy each FILE to standard output with io_uring (liburing).\n"
                "  -q DEPTH  reads submitted together in one round (default 8, max 256)\n"
                "  -b BLOCK  bytes per read (default 65536)\n"
                "  -h        show this help\n");
}

/* snippet: round */
static int cat_read_round(struct io_uring *ring, int fd, char *bufs, uint64_t offset, int *res,
                          const struct cat_opts *o)
{
    struct io_uring_cqe *cqe;
    int ret;

    for (unsigned i = 0; i < o->depth; i++) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
        if (!sqe)
            return -EBUSY; /* cannot happen: the ring has DEPTH entries, all free */
        io_uring_prep_read(sqe, fd, bufs + (size_t)i * o->block, o->block,
                           offset + (uint64_t)i * o->block);
        io_uring_sqe_set_data64(sqe, i);
    }
    /* One io_uring_enter(): submit DEPTH reads, wait for DEPTH completions. */
    do {
        ret = io_uring_submit_and_wait(ring, o->depth);
    } while (ret == -EINTR);
    if (ret < 0)
        return ret;
    for (unsigned i = 0; i < o->depth; i++) {
        /* Usually all there already; if a signal cut the wait short, this waits. */
        do {
            ret = io_uring_wait_cqe(ring, &cqe);
        } while (ret == -EINTR);
        if (ret < 0)
            return ret;
        if (cqe->user_data >= o->depth)
            return -EPROTO;
        res[cqe->user_data] = cqe->res;
        io_uring_cqe_seen(ring, cqe);
    }
    return 0;
}
/* end snippet */

/* Copy one file to stdout. Returns 0, or -1 after reporting the error. */
static int cat_fd(struct io_uring *ring, int fd, const char *name, char *bufs,
                  const struct cat_opts *o)
{
    int res[CAT_MAX_DEPTH], ret;
    uint64_t offset = 0;

    for (;;) {
        if ((ret = cat_read_round(ring, fd, bufs, offset, res, o)) < 0) {
            fprintf(stderr, "uring-cat: io_uring_submit_and_wait(%u): %s\n", o->depth,
                    strerror(-ret));
            return -1;
        }
        for (unsigned i = 0; i < o->depth; i++) {
            ssize_t w;
            if (res[i] < 0) {
                fprintf(stderr, "uring-cat: read(%s, offset %llu): %s (cqe->res = %d)\n", name,
                        (unsigned long long)offset, strerror(-res[i]), res[i]);
                return -1;
            }
            if (res[i] == 0)
                return 0;
            w = net_write_all(STDOUT_FILENO, bufs + (size_t)i * o->block, (size_t)res[i]);
            if (w < 0) {
                fprintf(stderr, "uring-cat: write(stdout): %s\n", strerror((int)-w));
                return -1;
            }
            offset += (uint64_t)res[i];
            if ((unsigned)res[i] < o->block)
                break;
        }
    }
}

static int cat_file(struct io_uring *ring, const char *path, char *bufs, const struct cat_opts *o)
{
    struct stat st;
    int fd, ret;

    do {
        fd = open(path, O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        fprintf(stderr, "uring-cat: open(%s): %s\n", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
        fprintf(stderr, "uring-cat: %s: a pipe or socket has no offsets; use blocking-cat\n", path);
        close(fd);
        return -1;
    }
    ret = cat_fd(ring, fd, path, bufs, o);
    close(fd);
    return ret;
}

int main(int argc, char **argv)
{
    struct cat_opts o = {.depth = 8, .block = 65536};
    struct io_uring ring;
    char *bufs;
    long v;
    int opt, status = 0, ret;

    opterr = 0;
    while ((opt = getopt(argc, argv, "q:b:h")) != -1) {
        switch (opt) {
        case 'q':
            if (net_parse_int(optarg, 1, CAT_MAX_DEPTH, &v) < 0)
                goto usage;
            o.depth = (unsigned)v;
            break;
        case 'b':
            if (net_parse_int(optarg, 1, CAT_MAX_BLOCK, &v) < 0)
                goto usage;
            o.block = (unsigned)v;
            break;
        case 'h':
            cat__usage(stdout);
            return 0;
        default:
            goto usage;
        }
    }
    if (optind == argc) {
        fprintf(stderr, "uring-cat: no FILE given\n");
        goto usage;
    }
    if ((ret = io_uring_queue_init(o.depth, &ring, 0)) < 0) {
        fprintf(stderr, "uring-cat: io_uring_queue_init(%u): %s%s\n", o.depth, strerror(-ret),
                ret == -EPERM || ret == -ENOSYS ? " (io_uring is not allowed here: run make doctor)"
                                                : "");
        return 1;
    }
    /* calloc, not malloc: the kernel fills these through the ring, where
     * valgrind cannot see it (like strace, it sees io_uring_enter() and not
     * the I/O inside), and it would report the bytes as never written. */
    if (!(bufs = calloc(o.depth, o.block))) {
        fprintf(stderr, "uring-cat: no memory for %u buffers of %u bytes\n", o.depth, o.block);
        io_uring_queue_exit(&ring);
        return 1;
    }
    for (int i = optind; i < argc; i++)
        if (cat_file(&ring, argv[i], bufs, &o) < 0)
            status = 1;
    free(bufs);
    io_uring_queue_exit(&ring);
    return status;
usage:
    if (opt == 'q' || opt == 'b')
        fprintf(stderr, "uring-cat: bad value for -%c: %s\n", opt, optarg);
    else if (opt != -1)
        fprintf(stderr, "uring-cat: unknown option -%c\n", optopt);
    cat__usage(stderr);
    return 2;
}
