/* SPDX-License-Identifier: MIT */
/* uring-iopoll.c: polled I/O (IORING_SETUP_IOPOLL), and whether this
 * machine's disk can do it.
 *
 * A normal read ends with an interrupt: the device raises it, the kernel
 * posts the CQE, the sleeping thread wakes. On a ring made with
 * IORING_SETUP_IOPOLL nothing sleeps: io_uring_enter() spins, asking the
 * driver "done yet?" until the read is, which saves the interrupt and the
 * wake-up on very fast devices and costs a CPU while it spins. It needs
 * O_DIRECT (the page cache has nothing to poll), a filesystem that passes
 * polling down, and a block device with poll queues: NVMe has them only when
 * the nvme driver is given some (nvme.poll_queues=N); the device says so in
 * /sys/block/DEV/queue/io_poll.
 *
 * The program reads FILE with O_DIRECT on an IOPOLL ring and on a normal
 * ring, and reports what the kernel answered:
 *   - a buffered read on the IOPOLL ring: -EOPNOTSUPP, always;
 *   - an O_DIRECT read on it: the bytes if the device polls; on a device
 *     without poll queues recent kernels fail it with -EOPNOTSUPP (6.18
 *     here), older ones complete it by interrupt while the thread spins;
 *   - COUNT reads at depth 1 on each ring that accepts them: time and CPU
 *     time per read (getrusage), which shows what the spinning costs.
 *
 *     make -C chapters/07-io_uring-basics
 *     head -c 4M /dev/urandom > /var/tmp/iopoll.dat
 *     build/chapters/07-io_uring-basics/uring-iopoll /var/tmp/iopoll.dat
 *
 * Linux 5.6+ (IORING_OP_READ; IOPOLL itself is as old as io_uring, 5.1).
 * Exit status: 0 when it could ask (whatever the answer), 77 when io_uring
 * or O_DIRECT is refused here (the reason on stderr), 1 on an error, 2 on
 * bad arguments.
 */
#include "clock.h"
#include "net.h"
#include "uring-why.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define IOPOLL_BLOCK 4096 /* one logical block of any disk: O_DIRECT's unit */

/* The device FILE lives on, and its io_poll setting: 1 polls, 0 does not,
 * -1 unknown. A partition's queue/ is its disk's: one directory up. */
static int iopoll__device(const char *file, char *name, size_t len)
{
    char link[64], dir[PATH_MAX], path[PATH_MAX + 32];
    struct stat st;
    FILE *f;
    int v = -1;

    snprintf(name, len, "?");
    if (stat(file, &st) < 0)
        return -1;
    snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(st.st_dev), minor(st.st_dev));
    if (!realpath(link, dir))
        return -1;
    snprintf(path, sizeof(path), "%s/partition", dir);
    if (access(path, F_OK) == 0)
        *strrchr(dir, '/') = '\0';
    snprintf(name, len, "%s", strrchr(dir, '/') + 1);
    snprintf(path, sizeof(path), "%s/queue/io_poll", dir);
    if ((f = fopen(path, "r"))) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* One read of `len` bytes at `off`, waited for. Returns cqe->res. */
static int iopoll__read(struct io_uring *ring, int fd, void *buf, unsigned len, off_t off)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    struct io_uring_cqe *cqe;
    int ret;

    io_uring_prep_read(sqe, fd, buf, len, (__u64)off);
    if ((ret = io_uring_submit(ring)) < 0)
        return ret;
    /* On an IOPOLL ring this io_uring_enter() spins in the driver until the
     * read is done; on a normal one it sleeps until the interrupt. */
    if ((ret = io_uring_wait_cqe(ring, &cqe)) < 0)
        return ret;
    ret = cqe->res;
    io_uring_cqe_seen(ring, cqe);
    return ret;
}

static double iopoll__cpu_us(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec +
           ru.ru_stime.tv_usec;
}

/* COUNT reads of one block at depth 1, spread over the file. */
static int iopoll__measure(const char *label, struct io_uring *ring, int fd, void *buf,
                           off_t blocks, long count)
{
    int64_t t0 = clock_now_ns();
    double c0 = iopoll__cpu_us();

    for (long i = 0; i < count; i++) {
        off_t off = (off_t)((i * 7919) % blocks) * IOPOLL_BLOCK;
        int ret = iopoll__read(ring, fd, buf, IOPOLL_BLOCK, off);
        if (ret != IOPOLL_BLOCK) {
            fprintf(stderr, "uring-iopoll: read(%s, offset %lld) = %d%s%s\n", label, (long long)off,
                    ret, ret < 0 ? ": " : "", ret < 0 ? strerror(-ret) : "");
            return -1;
        }
    }
    printf("  %-24s %ld reads, %.1f us each, %.1f us of CPU each\n", label, count,
           (double)(clock_now_ns() - t0) / 1e3 / (double)count,
           (iopoll__cpu_us() - c0) / (double)count);
    return 0;
}

static void iopoll__usage(FILE *to)
{
    fprintf(to, "usage: uring-iopoll [-n COUNT] FILE\n"
                "Read FILE with O_DIRECT on an IORING_SETUP_IOPOLL ring and on a normal one,\n"
                "and say whether this machine's disk can be polled.\n"
                "  -n COUNT  reads to time on each ring (default 256)\n"
                "  -h        show this help\n");
}

