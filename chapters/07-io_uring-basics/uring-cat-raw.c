/* SPDX-License-Identifier: MIT */
/* uring-cat-raw.c: cat with io_uring and nothing else: no liburing, only the
 * three system calls and the memory they share with the kernel.
 *
 * What it shows, in the order the code does it:
 *   - io_uring_setup(2) creates the instance and fills struct io_uring_params
 *     with the ring sizes and the offset of every field inside the rings;
 *   - mmap(2) maps the SQ ring, the CQ ring and the array of SQEs. A kernel
 *     with IORING_FEAT_SINGLE_MMAP (5.4+) puts both rings in one mapping;
 *   - the program fills SQEs and moves the SQ tail; the kernel moves the SQ
 *     head as it reads them. The kernel fills CQEs and moves the CQ tail; the
 *     program moves the CQ head as it reads them. Every index has exactly one
 *     writer, and a release store paired with an acquire load publishes it;
 *   - io_uring_enter(2) is the one system call of a batch: "here are N new
 *     SQEs; come back when M completions are there".
 *
 * The file is read in rounds: DEPTH reads of BLOCK bytes at consecutive
 * offsets, handed over and waited for in one io_uring_enter(), then written
 * to standard output in file order. Completions arrive in any order, so each
 * read carries its slot number in user_data. A read that returns less than
 * BLOCK ends the round there: 0 is the end of the file, anything else is a
 * short read, and the next round starts at the first byte not yet read.
 * uring-cat.c is the same program on liburing.
 *
 * Build and run, from the repository root:
 *     make -C chapters/07-io_uring-basics
 *     build/chapters/07-io_uring-basics/uring-cat-raw -v /etc/os-release
 *
 * Needs Linux 5.6+ (IORING_OP_READ). Exit status: 0 every file copied, 1 an
 * error (named on stderr), 2 bad arguments.
 */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CAT_MAX_DEPTH 256
#define CAT_MAX_BLOCK (16 * 1024 * 1024)

/* The rings as this process sees them: pointers into the shared mappings. */
struct raw_ring {
    int fd;
    /* SQ ring: the kernel writes head, we write tail and the array. */
    unsigned *sq_head, *sq_tail, *sq_mask, *sq_array, sq_entries;
    struct io_uring_sqe *sqes;
    /* CQ ring: the kernel writes tail and the CQEs, we write head. */
    unsigned *cq_head, *cq_tail, *cq_mask;
    struct io_uring_cqe *cqes;
    /* what to munmap() */
    void *sq_map, *cq_map;
    size_t sq_map_len, cq_map_len, sqes_len;
};

struct cat_opts {
    unsigned depth, block;
    bool verbose;
};

static void cat__usage(FILE *to)
{
    fprintf(to, "usage: uring-cat-raw [-q DEPTH] [-b BLOCK] [-v] FILE...\n"
                "Copy each FILE to standard output with io_uring, using only the raw system\n"
                "calls (io_uring_setup, mmap, io_uring_enter).\n"
                "  -q DEPTH  reads submitted together in one round (default 8, max 256)\n"
                "  -b BLOCK  bytes per read (default 65536)\n"
                "  -v        describe the rings, then every io_uring_enter(), on stderr\n"
                "  -h        show this help\n");
}

