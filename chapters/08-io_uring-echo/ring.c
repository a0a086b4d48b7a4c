/* SPDX-License-Identifier: MIT */
/* ring.c: see ring.h. */
#include "ring.h"
#include "net.h"

#include "uring-wait.h"
#include "uring-why.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#define TRY_UD      0x7e57u /* user_data of a trial request */
#define TRY_BGID    0x7e57u /* buffer group id of the multishot recv trial */
#define CANCEL_UD   0xca1u  /* user_data of the cancel that ends it */
#define TRY_WAIT_MS 2000    /* a trial's CQE comes at once, or never */

static const char *ring__release(void)
{
    static struct utsname u;

    return uname(&u) == 0 ? u.release : "?";
}

int ring_open(struct io_uring *ring, unsigned entries, unsigned cq_entries, unsigned flags,
              unsigned sq_idle_ms, char *why, size_t len)
{
    struct io_uring_params p = {.flags = flags, .sq_thread_idle = sq_idle_ms};
    int ret;

    if (cq_entries) {
        p.flags |= IORING_SETUP_CQSIZE;
        p.cq_entries = cq_entries;
    }
    ret = io_uring_queue_init_params(entries, ring, &p);
    if (ret == -EINVAL && (flags & IORING_SETUP_DEFER_TASKRUN)) {
        /* Before 6.1: no deferred task work; the ring works without it. */
        flags &= ~(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
        return ring_open(ring, entries, cq_entries, flags, sq_idle_ms, why, len);
    }
    if (ret < 0)
        uring_why(ret, entries, flags, why, len); /* the sysctl, seccomp, an old kernel... */
    return ret;
}

/* snippet: try */
/* Submit the trial request in `sqe` and cancel it at once. A kernel that does
 * not know one of its flags fails it with -EINVAL as it reads the SQE, before
 * the cancel can find it; one that knows them reports -ECANCELED, or the
 * request's own early result. Returns the trial's result. */
static int ring__try(struct io_uring *ring, struct io_uring_sqe *sqe)
{
    struct io_uring_cqe a, b;
    int ret;

    io_uring_sqe_set_data64(sqe, TRY_UD);
    sqe = io_uring_get_sqe(ring);
    io_uring_prep_cancel64(sqe, TRY_UD, 0);
    io_uring_sqe_set_data64(sqe, CANCEL_UD);
    if ((ret = io_uring_submit(ring)) < 0)
        return ret;
    if ((ret = uring_wait_one(ring, &a, TRY_WAIT_MS)) < 0 ||
        (ret = uring_wait_one(ring, &b, TRY_WAIT_MS)) < 0)
        return ret;
    return a.user_data == TRY_UD ? a.res : b.res;
}
/* end snippet */

static int ring__try_multishot_accept(struct io_uring *ring)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    struct io_uring_sqe *sqe;
    int fd, ret;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return -errno;
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1) < 0) {
        ret = -errno;
    } else {
        sqe = io_uring_get_sqe(ring);
        io_uring_prep_multishot_accept(sqe, fd, NULL, NULL, SOCK_CLOEXEC);
        ret = ring__try(ring, sqe);
    }
    close(fd);
    return ret;
}

/* A buffer group with no buffers: a multishot recv on an idle socketpair then
 * fails with -ENOBUFS or waits (-ECANCELED); an unknown flag gives -EINVAL. */
static int ring__try_buf_ring_and_recv(struct io_uring *ring, bool recv, int *reg_ret)
{
    struct io_uring_buf_reg reg = {.ring_entries = 1, .bgid = TRY_BGID};
    long page = sysconf(_SC_PAGESIZE);
    struct io_uring_sqe *sqe;
    int sv[2], ret = 0;
    void *mem;

    mem = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return *reg_ret = -errno;
    io_uring_buf_ring_init(mem);
    reg.ring_addr = (unsigned long)mem;
    if ((*reg_ret = io_uring_register_buf_ring(ring, &reg, 0)) < 0 || !recv)
        goto out_unmap;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        ret = -errno;
        goto out_unregister;
    }
    sqe = io_uring_get_sqe(ring);
    io_uring_prep_recv_multishot(sqe, sv[0], NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = TRY_BGID;
    ret = ring__try(ring, sqe);
    close(sv[0]);
    close(sv[1]);
out_unregister:
    io_uring_unregister_buf_ring(ring, TRY_BGID);
out_unmap:
    munmap(mem, (size_t)page);
    return ret;
}

static int ring__try_cancel_fd(struct io_uring *ring)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ret;
    struct io_uring_cqe cqe;

    if (fd < 0)
        return -errno;
    io_uring_prep_cancel_fd(io_uring_get_sqe(ring), fd, IORING_ASYNC_CANCEL_ALL);
    ret = io_uring_submit(ring);
    if (ret >= 0)
        ret = uring_wait_one(ring, &cqe, TRY_WAIT_MS);
    close(fd);
    if (ret < 0)
        return ret;
    return cqe.res == -ENOENT ? 0 : cqe.res; /* nothing to cancel: the flags were understood */
}

