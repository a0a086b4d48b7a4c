/* SPDX-License-Identifier: MIT */
/* echo-naive.c: echo-blocking with the bug most example servers have. Do not copy.
 *
 * It is echo-blocking.c with one change: the echo is one write() whose
 * result is checked for -1 and otherwise ignored. write() returns how many
 * bytes the kernel took, which may be fewer than offered; the rest are
 * silently dropped. On a blocking socket on an idle machine the kernel
 * usually takes everything, so the bug survives demos and reviews. It shows
 * under load, when a signal interrupts a write (short-write-demo), or on
 * demand with the course's faults shim:
 *
 *     make -C chapters/01-blocking && make -C common
 *     LD_PRELOAD=build/common/faults/libfaults.so FAULTS_SHORT_WRITE=50 \
 *         build/chapters/01-blocking/echo-naive -p 0
 *     head -c 1000000 /dev/urandom | build/common/tools/echo-client -p PORT | wc -c
 *
 * It is a separate program, not a flag of echo-blocking, so that
 * echo-blocking.c holds only code worth copying. Everything else (the
 * contract: -b/-p/-h, SIGINT/SIGTERM, TCP_NODELAY, the log
 * lines) is the same; only echo-blocking's -N, a demonstration switch, is left out.
 */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ECHO_BUF_SIZE (16 * 1024)
#define ECHO_BACKLOG  128

enum echo_end { ECHO_CLIENT_LEFT, ECHO_STOP };

static enum echo_end echo_client(int fd, const char *who, unsigned long long *echoed)
{
    char buf[ECHO_BUF_SIZE];

    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0 && net_stop_requested)
            return ECHO_STOP;
        if (n == 0)
            return ECHO_CLIENT_LEFT;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "echo-naive: read(fd=%d, %s): %s\n", fd, who, strerror(errno));
            return ECHO_CLIENT_LEFT;
        }
        /* snippet: naive-write */
        if (write(fd, buf, (size_t)n) < 0) { /* BUG: a short count loses the rest */
            if (net_stop_requested)
                return ECHO_STOP;
            fprintf(stderr, "echo-naive: write(fd=%d, %s): %s\n", fd, who, strerror(errno));
            return ECHO_CLIENT_LEFT;
        }
        *echoed += (unsigned long long)n; /* BUG: counts bytes that may not have gone out */
        /* end snippet */
    }
}

static void echo__peer_name(const struct sockaddr_in *sa, char *out, size_t size)
{
    char ip[INET_ADDRSTRLEN] = "?";

    inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof(ip));
    snprintf(out, size, "%s:%d", ip, ntohs(sa->sin_port));
}

int main(int argc, char **argv)
{
    struct net_cli cli;
    int listen_fd, status = 0;

    net_cli_parse(&cli, argc, argv,
                  "Echo server that ignores short writes (a bug, for demonstration).", NULL);
    setvbuf(stdout, NULL, _IOLBF, 0);
    net_on_shutdown_signals();
    listen_fd = net_listen_stoppable_or_die(&cli, ECHO_BACKLOG); /* the handler shuts it down */

    while (!net_stop_requested) {
        struct sockaddr_in peer;
        socklen_t peer_len = sizeof(peer);
        unsigned long long echoed = 0;
        char who[64];

        int fd = accept(listen_fd, (struct sockaddr *)&peer, &peer_len);
        if (fd < 0) {
            if (net_stop_requested)
                break;
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            fprintf(stderr, "echo-naive: accept(fd=%d): %s\n", listen_fd, strerror(errno));
            status = 1;
            break;
        }
        if (!net_stop_set_client(fd)) {
            close(fd);
            break;
        }
        net_set_nodelay(fd); /* as in echo-blocking: no Nagle stalls after short writes */
        echo__peer_name(&peer, who, sizeof(who));
        printf("client %s connected\n", who);
        enum echo_end end = echo_client(fd, who, &echoed);
        net_stop_set_client(-1);
        close(fd);
        printf("client %s done, %llu bytes echoed\n", who, echoed);
        if (end == ECHO_STOP)
            break;
    }

    close(listen_fd);
    return status;
}