/* snippet: setup */
static int raw_setup(struct raw_ring *r, unsigned entries, bool verbose)
{
    struct io_uring_params p;
    int err;

    memset(r, 0, sizeof(*r));
    memset(&p, 0, sizeof(p)); /* flags 0: interrupt-driven, no SQ thread */
    r->fd = (int)syscall(__NR_io_uring_setup, entries, &p);
    if (r->fd < 0)
        return -errno;

    /* Each ring is a header (head, tail, mask...) followed by its entries;
     * the kernel says where each field is, in p.sq_off and p.cq_off. */
    r->sq_map_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    r->cq_map_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    if (p.features & IORING_FEAT_SINGLE_MMAP) {
        /* 5.4+: both rings live in one region, mapped once. */
        if (r->cq_map_len > r->sq_map_len)
            r->sq_map_len = r->cq_map_len;
        r->cq_map_len = 0;
    }
    r->sq_map = mmap(NULL, r->sq_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
                     IORING_OFF_SQ_RING);
    if (r->sq_map == MAP_FAILED)
        goto fail;
    r->cq_map = r->sq_map;
    if (r->cq_map_len) {
        r->cq_map = mmap(NULL, r->cq_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                         r->fd, IORING_OFF_CQ_RING);
        if (r->cq_map == MAP_FAILED)
            goto fail;
    }
    /* The SQEs themselves are a separate array; the SQ ring holds indexes into it. */
    r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
    r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
                   IORING_OFF_SQES);
    if (r->sqes == MAP_FAILED)
        goto fail;

    r->sq_head = (unsigned *)((char *)r->sq_map + p.sq_off.head);
    r->sq_tail = (unsigned *)((char *)r->sq_map + p.sq_off.tail);
    r->sq_mask = (unsigned *)((char *)r->sq_map + p.sq_off.ring_mask);
    r->sq_array = (unsigned *)((char *)r->sq_map + p.sq_off.array);
    r->sq_entries = p.sq_entries;
    r->cq_head = (unsigned *)((char *)r->cq_map + p.cq_off.head);
    r->cq_tail = (unsigned *)((char *)r->cq_map + p.cq_off.tail);
    r->cq_mask = (unsigned *)((char *)r->cq_map + p.cq_off.ring_mask);
    r->cqes = (struct io_uring_cqe *)((char *)r->cq_map + p.cq_off.cqes);
    if (verbose)
        fprintf(stderr,
                "uring-cat-raw: io_uring_setup(%u) = fd %d: %u SQ entries, %u CQ entries, "
                "features 0x%x; rings in %s\n",
                entries, r->fd, p.sq_entries, p.cq_entries, p.features,
                r->cq_map == r->sq_map ? "one mmap (IORING_FEAT_SINGLE_MMAP)" : "two mmaps");
    return 0;
fail:
    err = errno;
    if (r->cq_map && r->cq_map != MAP_FAILED && r->cq_map != r->sq_map)
        munmap(r->cq_map, r->cq_map_len);
    if (r->sq_map && r->sq_map != MAP_FAILED)
        munmap(r->sq_map, r->sq_map_len);
    close(r->fd);
    return -err;
}
/* end snippet */

static void raw_free(struct raw_ring *r)
{
    munmap(r->sqes, r->sqes_len);
    if (r->cq_map != r->sq_map)
        munmap(r->cq_map, r->cq_map_len);
    munmap(r->sq_map, r->sq_map_len);
    close(r->fd);
}

/* Queue one read. Returns false when the SQ is full. */
/* snippet: sq-push */
static bool raw_queue_read(struct raw_ring *r, int fd, void *buf, unsigned len, uint64_t offset,
                           uint64_t user_data)
{
    /* Our own index: only this thread writes it, so a plain load is enough. */
    unsigned tail = *r->sq_tail;
    /* The kernel's index. Acquire: once we see it move past a slot, the
     * kernel has finished reading that SQE, and we may overwrite it. */
    unsigned head = __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
    unsigned idx = tail & *r->sq_mask;
    struct io_uring_sqe *sqe = &r->sqes[idx];

    if (tail - head == r->sq_entries)
        return false; /* every slot holds an SQE the kernel has not read yet */
    memset(sqe, 0, sizeof(*sqe));
    sqe->opcode = IORING_OP_READ; /* pread(fd, buf, len, offset), as a request */
    sqe->fd = fd;
    sqe->addr = (uint64_t)(uintptr_t)buf;
    sqe->len = len;
    sqe->off = offset;
    sqe->user_data = user_data; /* comes back untouched in the CQE */
    r->sq_array[idx] = idx;     /* the ring holds SQE indexes; ours are 1:1 */
    /* Release: the SQE and the array slot written above are visible to the
     * kernel before the new tail is. Without it, a CPU (or the compiler)
     * could publish the tail first, and the kernel would read a half-written SQE. */
    __atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
    return true;
}
/* end snippet */

