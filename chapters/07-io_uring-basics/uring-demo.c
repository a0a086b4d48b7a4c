/* SPDX-License-Identifier: MIT */
/* uring-demo.c: the rules of io_uring a program must live by, each shown by an
 * experiment on this kernel.
 *
 *   1. Errors are results: a failed request completes with cqe->res = -errno
 *      (a directory gives -EISDIR, a closed fd -EBADF); errno is not used,
 *      and completions need not come in the order of submission.
 *   2. Reads come back short at the end of a file, and 0 means end of file.
 *   3. A linked READ -> WRITE pair: if the read is short, the kernel cancels
 *      the write (-ECANCELED) rather than write bytes that were never read.
 *   4. A chain ends with its submission: a READ marked IOSQE_IO_LINK that is
 *      submitted alone links to nothing, and a WRITE submitted after it runs
 *      whatever the read did.
 *   5. A full SQ: io_uring_get_sqe() returns NULL. Submitting frees the
 *      slots at once, before a single completion has been looked at.
 * Each step checks what the kernel did and the program exits 1 if it did
 * something else.
 *
 * Build and run, from the repository root:
 *     make -C chapters/07-io_uring-basics
 *     build/chapters/07-io_uring-basics/uring-demo [-d DIR]   # DIR for a scratch file
 *
 * Needs Linux 5.6+ and liburing. Exit status: 0 every step as described, 1
 * not, 2 bad arguments.
 */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEMO_FILE_SIZE 10000
#define DEMO_READ      4096

static char demo__buf[DEMO_READ];

static const char *demo__errname(int err)
{
    switch (err) {
    case EISDIR:
        return "EISDIR";
    case EBADF:
        return "EBADF";
    case ECANCELED:
        return "ECANCELED";
    case EINVAL:
        return "EINVAL";
    default:
        return strerror(err);
    }
}

/* A result as a person reads it: "1808" or "-21 (EISDIR)". Four buffers in
 * turn, so one printf() can show several. */
static const char *demo__res_str(int res)
{
    static char s[4][64];
    static unsigned next;
    char *out = s[next++ % 4];

    if (res >= 0)
        snprintf(out, sizeof(s[0]), "%d", res);
    else
        snprintf(out, sizeof(s[0]), "%d (%s)", res, demo__errname(-res));
    return out;
}

__attribute__((format(printf, 1, 2))) _Noreturn static void unexpected(const char *fmt, ...)
{
    va_list ap;

    fputs("uring-demo: unexpected: ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    exit(1);
}

static struct io_uring_sqe *demo__sqe(struct io_uring *ring, uint64_t user_data)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

    if (!sqe)
        unexpected("io_uring_get_sqe() returned NULL on a ring with room");
    io_uring_sqe_set_data64(sqe, user_data);
    return sqe;
}

/* Submit what is queued, then collect n completions: res[user_data] = cqe->res.
 * order[] (if given) records the user_data of each CQE as it came. */
static int demo__run(struct io_uring *ring, unsigned n, int *res, unsigned *order)
{
    struct io_uring_cqe *cqe;
    int submitted = io_uring_submit_and_wait(ring, n);

    if (submitted < 0)
        unexpected("io_uring_submit_and_wait: %s", strerror(-submitted));
    for (unsigned i = 0; i < n; i++) {
        int ret = io_uring_wait_cqe(ring, &cqe);
        if (ret < 0)
            unexpected("io_uring_wait_cqe: %s", strerror(-ret));
        res[cqe->user_data] = cqe->res;
        if (order)
            order[i] = (unsigned)cqe->user_data;
        io_uring_cqe_seen(ring, cqe);
    }
    return submitted;
}

