/* SPDX-License-Identifier: MIT */
/* loopback.c: one TCP round trip over 127.0.0.1.
 *
 * A client sends one byte, an echo peer (a thread of this process) sends it
 * back. No wire, no network card: the bytes go down one TCP stack and up the
 * same one. What is left is the floor of any network call: two send()s, two
 * recv()s, two wake-ups of a sleeping thread, and the TCP/IP code on both
 * ways. TCP_NODELAY turns off Nagle's algorithm, which may hold back a small
 * segment while an earlier one is unacknowledged.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "latency.h"
#include "net.h"

static void *loopback__echo_peer(void *arg)
{
    int lfd = *(int *)arg, fd;
    char b;

    while ((fd = accept(lfd, NULL, NULL)) < 0 && errno == EINTR)
        ;
    if (fd < 0)
        net_die(errno, "accept(fd=%d)", lfd);
    net_set_nodelay(fd);
    /* Echo until the client closes: read() then returns 0. */
    while (net_read_exact(fd, &b, 1) == 1)
        if (net_write_all(fd, &b, 1) < 0)
            break;
    close(fd);
    return NULL;
}

/* snippet: rtt */
static void loopback__round_trips(void *ctx, long iters)
{
    int fd = *(int *)ctx;
    char b = 'x';

    for (long i = 0; i < iters; i++) {
        ssize_t w = net_write_all(fd, &b, 1);

        if (w < 0)
            net_die((int)-w, "send(fd=%d)", fd);
        if (net_read_exact(fd, &b, 1) != 1)
            net_die(ECONNRESET, "recv(fd=%d)", fd);
    }
}
/* end snippet */

double loopback_rtt_ns(const struct lat_cfg *cfg)
{
    pthread_t peer;
    int lfd, fd, port, err;
    double ns;

    if ((lfd = net_listen("127.0.0.1", 0, 1)) < 0)
        net_die(-lfd, "listen(127.0.0.1:0)");
    if ((port = net_local_port(lfd)) < 0)
        net_die(-port, "getsockname(fd=%d)", lfd);
    if ((err = pthread_create(&peer, NULL, loopback__echo_peer, &lfd)) != 0)
        net_die(err, "pthread_create(echo peer)");
    if ((fd = net_connect("127.0.0.1", port)) < 0)
        net_die(-fd, "connect(127.0.0.1:%d)", port);
    net_set_nodelay(fd);

    loopback__round_trips(&fd, 200); /* connection and both threads warm */
    ns = bench_batch_ns(loopback__round_trips, &fd, cfg->quick ? 2000 : 20000, cfg->reps);

    close(fd);
    pthread_join(peer, NULL);
    close(lfd);
    return ns;
}