static const char *iopoll__res(int res, char *out, size_t len)
{
    if (res < 0)
        snprintf(out, len, "%d (%s)", res, res == -EOPNOTSUPP ? "EOPNOTSUPP" : strerror(-res));
    else
        snprintf(out, len, "%d bytes", res);
    return out;
}

int main(int argc, char **argv)
{
    struct io_uring polled, plain;
    char dev[64], why[256], r1[64], r2[64];
    long count = 256;
    int opt, io_poll, fd_buf = -1, fd = -1, res_buf, res_direct, status = 1, ret;
    struct stat st;
    void *buf = NULL;

    opterr = 0;
    while ((opt = getopt(argc, argv, "n:h")) != -1) {
        if (opt == 'n' && net_parse_int(optarg, 1, 1000000, &count) == 0)
            continue;
        if (opt == 'h') {
            iopoll__usage(stdout);
            return 0;
        }
        fprintf(stderr, "uring-iopoll: bad option -%c\n", opt == '?' ? optopt : opt);
        iopoll__usage(stderr);
        return 2;
    }
    if (optind != argc - 1) {
        iopoll__usage(stderr);
        return 2;
    }
    const char *file = argv[optind];
    if ((fd_buf = open(file, O_RDONLY)) < 0 || fstat(fd_buf, &st) < 0) {
        fprintf(stderr, "uring-iopoll: open(%s): %s\n", file, strerror(errno));
        return 1;
    }
    if (!S_ISREG(st.st_mode) || st.st_size < IOPOLL_BLOCK) {
        fprintf(stderr, "uring-iopoll: %s: need a regular file of %d bytes or more\n", file,
                IOPOLL_BLOCK);
        goto out_fd;
    }
    if ((fd = open(file, O_RDONLY | O_DIRECT)) < 0) {
        fprintf(stderr, "uring-iopoll: open(%s, O_DIRECT): %s: its filesystem has no O_DIRECT\n",
                file, strerror(errno));
        status = 77;
        goto out_fd;
    }
    if ((ret = io_uring_queue_init(4, &polled, IORING_SETUP_IOPOLL)) < 0) {
        fprintf(stderr, "uring-iopoll: %s\n",
                uring_why(ret, 4, IORING_SETUP_IOPOLL, why, sizeof(why)));
        status = 77;
        goto out_fd;
    }
    if ((ret = io_uring_queue_init(4, &plain, 0)) < 0) {
        fprintf(stderr, "uring-iopoll: %s\n", uring_why(ret, 4, 0, why, sizeof(why)));
        status = 77;
        goto out_polled;
    }
    if (posix_memalign(&buf, IOPOLL_BLOCK, IOPOLL_BLOCK) != 0) {
        fprintf(stderr, "uring-iopoll: no memory for a %d-byte buffer\n", IOPOLL_BLOCK);
        goto out_plain;
    }
    memset(buf, 0, IOPOLL_BLOCK);

    io_poll = iopoll__device(file, dev, sizeof(dev));
    printf("uring-iopoll: %d-byte reads of %s, on device %s\n", IOPOLL_BLOCK, file, dev);
    if (strcmp(dev, "?") == 0)
        printf("  no block device under it (tmpfs?): nothing to poll\n");
    else
        printf("  /sys/block/%s/queue/io_poll: %s\n", dev,
               io_poll == 1   ? "1 (the driver has poll queues)"
               : io_poll == 0 ? "0 (no poll queues: completions come by interrupt only)"
                              : "unknown (no such file)");

    /* snippet: iopoll-ask */
    res_buf = iopoll__read(&polled, fd_buf, buf, IOPOLL_BLOCK, 0);
    res_direct = iopoll__read(&polled, fd, buf, IOPOLL_BLOCK, 0);
    printf("  IOPOLL ring, buffered read:  %s\n", iopoll__res(res_buf, r1, sizeof(r1)));
    printf("  IOPOLL ring, O_DIRECT read:  %s\n", iopoll__res(res_direct, r2, sizeof(r2)));
    /* end snippet */

    off_t blocks = st.st_size / IOPOLL_BLOCK;
    if (res_direct == IOPOLL_BLOCK &&
        iopoll__measure("polled (IOPOLL):", &polled, fd, buf, blocks, count) < 0)
        goto out_buf;
    if (iopoll__measure("interrupt-driven:", &plain, fd, buf, blocks, count) < 0)
        goto out_buf;

    if (res_direct == -EOPNOTSUPP)
        printf("IOPOLL refused: this device cannot be polled, so the kernel fails polled reads\n");
    else if (res_direct == IOPOLL_BLOCK && io_poll == 1)
        printf("IOPOLL works: the reads above were polled\n");
    else if (res_direct == IOPOLL_BLOCK)
        printf("IOPOLL accepted but not polled: this kernel completed the reads by interrupt\n"
               "while the thread spun (the device has no poll queues)\n");
    else
        printf("IOPOLL answered %s: neither polled nor refused as documented\n", r2);
    status = 0;
out_buf:
    free(buf);
out_plain:
    io_uring_queue_exit(&plain);
out_polled:
    io_uring_queue_exit(&polled);
out_fd:
    if (fd >= 0)
        close(fd);
    close(fd_buf);
    return status;
}