static void step_errors(struct io_uring *ring, const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), closed = dup(0), res[4];
    unsigned order[3];
    int submitted;

    if (dfd < 0 || closed < 0)
        unexpected("open(%s) or dup(0) failed: %s", dir, strerror(errno));
    close(closed); /* a number that was a valid fd a moment ago */
    printf("step 1: errors are results\n");
    io_uring_prep_read(demo__sqe(ring, 1), dfd, demo__buf, DEMO_READ, 0);
    io_uring_prep_read(demo__sqe(ring, 2), closed, demo__buf, DEMO_READ, 0);
    io_uring_prep_nop(demo__sqe(ring, 3));
    errno = 0;
    submitted = demo__run(ring, 3, res, order);
    printf("  io_uring_submit() = %d: the kernel accepted READ of a directory (user_data 1),\n"
           "  READ of a closed fd (2) and a NOP (3); errno is still %d\n",
           submitted, errno);
    printf("  completions, in the order they came: %u: %s, %u: %s, %u: %s\n", order[0],
           demo__res_str(res[order[0]]), order[1], demo__res_str(res[order[1]]), order[2],
           demo__res_str(res[order[2]]));
    close(dfd);
    if (submitted != 3 || res[1] != -EISDIR || res[2] != -EBADF || res[3] != 0)
        unexpected("expected 3 submitted and results -EISDIR, -EBADF, 0");
}

static void step_short_reads(struct io_uring *ring, int fd)
{
    int res[3];

    printf("step 2: short reads at the end of a file\n");
    io_uring_prep_read(demo__sqe(ring, 1), fd, demo__buf, DEMO_READ, 8192);
    io_uring_prep_read(demo__sqe(ring, 2), fd, demo__buf, DEMO_READ, DEMO_FILE_SIZE);
    demo__run(ring, 2, res, NULL);
    printf("  a %d-byte file: READ %d at offset 8192 = %s (short: only %d bytes are left)\n",
           DEMO_FILE_SIZE, DEMO_READ, demo__res_str(res[1]), DEMO_FILE_SIZE - 8192);
    printf("  READ %d at offset %d = %s: the end of the file\n", DEMO_READ, DEMO_FILE_SIZE,
           demo__res_str(res[2]));
    if (res[1] != DEMO_FILE_SIZE - 8192 || res[2] != 0)
        unexpected("expected %d and 0", DEMO_FILE_SIZE - 8192);
}

static void step_link(struct io_uring *ring, int in, int out)
{
    struct io_uring_sqe *sqe;
    int res[3];

    printf("step 3: a linked READ -> WRITE pair\n");
    for (int k = 0; k < 2; k++) {
        uint64_t offset = k == 0 ? 0 : 8192; /* a full read, then a short one */
        sqe = demo__sqe(ring, 1);
        io_uring_prep_read(sqe, in, demo__buf, DEMO_READ, offset);
        sqe->flags |= IOSQE_IO_LINK; /* start the next SQE only if this one succeeds in full */
        io_uring_prep_write(demo__sqe(ring, 2), out, demo__buf, DEMO_READ, offset);
        demo__run(ring, 2, res, NULL);
        printf("  READ %d at offset %llu = %s, then the linked WRITE = %s\n", DEMO_READ,
               (unsigned long long)offset, demo__res_str(res[1]), demo__res_str(res[2]));
        if (k == 0 && (res[1] != DEMO_READ || res[2] != DEMO_READ))
            unexpected("a full read and its linked write should both move %d bytes", DEMO_READ);
        if (k == 1 && (res[1] != DEMO_FILE_SIZE - 8192 || res[2] != -ECANCELED))
            unexpected("a short read should cancel its linked write");
    }
    printf("  a short read breaks the chain: the write was cancelled, not run on stale bytes\n");
}

static void step_link_ends_with_submit(struct io_uring *ring, int in, int out)
{
    struct io_uring_sqe *sqe;
    int res[3];

    printf("step 4: a chain ends with its submission\n");
    sqe = demo__sqe(ring, 1);
    io_uring_prep_read(sqe, in, demo__buf, DEMO_READ, 8192);
    sqe->flags |= IOSQE_IO_LINK;
    demo__run(ring, 1, res, NULL); /* submitted alone: linked to nothing */
    io_uring_prep_write(demo__sqe(ring, 2), out, demo__buf, DEMO_READ, 8192);
    demo__run(ring, 1, res, NULL);
    printf("  READ %d at offset 8192 with IOSQE_IO_LINK, submitted alone = %s\n", DEMO_READ,
           demo__res_str(res[1]));
    printf("  the WRITE submitted after it = %s: it ran, %d bytes that were never read\n",
           demo__res_str(res[2]), DEMO_READ - res[1]);
    if (res[1] != DEMO_FILE_SIZE - 8192 || res[2] != DEMO_READ)
        unexpected("expected a short read and a write that runs anyway");
}

