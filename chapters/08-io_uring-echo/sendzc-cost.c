/* SPDX-License-Identifier: MIT */
/* sendzc-cost.c: does io_uring's zero-copy send save CPU here? send against
 * send_zc, large messages over loopback TCP, CPU time per byte.
 *
 * An io_uring send copies the payload from the program's buffer into the
 * kernel's socket buffers, exactly as send(2) does; a recv copies it out
 * again. io_uring saves system calls, not copies. IORING_OP_SEND_ZC (Linux
 * 6.0) is the one request that avoids the send-side copy: the kernel pins
 * the buffer's pages and the NIC reads them. It pays with a second CQE per
 * send, the notification (IORING_CQE_F_NOTIF), which says when the kernel
 * no longer needs the buffer; until then the program may not touch it. And
 * on loopback the kernel copies anyway, later: data looped to a local socket
 * could wait there forever, so it is copied rather than kept pinned
 * (Documentation/networking/msg_zerocopy.rst, "Loopback"). With
 * IORING_SEND_ZC_REPORT_USAGE each notification says whether that happened.
 *
 * For each mode a child process connects and reads everything (read(2) into
 * 1 MiB); the parent sends TOTAL MiB in SIZE KiB messages, one request in
 * flight, and counts its CPU time (getrusage: its own thread, and io_uring's
 * worker threads, which are the process's) and the child's (wait4).
 *
 *     make -C chapters/08-io_uring-echo
 *     build/chapters/08-io_uring-echo/sendzc-cost [-s KIB] [-t MIB] [-r ROUNDS]
 *
 * Linux 6.0 or newer (IORING_OP_SEND_ZC; the usage report is newer, and
 * left out where the kernel refuses it). Exit status: 0, 77 where io_uring
 * or SEND_ZC is refused (the reason on stderr), 1 on an error, 2 on bad
 * arguments.
 */
#include "clock.h"
#include "net.h"
#include "uring-why.h"

#include <errno.h>
#include <liburing.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* liburing 2.3 copies the 6.0 uapi header, which lacks these (the kernel's
 * own <linux/io_uring.h> has them): the values are the kernel's ABI. */
#ifndef IORING_SEND_ZC_REPORT_USAGE
#define IORING_SEND_ZC_REPORT_USAGE (1U << 3) /* sqe->ioprio: say if it copied */
#endif
#ifndef IORING_NOTIF_USAGE_ZC_COPIED
#define IORING_NOTIF_USAGE_ZC_COPIED (1U << 31) /* in the notification's res */
#endif

struct zc_run {
    double sender_cpu, receiver_cpu, wall; /* seconds */
    unsigned long cqes, notifs, copied;    /* copied: notifications saying so */
    bool report;                           /* the kernel took REPORT_USAGE */
};

