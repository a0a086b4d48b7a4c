/* SPDX-License-Identifier: MIT */
/* uring-sketch.c: the io_uring "echo server" of a typical blog post. Do not copy.
 *
 * One accept, one recv, one send, each waited for in turn, then exit. It
 * shows the three calls of the completion model (get an SQE, submit, wait
 * for the CQE), and nothing a server needs:
 *   - one client, one message: there is no loop, and no second accept;
 *   - the recv takes whatever has arrived, at most one buffer: a message
 *     longer than that, or sent in two pieces, is cut;
 *   - the send's result is not looked at: a short send loses the rest;
 *   - cqe->res is used as it is, though it may be -errno (a failed accept
 *     would make the "fd" -24);
 *   - while it waits, it serves nobody else, exactly like chapter 01.
 * The usual post also binds 0.0.0.0 (every interface); this one uses the
 * course's contract (127.0.0.1 unless -b says otherwise), and exits 0 on
 * SIGINT/SIGTERM. echo-uring-basic.c is the same model done properly.
 *
 *     make -C chapters/08-io_uring-echo
 *     build/chapters/08-io_uring-echo/uring-sketch -p 0
 *     head -c 5000 /dev/urandom | build/common/tools/echo-client -p PORT | wc -c
 */
#include "net.h"

#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define SKETCH_BUF 4096

/* Submit, wait for the one CQE, return its res. A signal ends the program. */
static int sketch_wait(struct io_uring *ring)
{
    struct io_uring_cqe *cqe;
    int res;

    io_uring_submit(ring);
    if (io_uring_wait_cqe(ring, &cqe) < 0) /* -EINTR: SIGINT or SIGTERM */
        exit(0);
    res = cqe->res;
    io_uring_cqe_seen(ring, cqe);
    return res;
}

int main(int argc, char **argv)
{
    struct net_cli cli;
    struct io_uring ring;
    char buf[SKETCH_BUF];
    int lfd, cfd, n, ret;

    net_cli_parse(&cli, argc, argv, "A one-shot io_uring echo, as blog posts show it.", NULL);
    net_on_shutdown_signals();
    if ((ret = io_uring_queue_init(8, &ring, 0)) < 0)
        net_die(-ret, "io_uring_queue_init");
    lfd = net_listen_or_die(&cli, 16);

    /* snippet: sketch */
    io_uring_prep_accept(io_uring_get_sqe(&ring), lfd, NULL, NULL, 0);
    cfd = sketch_wait(&ring);

    io_uring_prep_recv(io_uring_get_sqe(&ring), cfd, buf, sizeof(buf), 0);
    n = sketch_wait(&ring);

    io_uring_prep_send(io_uring_get_sqe(&ring), cfd, buf, n, 0);
    sketch_wait(&ring);

    close(cfd);
    /* end snippet */
    close(lfd);
    io_uring_queue_exit(&ring);
    return 0;
}
