/* SPDX-License-Identifier: MIT */
/* probe-try.c: capabilities of io_uring that uring-probe tries for real,
 * because no feature bit or opcode number tells them.
 */
#include "probe-try.h"

#include "uring-wait.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define PROBE_BGID    7    /* buffer group id of the multishot recv trial */
#define PROBE_WAIT_MS 2000 /* a trial's completion comes at once, or not at all */

/* Two NOPs, the first linked to the second. Returns 0 if both complete. */
int probe_try_link(struct io_uring *ring)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    struct io_uring_cqe a, b;
    int ret;

    io_uring_prep_nop(sqe);
    sqe->flags |= IOSQE_IO_LINK;
    io_uring_prep_nop(io_uring_get_sqe(ring));
    if ((ret = io_uring_submit(ring)) < 0)
        return ret;
    if ((ret = uring_wait_one(ring, &a, PROBE_WAIT_MS)) < 0 ||
        (ret = uring_wait_one(ring, &b, PROBE_WAIT_MS)) < 0)
        return ret;
    return a.res < 0 ? a.res : b.res;
}

int probe_try_registered_buffers(struct io_uring *ring)
{
    static char buf[4096];
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
    int ret = io_uring_register_buffers(ring, &iov, 1);

    if (ret == 0)
        io_uring_unregister_buffers(ring);
    return ret;
}

/* A listener with one connection waiting; a multishot ACCEPT must return it
 * with IORING_CQE_F_MORE (more to come). Before 5.19 the flag is -EINVAL. */
int probe_try_multishot_accept(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    struct io_uring ring;
    struct io_uring_cqe cqe;
    int lfd, cfd = -1, ret;

    if ((ret = io_uring_queue_init(4, &ring, 0)) < 0)
        return ret;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 4) < 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &len) < 0 ||
        (cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        connect(cfd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        ret = -errno;
        goto out;
    }
    io_uring_prep_multishot_accept(io_uring_get_sqe(&ring), lfd, NULL, NULL, SOCK_CLOEXEC);
    if ((ret = io_uring_submit(&ring)) >= 0 &&
        (ret = uring_wait_one(&ring, &cqe, PROBE_WAIT_MS)) == 0) {
        if (cqe.res >= 0)
            close(cqe.res);
        ret = cqe.res < 0 ? cqe.res : (cqe.flags & IORING_CQE_F_MORE) ? 0 : -EINVAL;
    }
out:
    io_uring_queue_exit(&ring); /* cancels the accept, which still holds lfd */
    if (cfd >= 0)
        close(cfd);
    if (lfd >= 0)
        close(lfd);
    return ret;
}

/* A provided buffer ring, then a multishot RECV that picks its buffers from
 * it: one byte arrives, and the CQE must carry IORING_CQE_F_MORE. */
void probe_try_multishot_recv(int *buf_ring, int *recv)
{
    struct io_uring_buf_reg reg = {.ring_entries = 4, .bgid = PROBE_BGID};
    struct io_uring_buf_ring *br;
    struct io_uring_sqe *sqe;
    struct io_uring_cqe cqe;
    struct io_uring ring;
    char bufs[4][64];
    int sv[2] = {-1, -1}, ret;

    *buf_ring = *recv = -ENOSYS;
    if ((ret = io_uring_queue_init(4, &ring, 0)) < 0)
        return;
    /* The ring of buffer descriptors must be page-aligned: mmap gives that. */
    br = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (br == MAP_FAILED)
        goto out;
    io_uring_buf_ring_init(br);
    reg.ring_addr = (unsigned long)br;
    if ((*buf_ring = io_uring_register_buf_ring(&ring, &reg, 0)) < 0)
        goto out;
    for (int i = 0; i < 4; i++)
        io_uring_buf_ring_add(br, bufs[i], sizeof(bufs[i]), (unsigned short)i,
                              io_uring_buf_ring_mask(4), i);
    io_uring_buf_ring_advance(br, 4);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        *recv = -errno;
        goto out;
    }
    sqe = io_uring_get_sqe(&ring);
    io_uring_prep_recv_multishot(sqe, sv[0], NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = PROBE_BGID;
    if ((ret = io_uring_submit(&ring)) < 0 || write(sv[1], "x", 1) != 1 ||
        (ret = uring_wait_one(&ring, &cqe, PROBE_WAIT_MS)) < 0) {
        *recv = ret < 0 ? ret : -EIO;
        goto out;
    }
    *recv = cqe.res < 0 ? cqe.res : (cqe.flags & IORING_CQE_F_MORE) ? 0 : -EINVAL;
out:
    io_uring_queue_exit(&ring); /* ends the recv before its buffers go away */
    if (sv[0] >= 0)
        close(sv[0]), close(sv[1]);
    if (br != MAP_FAILED)
        munmap(br, 4096);
}
