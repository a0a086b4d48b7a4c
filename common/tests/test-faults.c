/* SPDX-License-Identifier: MIT */
/* test-faults.c: push a known byte pattern through a socketpair the
 * way a careful program must (looping over short counts, EINTR and EAGAIN),
 * check every byte, and say how often the kernel, or the faults shim, made
 * it work for them.
 *
 * Meant to run under common/faults/libfaults.so; tests/common/faults.bats runs
 * it with and without the shim. Alone it is the control: no short writes.
 *
 *   test-faults [-n] [-a] [-d] [-s BYTES] [-c CHUNK]
 *   test-faults -r
 *     -n        non-blocking sockets (EAGAIN is then retried after poll())
 *     -a        rotate through every wrapped call: write/send/sendto/writev/sendmsg
 *               and read/recv/recvfrom/readv/recvmsg (default: write and read only)
 *     -d        with -a, pass MSG_DONTWAIT to the send and recv calls
 *     -s BYTES  how much to send (default 1 MiB)
 *     -c CHUNK  bytes written before they are read back (default 1024)
 *     -r        instead, check the rules the shim must keep even at 100%:
 *               no short datagrams, no short MSG_WAITALL, no short eventfd
 *               reads, nothing shorter than 1 byte, errno untouched on success
 *               (run it with FAULTS_SHORT_READ=100 FAULTS_SHORT_WRITE=100
 *               FAULTS_FDS=all, and FAULTS_EAGAIN=100 if you like)
 *
 * One process, one thread, and each chunk is written in full before it is
 * read back: the sequence of calls depends only on the data and the shim's
 * seed, never on scheduling, so the same FAULTS_SEED gives the same counts.
 * A chunk far below the socket buffer means the real kernel never blocks or
 * shortens here: every short count and every EAGAIN seen is the shim's.
 *
 * Prints one line on stdout:
 *   bytes=N writes=N short_writes=N reads=N short_reads=N eintr=N eagain=N
 * and exits 0 when every byte arrived intact and in order, 1 otherwise.
 */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

struct counts {
    unsigned long writes, short_writes, reads, short_reads, eintr, eagain;
};

static int opt_all_calls, opt_dontwait, opt_nonblock;

/* Byte i of the stream: a hash of the position, so a lost, repeated or
 * reordered stretch shows up as a mismatch (a repeating pattern could hide it). */
static unsigned char pattern_byte(uint64_t i)
{
    return (unsigned char)((i * 0x9E3779B97F4A7C15ULL) >> 56);
}

/* One write-side call, chosen by the call's number when -a rotates them.
 * writev and sendmsg split the data in three uneven pieces so the shim has to
 * cut an iovec array, not just a length. */
static ssize_t send_some(int fd, const unsigned char *p, size_t len, unsigned long nth)
{
    int flags = opt_dontwait ? MSG_DONTWAIT : 0;
    size_t a = len / 3, b = len / 2 - len / 3;
    struct iovec iov[3] = {
        {(void *)p, a}, {(void *)(p + a), b}, {(void *)(p + a + b), len - a - b}};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 3};

    if (!opt_all_calls)
        return write(fd, p, len);
    switch (nth % 5) {
    case 0:
        return write(fd, p, len);
    case 1:
        return send(fd, p, len, flags);
    case 2:
        return sendto(fd, p, len, flags, NULL, 0);
    case 3:
        return writev(fd, iov, 3);
    default:
        return sendmsg(fd, &msg, flags);
    }
}

static ssize_t recv_some(int fd, unsigned char *p, size_t len, unsigned long nth)
{
    int flags = opt_dontwait ? MSG_DONTWAIT : 0;
    size_t a = len / 3, b = len / 2 - len / 3;
    struct iovec iov[3] = {{p, a}, {p + a, b}, {p + a + b, len - a - b}};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 3};

    if (!opt_all_calls)
        return read(fd, p, len);
    switch (nth % 5) {
    case 0:
        return read(fd, p, len);
    case 1:
        return recv(fd, p, len, flags);
    case 2:
        return recvfrom(fd, p, len, flags, NULL, NULL);
    case 3:
        return readv(fd, iov, 3);
    default:
        return recvmsg(fd, &msg, flags);
    }
}

/* EAGAIN means "wait until ready", and is legal only when the caller asked not
 * to block. On a blocking call it is a broken contract, which the test reports. */
