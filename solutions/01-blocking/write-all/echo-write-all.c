/* SPDX-License-Identifier: MIT */
/* echo-write-all: the blocking echo server of chapter 01, with its own write_all().
 *
 * This is chapters/01-blocking/echo-blocking.c with the echo going through
 * write_all() below instead of net_write_all() from common/. Writing that
 * loop is the exercise. The rest of the server is done, and stops as
 * echo-blocking does: SIGINT/SIGTERM set the flag, and the handler shuts
 * down the listener and the connection being served (net_stop_set_*()), so
 * the call the thread sleeps in ends whenever the signal comes. It leaves
 * out echo-blocking's -N option, and takes only ECONNABORTED from accept()
 * as a client's failure rather than the server's.
 *
 * Build and test, from the repository root:
 *     make ex EX=01-blocking/write-all       # your copy, in exercises/
 *     make hint EX=01-blocking/write-all     # one more hint each time
 * Run it by hand:
 *     make -C exercises/01-blocking/write-all
 *     build/exercises/01-blocking/write-all/echo-write-all -p 0
 */
#include "net.h"
#include "todo.h"

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

/* Write all `len` bytes of `data` to the blocking socket `fd`.
 *
 * Returns len when every byte went out, or -errno when it cannot finish:
 *   - write() may take fewer bytes than offered (a short write): write the rest;
 *   - write() may fail with EINTR when a signal handler ran: try again, unless
 *     that signal asked the server to stop (net_stop_requested): then -EINTR;
 *   - write() returning 0 for a non-empty buffer would make no progress: -EIO
 *     rather than loop forever;
 *   - any other failure (EPIPE, ECONNRESET: the client left): -errno. */
static ssize_t write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    size_t done = 0;

    /* EXERCISE BEGIN: keep writing until every byte is out (short writes, EINTR) */
    while (done < len) {
        ssize_t n;

        /* A short write can be a signal's doing (the kernel returns what it
         * copied before the signal): if it was SIGTERM, do not block again. */
        if (net_stop_requested)
            return -EINTR;
        n = write(fd, p + done, len - done);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n == 0)
            return -EIO;
        if (errno != EINTR)
            return -errno;
    }
    /* EXERCISE END */
    return (ssize_t)done;
}

static enum echo_end echo_client(int fd, const char *who, unsigned long long *echoed)
{
    char buf[ECHO_BUF_SIZE];

    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0 && net_stop_requested)
            return ECHO_STOP; /* EINTR, or the 0 of a connection the handler shut down */
        if (n == 0)
            return ECHO_CLIENT_LEFT;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "echo-write-all: read(fd=%d, %s): %s\n", fd, who, strerror(errno));
            return ECHO_CLIENT_LEFT;
        }
        ssize_t w = write_all(fd, buf, (size_t)n);
        if (w < 0) {
            if (net_stop_requested)
                return ECHO_STOP; /* -EINTR, or -EPIPE on a connection shut down */
            fprintf(stderr, "echo-write-all: write(fd=%d, %s): %s\n", fd, who, strerror((int)-w));
            return ECHO_CLIENT_LEFT;
        }
        if (w != n) {
            /* A write_all() that returns early without an error is a bug, not a client's doing. */
            fprintf(stderr, "echo-write-all: write_all(fd=%d, %zd bytes) returned %zd\n", fd, n, w);
            return ECHO_CLIENT_LEFT;
        }
        *echoed += (unsigned long long)n;
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

    net_cli_parse(&cli, argc, argv, "Blocking echo server with its own write_all().", NULL);
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
                break; /* EINTR, or EINVAL from the listener the handler shut down */
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            fprintf(stderr, "echo-write-all: accept(fd=%d): %s\n", listen_fd, strerror(errno));
            status = 1;
            break;
        }
        if (!net_stop_set_client(fd)) { /* the signal came before the handler could see fd */
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