/* Hand `to_submit` new SQEs to the kernel and wait for `min_complete` CQEs.
 * Returns how many SQEs the kernel consumed, or -errno. */
/* snippet: enter */
static int raw_enter(struct raw_ring *r, unsigned to_submit, unsigned min_complete)
{
    for (;;) {
        long ret = syscall(__NR_io_uring_enter, r->fd, to_submit, min_complete,
                           min_complete ? IORING_ENTER_GETEVENTS : 0, NULL, 0);
        if (ret >= 0)
            return (int)ret;
        /* -EINTR comes back only when nothing was submitted: a signal cut
         * the wait short. Submitting again is exact, not a duplicate. */
        if (errno != EINTR)
            return -errno;
    }
}
/* end snippet */

/* Take every CQE that is there. res[slot] gets each result. Returns how many. */
/* snippet: cq-reap */
static int raw_reap(struct raw_ring *r, int *res, unsigned nslots)
{
    unsigned head = *r->cq_head; /* ours: only we write it */
    /* Acquire: pairs with the kernel's release store of the tail, so the
     * CQEs before it are fully written when we read them. */
    unsigned tail = __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE);
    int n = 0;

    for (; head != tail; head++, n++) {
        const struct io_uring_cqe *cqe = &r->cqes[head & *r->cq_mask];
        if (cqe->user_data >= nslots)
            return -EPROTO;             /* not a user_data we ever submitted */
        res[cqe->user_data] = cqe->res; /* bytes read, or -errno */
    }
    /* Release: our reads of those CQEs are done before the kernel sees the
     * slots free and may write new CQEs into them. */
    __atomic_store_n(r->cq_head, head, __ATOMIC_RELEASE);
    return n;
}
/* end snippet */

/* One round: queue DEPTH reads at consecutive offsets, hand them over and
 * wait for all of them. One io_uring_enter() does both, unless a signal cuts
 * the wait short. res[i] gets the result of read i. Returns 0 or -errno. */
/* snippet: round */
static int raw_read_round(struct raw_ring *r, int fd, char *bufs, uint64_t offset, int *res,
                          const struct cat_opts *o)
{
    unsigned queued = 0, done = 0;

    for (unsigned i = 0; i < o->depth; i++) {
        /* The ring has at least DEPTH entries and is empty between rounds. */
        if (!raw_queue_read(r, fd, bufs + (size_t)i * o->block, o->block,
                            offset + (uint64_t)i * o->block, i))
            return -EBUSY;
        queued++;
    }
    while (done < o->depth) {
        int ret = raw_enter(r, queued, o->depth - done);
        if (ret < 0)
            return ret;
        if (o->verbose)
            fprintf(stderr,
                    "uring-cat-raw: io_uring_enter(fd=%d, to_submit=%u, min_complete=%u, "
                    "IORING_ENTER_GETEVENTS) = %d\n",
                    r->fd, queued, o->depth - done, ret);
        queued -= (unsigned)ret; /* the kernel read that many SQEs */
        if ((ret = raw_reap(r, res, o->depth)) < 0)
            return ret;
        done += (unsigned)ret;
    }
    return 0;
}
/* end snippet */