/* snippet: check */
int ring_check(struct io_uring *ring, unsigned needs, char *why, size_t len)
{
    struct io_uring_probe *probe = NULL;
    int ret = 0, reg = 0;

#define MISSING(what, since, err)                                                                  \
    do {                                                                                           \
        snprintf(why, len, "%s needs Linux %s or newer; this kernel (%s) refused it: %s", what,    \
                 since, ring__release(), strerror(-(err)));                                        \
        ret = -EOPNOTSUPP;                                                                         \
        goto out;                                                                                  \
    } while (0)

    if (needs & RING_NEED_NET_OPS) {
        static const int ops[] = {IORING_OP_ACCEPT, IORING_OP_RECV,    IORING_OP_SEND,
                                  IORING_OP_READ,   IORING_OP_TIMEOUT, IORING_OP_ASYNC_CANCEL};
        if (!(probe = io_uring_get_probe_ring(ring)))
            MISSING("listing opcodes (IORING_REGISTER_PROBE)", "5.6", -EINVAL);
        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
            if (!io_uring_opcode_supported(probe, ops[i]))
                MISSING("IORING_OP_ACCEPT, _RECV, _SEND, _READ, _TIMEOUT, _ASYNC_CANCEL", "5.6",
                        -EINVAL);
    }
    if ((needs & RING_NEED_FAST_POLL) && !(ring->features & IORING_FEAT_FAST_POLL))
        MISSING("waiting in the kernel without a thread per request (IORING_FEAT_FAST_POLL)", "5.7",
                -EINVAL);
    if (needs & (RING_NEED_BUF_RING | RING_NEED_MULTISHOT_RECV)) {
        int r = ring__try_buf_ring_and_recv(ring, needs & RING_NEED_MULTISHOT_RECV, &reg);
        if (reg < 0)
            MISSING("provided buffer rings (io_uring_register_buf_ring)", "5.19", reg);
        if (r == -EINVAL)
            MISSING("multishot recv (IORING_RECV_MULTISHOT)", "6.0", r);
    }
    if (needs & RING_NEED_MULTISHOT_ACCEPT) {
        int r = ring__try_multishot_accept(ring);
        if (r == -EINVAL)
            MISSING("multishot accept (IORING_ACCEPT_MULTISHOT)", "5.19", r);
    }
    if (needs & RING_NEED_CANCEL_FD) {
        int r = ring__try_cancel_fd(ring);
        if (r < 0)
            MISSING("cancelling every request on an fd (IORING_ASYNC_CANCEL_FD | _ALL)", "5.19", r);
    }
#undef MISSING
out:
    if (probe)
        io_uring_free_probe(probe);
    return ret;
}
/* end snippet */

void ring_open_checked(struct io_uring *ring, const char *prog, unsigned entries,
                       unsigned cq_entries, unsigned flags, unsigned sq_idle_ms, unsigned needs,
                       bool report)
{
    char why[512];

    if (ring_open(ring, entries, cq_entries, flags, sq_idle_ms, why, sizeof(why)) < 0) {
        fprintf(stderr, "%s: %s\n", prog, why);
        exit(RING_EXIT_UNSUPPORTED);
    }
    if (ring_check(ring, needs, why, sizeof(why)) < 0) {
        fprintf(stderr, "%s: %s\n", prog, why);
        io_uring_queue_exit(ring);
        exit(RING_EXIT_UNSUPPORTED);
    }
    if (report) {
        static const char *names[] = {"network opcodes",  "fast poll",      "provided buffer rings",
                                      "multishot accept", "multishot recv", "cancel by fd"};
        printf("%s: this kernel (%s) has what it needs:", prog, ring__release());
        for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            if (needs & (1u << i))
                printf(" %s,", names[i]);
        printf(" %s\n", flags & IORING_SETUP_SQPOLL                ? "SQPOLL"
                        : ring->flags & IORING_SETUP_DEFER_TASKRUN ? "deferred task work"
                                                                   : "io_uring");
        io_uring_queue_exit(ring);
        exit(0);
    }
}

struct io_uring_sqe *ring_sqe(struct io_uring *ring)
{
    struct io_uring_sqe *sqe;

    while (!(sqe = io_uring_get_sqe(ring))) {
        int ret = io_uring_submit(ring);
        if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
            net_die(-ret, "io_uring_submit (queue full)");
        /* With SQPOLL, submitting only wakes the kernel thread: the slots
         * free up when it has copied the SQEs. */
        if (ring->flags & IORING_SETUP_SQPOLL)
            io_uring_sqring_wait(ring);
    }
    return sqe;
}
