/* SPDX-License-Identifier: MIT */
/* uring-rules.c: seven rules of io_uring networking, each shown on a real socket.
 *
 *   1. CQEs come in the order requests finish, not the order they were sent.
 *   2. The kernel writes into a recv buffer after the submitting call has
 *      returned, at a moment of its choosing: the buffer must stay alive.
 *   3. close() does not cancel a request: the request holds the socket.
 *   4. A send can complete short: the CQE says how much went out.
 *   5. A multishot recv ends with -ENOBUFS when the buffer ring is empty,
 *      and its last CQE has no IORING_CQE_F_MORE.
 *   6. A multishot accept ends with -EMFILE when the process is out of fds.
 *   7. A recv that selects its buffer picks it when the kernel first tries
 *      it, not when bytes come: on an empty ring it fails with -ENOBUFS at
 *      once, even on a silent socket, unless IORING_RECVSEND_POLL_FIRST
 *      makes it wait for bytes first.
 *
 *     make -C chapters/08-io_uring-echo
 *     build/chapters/08-io_uring-echo/uring-rules
 *
 * Each step checks what the kernel did and exits 1 if it did something
 * else. Linux 6.0 or newer; exit 77 where io_uring is refused or missing.
 */
#include "net.h"
#include "ring.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BGID      3
#define BIG_SEND  (1 << 20)
#define RULE_FAIL 1

static struct io_uring ring;

#define expect(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "uring-rules: unexpected: " __VA_ARGS__);                              \
            fprintf(stderr, "\n");                                                                 \
            exit(RULE_FAIL);                                                                       \
        }                                                                                          \
    } while (0)

/* Submit what is queued, wait for the next CQE (2 s at most), copy it out. */
static void next_cqe(struct io_uring_cqe *out)
{
    struct __kernel_timespec ts = {.tv_sec = 2};
    struct io_uring_cqe *cqe;
    int ret;

    io_uring_submit(&ring);
    ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
    expect(ret == 0, "no CQE within 2 s (%s)", strerror(-ret));
    *out = *cqe;
    io_uring_cqe_seen(&ring, cqe);
}

static struct io_uring_sqe *sqe_for(uint64_t ud)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

    io_uring_sqe_set_data64(sqe, ud);
    return sqe;
}