static int wait_ready(int fd, short events, int dontwait_used, struct counts *c)
{
    struct pollfd pfd = {.fd = fd, .events = events};

    c->eagain++;
    if (!opt_nonblock && !dontwait_used) {
        fprintf(stderr, "test-faults: EAGAIN on a blocking call: expected it never to happen\n");
        return -1;
    }
    while (poll(&pfd, 1, 10000) < 0) {
        if (errno != EINTR) {
            perror("test-faults: poll");
            return -1;
        }
    }
    return 0;
}

/* Used only for the call just made, so the EAGAIN check knows if MSG_DONTWAIT
 * was passed (write/read/readv/writev have no flags). */
static int used_dontwait(unsigned long nth)
{
    unsigned k = (unsigned)(nth % 5);
    return opt_all_calls && opt_dontwait && (k == 1 || k == 2 || k == 4);
}

static int send_chunk(int fd, const unsigned char *p, size_t len, struct counts *c)
{
    size_t done = 0;

    while (done < len) {
        unsigned long nth = c->writes++;
        ssize_t n = send_some(fd, p + done, len - done, nth);
        if (n > 0) {
            if ((size_t)n < len - done)
                c->short_writes++; /* not an error: loop for the rest */
            done += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            c->eintr++;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_ready(fd, POLLOUT, used_dontwait(nth), c) < 0)
                return -1;
        } else {
            fprintf(stderr, "test-faults: write returned %zd (%s) after %zu of %zu bytes\n", n,
                    n < 0 ? strerror(errno) : "no progress", done, len);
            return -1;
        }
    }
    return 0;
}

static int recv_chunk(int fd, unsigned char *p, size_t len, struct counts *c)
{
    size_t done = 0;

    while (done < len) {
        unsigned long nth = c->reads++;
        ssize_t n = recv_some(fd, p + done, len - done, nth);
        if (n > 0) {
            if ((size_t)n < len - done)
                c->short_reads++;
            done += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            c->eintr++;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_ready(fd, POLLIN, used_dontwait(nth), c) < 0)
                return -1;
        } else {
            fprintf(stderr, "test-faults: read returned %zd (%s) after %zu of %zu bytes\n", n,
                    n < 0 ? strerror(errno) : "EOF", done, len);
            return -1;
        }
    }
    return 0;
}

/* ---- -r: what the shim must never do ---------------------------------------- */

static int rule_failures;

static void rule(const char *what, long expected, long actual)
{
    if (expected == actual)
        return;
    fprintf(stderr, "test-faults: %s: expected %ld, got %ld%s%s\n", what, expected, actual,
            actual < 0 ? ", errno " : "", actual < 0 ? strerror(errno) : "");
    rule_failures++;
}

/* Whole messages: the kernel never cuts a datagram for a caller with room. */
static void rules_datagrams(int type, const char *name)
{
    char out[1000], in[2000], what[128];
    struct iovec iov = {in, sizeof(in)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    int sv[2];

    memset(out, 'd', sizeof(out));
    if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) < 0) {
        perror("test-faults: socketpair");
        rule_failures++;
        return;
    }
    snprintf(what, sizeof(what), "send() of a %s message", name);
    rule(what, sizeof(out), send(sv[0], out, sizeof(out), 0));
    snprintf(what, sizeof(what), "recv() of a %s message", name);
    rule(what, sizeof(out), recv(sv[1], in, sizeof(in), 0));
    rule(what, sizeof(out), write(sv[0], out, sizeof(out)));
    snprintf(what, sizeof(what), "recvmsg() of a %s message", name);
    rule(what, sizeof(out), recvmsg(sv[1], &msg, 0));
    rule("MSG_TRUNC in msg_flags", 0, msg.msg_flags & MSG_TRUNC);
    close(sv[0]);
    close(sv[1]);
}