/* Copy one file to stdout. Returns 0, or -1 after reporting the error. */
/* snippet: copy */
static int cat_fd(struct raw_ring *r, int fd, const char *name, char *bufs,
                  const struct cat_opts *o)
{
    int res[CAT_MAX_DEPTH], ret;
    uint64_t offset = 0;

    for (;;) {
        if ((ret = raw_read_round(r, fd, bufs, offset, res, o)) < 0) {
            fprintf(stderr, "uring-cat-raw: io_uring_enter(fd=%d): %s\n", r->fd, strerror(-ret));
            return -1;
        }
        /* Write the reads out in file order, up to the first one that came back short. */
        for (unsigned i = 0; i < o->depth; i++) {
            ssize_t w;
            if (res[i] < 0) { /* the error of a request is its result: -errno */
                fprintf(stderr, "uring-cat-raw: read(%s, offset %llu): %s (cqe->res = %d)\n", name,
                        (unsigned long long)offset, strerror(-res[i]), res[i]);
                return -1;
            }
            if (res[i] == 0)
                return 0; /* end of file: the only meaning of 0 */
            w = net_write_all(STDOUT_FILENO, bufs + (size_t)i * o->block, (size_t)res[i]);
            if (w < 0) {
                fprintf(stderr, "uring-cat-raw: write(stdout): %s\n", strerror((int)-w));
                return -1;
            }
            offset += (uint64_t)res[i];
            if ((unsigned)res[i] < o->block)
                break; /* short: the next round starts at the first byte not read */
        }
    }
}
/* end snippet */

static int cat_file(struct raw_ring *r, const char *path, char *bufs, const struct cat_opts *o)
{
    struct stat st;
    int fd, ret;

    do {
        fd = open(path, O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        fprintf(stderr, "uring-cat-raw: open(%s): %s\n", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
        /* Reads at an offset on a pipe all read "the next bytes", in any order. */
        fprintf(stderr, "uring-cat-raw: %s: a pipe or socket has no offsets; use blocking-cat\n",
                path);
        close(fd);
        return -1;
    }
    ret = cat_fd(r, fd, path, bufs, o);
    close(fd);
    return ret;
}

static int cat__parse_size(const char *s, long min, long max, unsigned *out)
{
    long v;
    if (net_parse_int(s, min, max, &v) < 0)
        return -1;
    *out = (unsigned)v;
    return 0;
}

int main(int argc, char **argv)
{
    struct cat_opts o = {.depth = 8, .block = 65536, .verbose = false};
    struct raw_ring ring;
    char *bufs;
    int opt, status = 0, ret;

    opterr = 0;
    while ((opt = getopt(argc, argv, "q:b:vh")) != -1) {
        switch (opt) {
        case 'q':
            if (cat__parse_size(optarg, 1, CAT_MAX_DEPTH, &o.depth) < 0)
                goto usage;
            break;
        case 'b':
            if (cat__parse_size(optarg, 1, CAT_MAX_BLOCK, &o.block) < 0)
                goto usage;
            break;
        case 'v':
            o.verbose = true;
            break;
        case 'h':
            cat__usage(stdout);
            return 0;
        default:
            goto usage;
        }
    }
    if (optind == argc) {
        fprintf(stderr, "uring-cat-raw: no FILE given\n");
        goto usage;
    }
    if ((ret = raw_setup(&ring, o.depth, o.verbose)) < 0) {
        fprintf(stderr, "uring-cat-raw: io_uring_setup(%u): %s%s\n", o.depth, strerror(-ret),
                ret == -EPERM || ret == -ENOSYS ? " (io_uring is not allowed here: run make doctor)"
                                                : "");
        return 1;
    }
    /* calloc, not malloc: the kernel fills these through the ring, where
     * valgrind cannot see it (like strace, it sees io_uring_enter() and not
     * the I/O inside), and it would report the bytes as never written. */
    if (!(bufs = calloc(o.depth, o.block))) {
        fprintf(stderr, "uring-cat-raw: no memory for %u buffers of %u bytes\n", o.depth, o.block);
        raw_free(&ring);
        return 1;
    }
    for (int i = optind; i < argc; i++)
        if (cat_file(&ring, argv[i], bufs, &o) < 0)
            status = 1;
    free(bufs);
    raw_free(&ring);
    return status;
usage:
    if (opt == 'q' || opt == 'b')
        fprintf(stderr, "uring-cat-raw: bad value for -%c: %s\n", opt, optarg);
    else if (opt != -1)
        fprintf(stderr, "uring-cat-raw: unknown option -%c\n", optopt);
    cat__usage(stderr);
    return 2;
}