static double zc__cpu(const struct rusage *ru)
{
    return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
           (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
}

/* The reader: connect, read until EOF, exit 0 if it got `total` bytes. */
static void zc__receiver(int port, size_t total)
{
    static char buf[1 << 20];
    size_t got = 0;
    ssize_t n;
    int fd = net_connect("127.0.0.1", port);

    if (fd < 0)
        _exit(3);
    while ((n = read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            _exit(4);
        got += (size_t)n;
    }
    _exit(got == total ? 0 : 5);
}

/* One CQE, copied out and marked seen. */
static int zc__cqe(struct io_uring *ring, struct io_uring_cqe *out)
{
    struct io_uring_cqe *cqe;
    int ret = io_uring_wait_cqe(ring, &cqe);

    if (ret < 0)
        return ret;
    *out = *cqe;
    io_uring_cqe_seen(ring, cqe);
    return 0;
}

/* snippet: send-zc */
/* Send len bytes of buf, from where the last short send stopped. With zc,
 * the buffer stays the kernel's until the notification: wait for it. */
static int zc__send_all(struct io_uring *ring, int fd, const char *buf, size_t len, bool zc,
                        struct zc_run *r)
{
    size_t done = 0;

    while (done < len) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
        struct io_uring_cqe cqe;
        bool more;
        int ret;

        if (zc) {
            io_uring_prep_send_zc(sqe, fd, buf + done, len - done, 0, 0);
            if (r->report)
                sqe->ioprio |= IORING_SEND_ZC_REPORT_USAGE;
        } else {
            io_uring_prep_send(sqe, fd, buf + done, len - done, 0);
        }
        if ((ret = io_uring_submit(ring)) < 0 || (ret = zc__cqe(ring, &cqe)) < 0)
            return ret;
        r->cqes++;
        more = cqe.flags & IORING_CQE_F_MORE; /* a notification will follow */
        if (cqe.res < 0 && cqe.res == -EINVAL && zc && r->report && !more) {
            r->report = false; /* a kernel without the usage report: ask again */
            continue;
        }
        if (cqe.res < 0)
            return cqe.res;
        done += (size_t)cqe.res;
        while (more) {
            if ((ret = zc__cqe(ring, &cqe)) < 0)
                return ret;
            r->cqes++;
            if (cqe.flags & IORING_CQE_F_NOTIF) {
                r->notifs++;
                r->copied += r->report && (cqe.res & IORING_NOTIF_USAGE_ZC_COPIED);
            }
            more = cqe.flags & IORING_CQE_F_MORE;
        }
    }
    return 0;
}
/* end snippet */

/* One round: a fresh connection, total bytes in messages of size bytes. */
static int zc__round(struct io_uring *ring, const char *buf, size_t size, size_t total, bool zc,
                     struct zc_run *r)
{
    struct rusage before, after, child;
    int lfd, fd = -1, status, ret = -1;
    pid_t pid;
    int64_t t0;

    *r = (struct zc_run){.report = true};
    if ((lfd = net_listen("127.0.0.1", 0, 1)) < 0) {
        fprintf(stderr, "sendzc-cost: listen(127.0.0.1:0): %s\n", strerror(-lfd));
        return -1;
    }
    if ((pid = fork()) < 0) {
        fprintf(stderr, "sendzc-cost: fork: %s\n", strerror(errno));
        close(lfd);
        return -1;
    }
    if (pid == 0) {
        io_uring_queue_exit(ring);
        zc__receiver(net_local_port(lfd), total);
    }
    if ((fd = accept(lfd, NULL, NULL)) < 0) {
        fprintf(stderr, "sendzc-cost: accept: %s\n", strerror(errno));
        goto out;
    }
    getrusage(RUSAGE_SELF, &before);
    t0 = clock_now_ns();
    for (size_t sent = 0; sent < total; sent += size) {
        int err = zc__send_all(ring, fd, buf, size, zc, r);
        if (err < 0) {
            fprintf(stderr, "sendzc-cost: %s of %zu bytes: %s\n", zc ? "send_zc" : "send", size,
                    strerror(-err));
            ret = err;
            goto out;
        }
    }
    getrusage(RUSAGE_SELF, &after);
    r->sender_cpu = zc__cpu(&after) - zc__cpu(&before);
    close(fd);
    fd = -1;
    if (wait4(pid, &status, 0, &child) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "sendzc-cost: the receiver did not get all %zu bytes\n", total);
        pid = -1;
        goto out;
    }
    r->wall = (double)(clock_now_ns() - t0) / 1e9;
    r->receiver_cpu = zc__cpu(&child);
    pid = -1;
    ret = 0;
out:
    if (fd >= 0)
        close(fd);
    close(lfd);
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    return ret;
}

static void zc__usage(FILE *to)
{
    fprintf(to, "usage: sendzc-cost [-s KIB] [-t MIB] [-r ROUNDS]\n"
                "Send over loopback TCP with io_uring's send and with send_zc, and compare the\n"
                "CPU time each costs per byte, on the sending and the receiving side.\n"
                "  -s KIB     message size in KiB (default 256, 4 to 4096)\n"
                "  -t MIB     bytes to send per round, in MiB (default 256)\n"
                "  -r ROUNDS  rounds of each mode, the median reported (default 3)\n"
                "  -h         show this help\n");
}

/* Rounds ordered by the CPU time of both sides: on loopback the deferred
 * copy of send_zc may land in either process. */