/* A connected loopback TCP pair: fds[0] is "ours", fds[1] the peer. */
static void tcp_pair(int fds[2])
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    int lfd;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    expect(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(lfd, 1) == 0 &&
               getsockname(lfd, (struct sockaddr *)&sa, &len) == 0,
           "loopback listener: %s", strerror(errno));
    fds[1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    expect(connect(fds[1], (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect: %s",
           strerror(errno));
    fds[0] = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    expect(fds[0] >= 0, "accept: %s", strerror(errno));
    close(lfd);
}

static void rule_order(void)
{
    int fds[2];
    char buf[16];
    struct io_uring_cqe a, b;

    tcp_pair(fds);
    io_uring_prep_recv(sqe_for(1), fds[0], buf, sizeof(buf), 0);
    io_uring_prep_nop(sqe_for(2));
    next_cqe(&a);
    expect(a.user_data == 2, "the NOP did not complete first");
    printf("1. submitted: recv (user_data 1), then nop (user_data 2); first CQE: user_data %llu\n",
           (unsigned long long)a.user_data);
    expect(write(fds[1], "x", 1) == 1, "write");
    next_cqe(&b);
    printf("   after the peer wrote a byte: user_data %llu, res %d. CQEs follow completion, not "
           "submission\n",
           (unsigned long long)b.user_data, b.res);
    close(fds[0]);
    close(fds[1]);
}

/* snippet: buffer-alive */
static void rule_buffer_alive(void)
{
    char buf[32] = "................";
    struct timespec nap = {.tv_nsec = 20 * 1000 * 1000};
    struct io_uring_cqe cqe;
    int fds[2];

    tcp_pair(fds);
    io_uring_prep_recv(sqe_for(3), fds[0], buf, sizeof(buf) - 1, 0);
    io_uring_submit(&ring); /* returns at once: nothing to receive yet */
    printf("2. recv submitted into buf; io_uring_submit() returned; buf = \"%.16s\"\n", buf);
    expect(write(fds[1], "hello", 5) == 5, "write");
    nanosleep(&nap, NULL); /* no io_uring call: we only sleep */
    printf("   the peer wrote \"hello\"; after a 20 ms nanosleep(), with no io_uring call,\n"
           "   buf = \"%.16s\" and %u CQE waiting: the kernel wrote into our memory on its own\n",
           buf, io_uring_cq_ready(&ring));
    expect(memcmp(buf, "hello", 5) == 0, "buf was not written while we slept");
    next_cqe(&cqe);
    expect(cqe.res == 5, "recv result");
    close(fds[0]);
    close(fds[1]);
}
/* end snippet */

static void rule_close_does_not_cancel(void)
{
    char buf[16] = {0};
    struct io_uring_cqe cqe;
    int fds[2];

    tcp_pair(fds);
    io_uring_prep_recv(sqe_for(4), fds[0], buf, sizeof(buf), 0);
    io_uring_submit(&ring);
    close(fds[0]);
    expect(io_uring_cq_ready(&ring) == 0, "close() completed the recv");
    expect(write(fds[1], "late", 4) == 4, "the peer's write after our close: %s", strerror(errno));
    next_cqe(&cqe);
    printf("3. recv submitted, then close(fd); the peer then wrote \"late\": the recv completed\n"
           "   with res %d, \"%.4s\": close() did not cancel it, the request held the socket\n",
           cqe.res, buf);
    expect(cqe.res == 4, "recv after close returned %d", cqe.res);
    close(fds[1]);
}

static void rule_short_send(void)
{
    char *big = calloc(1, BIG_SEND), *sink = malloc(BIG_SEND);
    int fds[2], small = 4096;
    struct io_uring_cqe cqe;
    size_t got = 0;

    expect(big && sink, "no memory");
    tcp_pair(fds);
    setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    io_uring_prep_send(sqe_for(5), fds[0], big, BIG_SEND, MSG_NOSIGNAL);
    next_cqe(&cqe);
    printf("4. send of %d bytes on a socket with SO_SNDBUF %d, peer not reading: CQE res %d\n",
           BIG_SEND, small, cqe.res);
    expect(cqe.res > 0 && cqe.res < BIG_SEND, "expected a short send, got %d", cqe.res);
    /* With MSG_WAITALL the kernel itself sends the rest as room appears. */
    io_uring_prep_send(sqe_for(6), fds[0], big, BIG_SEND, MSG_NOSIGNAL | MSG_WAITALL);
    io_uring_submit(&ring);
    while (got < (size_t)cqe.res + BIG_SEND) {
        ssize_t n = read(fds[1], sink, BIG_SEND);
        expect(n > 0, "peer read: %s", n < 0 ? strerror(errno) : "EOF");
        got += (size_t)n;
    }
    next_cqe(&cqe);
    printf("   the same send with MSG_WAITALL, the peer reading: CQE res %d (the kernel "
           "resubmitted)\n",
           cqe.res);
    expect(cqe.res == BIG_SEND, "MSG_WAITALL send returned %d", cqe.res);
    free(big);
    free(sink);
    close(fds[0]);
    close(fds[1]);
}

/* An empty buffer ring of 2 entries, registered as group BGID. */
static struct io_uring_buf_ring *rules_ring(void)
{
    struct io_uring_buf_reg reg = {.ring_entries = 2, .bgid = BGID};
    struct io_uring_buf_ring *br;

    br = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    expect(br != MAP_FAILED, "mmap: %s", strerror(errno));
    io_uring_buf_ring_init(br);
    reg.ring_addr = (unsigned long)br;
    expect(io_uring_register_buf_ring(&ring, &reg, 0) == 0, "register_buf_ring");
    return br;
}

static void rules_ring_free(struct io_uring_buf_ring *br)
{
    io_uring_unregister_buf_ring(&ring, BGID);
    munmap(br, 4096);
}

static void rule_enobufs(void)
{
    struct io_uring_buf_ring *br = rules_ring();
    struct io_uring_sqe *sqe;
    struct io_uring_cqe cqe;
    static char bufs[2][64];
    int fds[2];

    for (int i = 0; i < 2; i++)
        io_uring_buf_ring_add(br, bufs[i], sizeof(bufs[i]), (unsigned short)i,
                              io_uring_buf_ring_mask(2), i);
    io_uring_buf_ring_advance(br, 2);
    tcp_pair(fds);
    sqe = sqe_for(7);
    io_uring_prep_recv_multishot(sqe, fds[0], NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = BGID;
    printf("5. multishot recv over a ring of 2 buffers; the peer sends 3 times:\n");
    for (int i = 0; i < 3; i++) {
        expect(write(fds[1], "abc", 3) == 3, "write");
        next_cqe(&cqe);
        printf("   CQE res %d%s, buffer %d, F_MORE %s\n", cqe.res,
               cqe.res < 0 ? (cqe.res == -ENOBUFS ? " (ENOBUFS)" : " (?)") : "",
               cqe.flags & IORING_CQE_F_BUFFER ? (int)(cqe.flags >> IORING_CQE_BUFFER_SHIFT) : -1,
               cqe.flags & IORING_CQE_F_MORE ? "yes" : "no: the request has ended");
    }
    expect(cqe.res == -ENOBUFS && !(cqe.flags & IORING_CQE_F_MORE),
           "expected a last CQE with -ENOBUFS and no F_MORE");
    /* Give one buffer back and re-arm: the bytes waited in the socket. */
    io_uring_buf_ring_add(br, bufs[0], sizeof(bufs[0]), 0, io_uring_buf_ring_mask(2), 0);
    io_uring_buf_ring_advance(br, 1);
    sqe = sqe_for(7);
    io_uring_prep_recv_multishot(sqe, fds[0], NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = BGID;
    next_cqe(&cqe);
    printf("   one buffer given back, recv re-armed: CQE res %d, nothing lost\n", cqe.res);
    expect(cqe.res == 3, "re-armed recv returned %d", cqe.res);
    io_uring_buf_ring_add(br, bufs[0], sizeof(bufs[0]), 0, io_uring_buf_ring_mask(2), 0);
    io_uring_buf_ring_advance(br, 1);
    close(fds[1]); /* EOF ends the re-armed recv */
    next_cqe(&cqe);
    expect(cqe.res == 0 && !(cqe.flags & IORING_CQE_F_MORE), "EOF ends the multishot recv");
    close(fds[0]);
    rules_ring_free(br);
}

static void rule_emfile(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    struct rlimit old, low;
    struct io_uring_cqe cqe;
    int lfd, clients[3], got[3], accepted = 0, free_fd;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    expect(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(lfd, 8) == 0 &&
               getsockname(lfd, (struct sockaddr *)&sa, &len) == 0,
           "listener: %s", strerror(errno));
    for (int i = 0; i < 3; i++) {
        clients[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        expect(connect(clients[i], (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect");
    }
    /* Room for exactly one more fd: the lowest free one. The first accept
     * fits, the second not. */
    free_fd = dup(0);
    expect(free_fd >= 0, "dup: %s", strerror(errno));
    close(free_fd);
    getrlimit(RLIMIT_NOFILE, &old);
    low = old;
    low.rlim_cur = (rlim_t)free_fd + 1;
    setrlimit(RLIMIT_NOFILE, &low);
    io_uring_prep_multishot_accept(sqe_for(8), lfd, NULL, NULL, SOCK_CLOEXEC);
    printf("6. multishot accept, 3 clients waiting, room for 1 more fd:\n");
    do {
        next_cqe(&cqe);
        printf("   CQE res %d%s, F_MORE %s\n", cqe.res, cqe.res == -EMFILE ? " (EMFILE)" : "",
               cqe.flags & IORING_CQE_F_MORE ? "yes" : "no: the request has ended");
        if (cqe.res >= 0)
            got[accepted++] = cqe.res;
    } while ((cqe.flags & IORING_CQE_F_MORE) && accepted < 3);
    setrlimit(RLIMIT_NOFILE, &old);
    expect(accepted >= 1 && cqe.res == -EMFILE, "expected an accept then -EMFILE, got %d", cqe.res);
    printf("   re-arming at once would fail at once: a server waits (a timer, or a close)\n");
    for (int i = 0; i < accepted; i++)
        close(got[i]);
    for (int i = 0; i < 3; i++)
        close(clients[i]);
    close(lfd);
}

static void rule_poll_first(void)
{
    struct __kernel_timespec ms100 = {.tv_nsec = 100000000};
    struct io_uring_buf_ring *br = rules_ring(); /* left empty */
    struct io_uring_sqe *sqe;
    struct io_uring_cqe cqe, *waiting;
    static char buf[64];
    int fds[2], ret;

    tcp_pair(fds);
    printf("7. single-shot recv, buffer from an empty ring, the peer silent:\n");
    sqe = sqe_for(9);
    io_uring_prep_recv(sqe, fds[0], NULL, sizeof(buf), 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = BGID;
    next_cqe(&cqe);
    printf("   CQE res %d%s at once: the buffer is picked when the recv is tried\n", cqe.res,
           cqe.res == -ENOBUFS ? " (ENOBUFS)" : "");
    expect(cqe.res == -ENOBUFS, "a recv on a silent socket over an empty ring returned %d",
           cqe.res);
    sqe = sqe_for(10);
    io_uring_prep_recv(sqe, fds[0], NULL, sizeof(buf), 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = BGID;
    sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
    io_uring_submit(&ring);
    ret = io_uring_wait_cqe_timeout(&ring, &waiting, &ms100);
    printf("   the same with IORING_RECVSEND_POLL_FIRST: %s\n",
           ret == -ETIME ? "no CQE in 100 ms, it waits for bytes" : "a CQE at once");
    expect(ret == -ETIME, "with POLL_FIRST the recv completed at once (res %d)",
           ret == 0 ? waiting->res : ret);
    io_uring_buf_ring_add(br, buf, sizeof(buf), 0, io_uring_buf_ring_mask(2), 0);
    io_uring_buf_ring_advance(br, 1);
    expect(write(fds[1], "xyz", 3) == 3, "write");
    next_cqe(&cqe);
    printf("   a buffer given, then the peer writes: CQE res %d, buffer %d\n", cqe.res,
           cqe.flags & IORING_CQE_F_BUFFER ? (int)(cqe.flags >> IORING_CQE_BUFFER_SHIFT) : -1);
    expect(cqe.res == 3 && (cqe.flags & IORING_CQE_F_BUFFER), "the waiting recv returned %d",
           cqe.res);
    close(fds[0]);
    close(fds[1]);
    rules_ring_free(br);
}

int main(int argc, char **argv)
{
    static const char usage[] = "usage: uring-rules\nShows seven rules of io_uring networking on "
                                "loopback sockets; exit 0 when the kernel behaved as described.\n";

    if (argc == 2 && strcmp(argv[1], "-h") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc > 1) {
        fputs(usage, stderr);
        return 2;
    }
    ring_open_checked(&ring, "uring-rules", 16, 0, 0, 0,
                      RING_NEED_NET_OPS | RING_NEED_FAST_POLL | RING_NEED_BUF_RING |
                          RING_NEED_MULTISHOT_ACCEPT | RING_NEED_MULTISHOT_RECV,
                      false);
    signal(SIGPIPE, SIG_IGN);
    rule_order();
    rule_buffer_alive();
    rule_close_does_not_cancel();
    rule_short_send();
    rule_enobufs();
    rule_emfile();
    rule_poll_first();
    io_uring_queue_exit(&ring);
    printf("every rule held\n");
    return 0;
}