static int check_rules(void)
{
    char out[1000], in[1000];
    uint64_t one = 1, got = 0;
    int sv[2], efd, saved;
    ssize_t n;

    memset(out, 's', sizeof(out));
    rules_datagrams(SOCK_DGRAM, "SOCK_DGRAM");
    rules_datagrams(SOCK_SEQPACKET, "SOCK_SEQPACKET");

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        perror("test-faults: socketpair");
        return 1;
    }
    /* A short count is at least 1 byte: so a 1-byte call is never short,
     * and a 2-byte one is either whole or exactly 1. */
    rule("write() of 1 byte", 1, write(sv[0], out, 1));
    rule("read() of 1 byte", 1, read(sv[1], in, 1));
    n = write(sv[0], out, 2);
    if (n != 1 && n != 2)
        rule("write() of 2 bytes (1 when cut)", 2, n);

    /* MSG_WAITALL promises the whole length: 1 or 2 bytes above, plus 999. */
    rule("write() of 999 bytes, looped", 999, net_write_all(sv[0], out, 999));
    rule("recv(MSG_WAITALL) of 1000 bytes", 1000, recv(sv[1], in, 1000, MSG_WAITALL));

    /* The shim's own fstat/fcntl/getsockopt must not show through errno. */
    errno = EDOM;
    if (write(sv[0], out, 10) > 0)
        rule("errno after a successful (short) write", EDOM, errno);
    else
        rule("write() of 10 bytes", 10, -1);
    close(sv[0]);
    close(sv[1]);

    /* eventfd reads 8 bytes or fails with EINVAL: with FAULTS_FDS=all the
     * shim must still not cut it. */
    efd = eventfd(0, EFD_CLOEXEC);
    if (efd < 0) {
        perror("test-faults: eventfd");
        return 1;
    }
    rule("write() of 8 bytes to an eventfd", 8, write(efd, &one, sizeof(one)));
    rule("read() of 8 bytes from an eventfd", 8, read(efd, &got, sizeof(got)));
    close(efd);

    /* Errors stay the real ones. */
    errno = 0;
    rule("write() to fd -1", -1, write(-1, out, 1));
    saved = errno;
    rule("errno of write() to fd -1 (EBADF)", EBADF, saved);

    if (rule_failures)
        return 1;
    printf("rules: ok\n");
    return 0;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: test-faults [-n] [-a] [-d] [-s BYTES] [-c CHUNK]\n"
                "       test-faults -r\n");
}

int main(int argc, char **argv)
{
    long total = 1 << 20, chunk = 1024;
    unsigned char *out = NULL, *in = NULL;
    struct counts c = {0};
    int sv[2], opt, status = 1;

    while ((opt = getopt(argc, argv, "nadrs:c:h")) != -1) {
        switch (opt) {
        case 'r':
            return check_rules();
        case 'n':
            opt_nonblock = 1;
            break;
        case 'a':
            opt_all_calls = 1;
            break;
        case 'd':
            opt_dontwait = 1;
            break;
        case 's':
            if (net_parse_int(optarg, 1, INT_MAX, &total) < 0)
                goto bad_usage;
            break;
        case 'c':
            /* Above 64 KiB the socket buffer could fill and block this thread
             * before it gets to read: keep chunks well inside it. */
            if (net_parse_int(optarg, 1, 65536, &chunk) < 0)
                goto bad_usage;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            goto bad_usage;
        }
    }
    if (optind < argc)
        goto bad_usage;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        perror("test-faults: socketpair");
        return 1;
    }
    if (opt_nonblock && (net_set_nonblocking(sv[0]) < 0 || net_set_nonblocking(sv[1]) < 0)) {
        perror("test-faults: O_NONBLOCK");
        goto out_close;
    }
    out = malloc((size_t)chunk);
    in = malloc((size_t)chunk);
    if (!out || !in) {
        fprintf(stderr, "test-faults: out of memory\n");
        goto out_free;
    }

    for (long sent = 0; sent < total; sent += chunk) {
        size_t len = (size_t)(total - sent < chunk ? total - sent : chunk);
        for (size_t i = 0; i < len; i++)
            out[i] = pattern_byte((uint64_t)sent + i);
        memset(in, 0, len);
        if (send_chunk(sv[0], out, len, &c) < 0 || recv_chunk(sv[1], in, len, &c) < 0)
            goto out_free;
        for (size_t i = 0; i < len; i++) {
            if (in[i] != out[i]) {
                fprintf(stderr, "test-faults: byte %ld: expected 0x%02x, got 0x%02x\n",
                        sent + (long)i, out[i], in[i]);
                goto out_free;
            }
        }
    }
    printf("bytes=%ld writes=%lu short_writes=%lu reads=%lu short_reads=%lu eintr=%lu eagain=%lu\n",
           total, c.writes, c.short_writes, c.reads, c.short_reads, c.eintr, c.eagain);
    status = 0;
out_free:
    free(in);
    free(out);
out_close:
    close(sv[1]);
    close(sv[0]);
    return status;

bad_usage:
    usage(stderr);
    return 2;
}