static void step_sq_full(void)
{
    struct io_uring_sqe *sqe;
    struct io_uring ring;
    unsigned got = 0;
    int ret;

    printf("step 5: a full SQ\n");
    if ((ret = io_uring_queue_init(4, &ring, 0)) < 0)
        unexpected("io_uring_queue_init(4): %s", strerror(-ret));
    while ((sqe = io_uring_get_sqe(&ring))) {
        io_uring_prep_nop(sqe);
        got++;
    }
    printf("  a ring of %u entries: io_uring_get_sqe() gave %u SQEs, then NULL\n",
           ring.sq.ring_entries, got);
    ret = io_uring_submit(&ring);
    printf("  io_uring_submit() = %d; io_uring_get_sqe() now gives an SQE again, while the\n"
           "  %u completions have not even been looked at: a slot is free once the kernel\n"
           "  has read its SQE, not when the request completes\n",
           ret, io_uring_cq_ready(&ring));
    if (got != 4 || ret != 4 || !io_uring_get_sqe(&ring))
        unexpected("expected 4 SQEs, NULL, 4 submitted, then room again");
    io_uring_queue_exit(&ring);
}

/* A scratch file of DEMO_FILE_SIZE bytes in dir, already unlinked. */
static int demo__scratch_file(const char *dir)
{
    char path[4096], data[DEMO_FILE_SIZE];
    int fd;

    snprintf(path, sizeof(path), "%s/uring-demo.XXXXXX", dir);
    if ((fd = mkstemp(path)) < 0)
        net_die(errno, "uring-demo: mkstemp(%s)", path);
    unlink(path);
    memset(data, 'x', sizeof(data));
    if (net_write_all(fd, data, sizeof(data)) != (ssize_t)sizeof(data))
        net_die(EIO, "uring-demo: write(%s)", path);
    return fd;
}

int main(int argc, char **argv)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    struct io_uring ring;
    int opt, fd, null_fd, ret;

    opterr = 0;
    while ((opt = getopt(argc, argv, ":d:h")) != -1) {
        if (opt == 'd') {
            dir = optarg;
        } else if (opt == 'h') {
            printf("usage: uring-demo [-d DIR]\n"
                   "Show, step by step, how io_uring reports errors, short reads, broken\n"
                   "links and a full submission queue.\n"
                   "  -d DIR    where to put a scratch file (default $TMPDIR or /tmp)\n"
                   "  -h        show this help\n");
            return 0;
        } else {
            fprintf(stderr, "uring-demo: %s -%c\nusage: uring-demo [-d DIR]\n",
                    opt == ':' ? "missing value for" : "unknown option", optopt);
            return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "uring-demo: unexpected argument %s\nusage: uring-demo [-d DIR]\n",
                argv[optind]);
        return 2;
    }
    if ((ret = io_uring_queue_init(8, &ring, 0)) < 0) {
        fprintf(stderr, "uring-demo: io_uring_queue_init(8): %s%s\n", strerror(-ret),
                ret == -EPERM || ret == -ENOSYS ? " (io_uring is not allowed here: run make doctor)"
                                                : "");
        return 1;
    }
    fd = demo__scratch_file(dir);
    if ((null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
        net_die(errno, "uring-demo: open(/dev/null)");
    step_errors(&ring, dir);
    step_short_reads(&ring, fd);
    step_link(&ring, fd, null_fd);
    step_link_ends_with_submit(&ring, fd, null_fd);
    step_sq_full();
    printf("every step behaved as described\n");
    close(null_fd);
    close(fd);
    io_uring_queue_exit(&ring);
    return 0;
}