static int zc__by_cpu(const void *a, const void *b)
{
    const struct zc_run *x = a, *y = b;
    double cx = x->sender_cpu + x->receiver_cpu, cy = y->sender_cpu + y->receiver_cpu;

    return (cx > cy) - (cx < cy);
}

static void zc__print(const char *mode, const struct zc_run *r, size_t total)
{
    double both = r->sender_cpu + r->receiver_cpu;

    printf("  %-8s CPU: sender %.3f s, receiver %.3f s, both %.3f s = %.2f ns/byte; %.2f s\n", mode,
           r->sender_cpu, r->receiver_cpu, both, both * 1e9 / (double)total, r->wall);
    if (r->notifs == 0)
        printf("           %lu CQEs: one per send\n", r->cqes);
    else if (r->report)
        printf("           %lu CQEs: %lu results and %lu notifications; %lu of these say the "
               "kernel copied\n",
               r->cqes, r->cqes - r->notifs, r->notifs, r->copied);
    else
        printf("           %lu CQEs: %lu results and %lu notifications (this kernel cannot say "
               "if it copied)\n",
               r->cqes, r->cqes - r->notifs, r->notifs);
}

int main(int argc, char **argv)
{
    long kib = 256, mib = 256, rounds = 3;
    struct zc_run runs[2][9];
    struct io_uring ring;
    struct io_uring_probe *probe;
    char why[256];
    char *buf;
    int opt, ret;

    opterr = 0;
    while ((opt = getopt(argc, argv, "s:t:r:h")) != -1) {
        if ((opt == 's' && net_parse_int(optarg, 4, 4096, &kib) == 0) ||
            (opt == 't' && net_parse_int(optarg, 1, 4096, &mib) == 0) ||
            (opt == 'r' && net_parse_int(optarg, 1, 9, &rounds) == 0))
            continue;
        if (opt == 'h') {
            zc__usage(stdout);
            return 0;
        }
        fprintf(stderr, "sendzc-cost: bad option -%c\n", opt == '?' ? optopt : opt);
        zc__usage(stderr);
        return 2;
    }
    if (optind != argc) {
        zc__usage(stderr);
        return 2;
    }
    size_t size = (size_t)kib * 1024, total = (size_t)mib * 1024 * 1024;
    total -= total % size; /* whole messages */
    if (total == 0)
        total = size;

    if ((ret = io_uring_queue_init(8, &ring, 0)) < 0) {
        fprintf(stderr, "sendzc-cost: %s\n", uring_why(ret, 8, 0, why, sizeof(why)));
        return 77;
    }
    probe = io_uring_get_probe_ring(&ring);
    if (!probe || !io_uring_opcode_supported(probe, IORING_OP_SEND_ZC)) {
        fprintf(stderr, "sendzc-cost: IORING_OP_SEND_ZC needs Linux 6.0 or newer\n");
        io_uring_free_probe(probe);
        io_uring_queue_exit(&ring);
        return 77;
    }
    io_uring_free_probe(probe);
    if (!(buf = malloc(size))) {
        fprintf(stderr, "sendzc-cost: no memory for %zu bytes\n", size);
        io_uring_queue_exit(&ring);
        return 1;
    }
    memset(buf, 'z', size);

    printf("sendzc-cost: %zu MiB over loopback TCP in %ld KiB messages, median of %ld round%s\n",
           total >> 20, kib, rounds, rounds == 1 ? "" : "s");
    fflush(stdout);
    for (long i = 0; i < rounds; i++) /* interleaved, so that a burst of load hits both */
        for (int zc = 0; zc < 2; zc++)
            if (zc__round(&ring, buf, size, total, zc, &runs[zc][i]) < 0) {
                free(buf);
                io_uring_queue_exit(&ring);
                return 1;
            }
    for (int zc = 0; zc < 2; zc++) {
        qsort(runs[zc], (size_t)rounds, sizeof(runs[zc][0]), zc__by_cpu);
        zc__print(zc ? "send_zc" : "send", &runs[zc][rounds / 2], total);
    }
    free(buf);
    io_uring_queue_exit(&ring);
    return 0;
}
