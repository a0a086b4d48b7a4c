/* SPDX-License-Identifier: MIT */
/* echo-epoll-reuseport.c: one edge-triggered loop per thread, one listener each.
 *
 * N threads (-w N), each running echo-epoll-et's loop (loop.c) with its own
 * epoll instance and its own listening socket. All N sockets are bound to
 * the same address and port, which SO_REUSEPORT allows, and the kernel
 * spreads incoming connections over them by a hash of the client's address
 * and port. A connection then lives and dies on the thread that accepted
 * it: the threads share no connection, no lock and no epoll, so nothing
 * here needs synchronising (only the signalfd is watched by all).
 *
 *     make -C chapters/05-epoll-edge
 *     build/chapters/05-epoll-edge/echo-epoll-reuseport -p 0 -w 4
 *     build/common/tools/echo-load -p PORT -c 100 -n 100   (from another terminal)
 *
 * On exit it prints one line per thread: the connections it accepted, which
 * shows how the kernel spread them. SO_REUSEPORT: Linux 3.9 or later; only
 * sockets of the same user may join a port's group.
 */
#include "loop.h"
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_WORKERS         64
#define DEFAULT_READ_BUDGET 4

/* snippet: listen */
/* A listening socket that joins the port's SO_REUSEPORT group. Every member
 * must set the option before bind(), the first one included. */
static int reuseport_listen(const char *addr, int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd, one = 1;

    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
        return -EINVAL;
    if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return -errno;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, SOMAXCONN) < 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    return fd;
}
/* end snippet */

static void *worker_main(void *arg)
{
    loop_run(arg);
    return NULL;
}

static int on_opt(int opt, const char *arg, void *ctx)
{
    long v;

    if (opt != 'w' || net_parse_int(arg, 1, MAX_WORKERS, &v) < 0)
        return -1;
    *(int *)ctx = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int workers = cpus < 1 ? 1 : cpus > MAX_WORKERS ? MAX_WORKERS : (int)cpus;
    struct net_cli_extra extra = {
        .optstring = "w:",
        .usage =
            "  -w N      threads, each with its own listener and epoll (1-64; default 1 per CPU)\n",
        .on_opt = on_opt,
        .ctx = &workers,
    };
    struct net_cli cli;
    struct loop *loops;
    pthread_t *threads;
    int sig, port, err;

    net_cli_parse(&cli, argc, argv,
                  "An echo server: one edge-triggered epoll loop per thread, SO_REUSEPORT.",
                  &extra);
    loops = calloc((size_t)workers, sizeof(*loops));
    threads = calloc((size_t)workers, sizeof(*threads));
    if (!loops || !threads)
        net_die(ENOMEM, "calloc(%d workers)", workers);
    sig = net_signalfd_or_die(SFD_NONBLOCK); /* before the threads: they inherit the blocked mask */

    /* snippet: main */
    /* The first socket binds the port asked for (0: any); the others join
     * the group on the port it got. */
    port = cli.port;
    for (int i = 0; i < workers; i++) {
        int fd = reuseport_listen(cli.addr, port);
        if (fd < 0)
            net_die(-fd, "listen on %s:%d with SO_REUSEPORT", cli.addr, port);
        if (i == 0 && (port = net_local_port(fd)) < 0)
            net_die(-port, "getsockname(fd=%d)", fd);
        loop_init(&loops[i], fd, sig, DEFAULT_READ_BUDGET, false);
    }
    net_announce(loops[0].listener.fd);
    for (int i = 0; i < workers; i++)
        if ((err = pthread_create(&threads[i], NULL, worker_main, &loops[i])) != 0)
            net_die(err, "pthread_create(worker %d)", i);
    for (int i = 0; i < workers; i++)
        pthread_join(threads[i], NULL);
    /* end snippet */

    for (int i = 0; i < workers; i++) {
        printf("thread %d: accepted %lu connections\n", i, loops[i].stats.accepted);
        loop_close(&loops[i]);
    }
    close(sig);
    free(threads);
    free(loops);
    return 0;
}
