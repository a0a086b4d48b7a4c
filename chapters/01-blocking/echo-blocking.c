/* SPDX-License-Identifier: MIT */
/* echo-blocking.c: an echo server that serves one client at a time.
 *
 * Every call here blocks: accept() sleeps until a client connects, read()
 * until that client sends something or closes, write() until the kernel has
 * taken every byte of the echo. One thread can only sleep in one call, so
 * while it waits on client A, client B's connection sits finished but
 * un-accepted in the listen queue, and B's bytes sit unread in the kernel.
 * B is served when A leaves. That is the cost this chapter measures and the
 * next chapters remove (threads in 02, readiness in 03-05, completions in 07-09).
 *
 * Writes go through net_write_all(), which loops until the kernel took every
 * byte: a write() may take only part of the buffer (see echo-naive.c for the
 * server that forgets, and short-write-demo.c for when the kernel does that).
 *
 * Options: the server contract's -b ADDR, -p PORT, -h; and -N, which leaves
 * Nagle's algorithm on (no TCP_NODELAY) to show what it costs after short
 * writes (the chapter's README measures it).
 *
 * Shutdown: SIGINT/SIGTERM set net_stop_requested, and the handler (net.c)
 * also shuts down the listener and the connection being served, so that
 * the call the thread sleeps in ends whatever moment the signal comes at:
 * before the call (a flag alone would be missed then), during it, or after.
 *
 * Build and run, from the repository root:
 *     make -C chapters/01-blocking
 *     build/chapters/01-blocking/echo-blocking -p 0       # prints "listening on 127.0.0.1:PORT"
 *     build/common/tools/echo-client -p PORT hello        # in another terminal
 */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ECHO_BUF_SIZE (16 * 1024)
/* Connections the kernel completes and queues for us while we serve someone
 * else. A one-at-a-time server needs a deep queue: everyone else waits there. */
#define ECHO_BACKLOG 128

enum echo_end { ECHO_CLIENT_LEFT, ECHO_STOP };

struct echo_opts {
    bool nagle; /* -N: leave Nagle's algorithm on, to see what it costs */
};

/* Echo one client until it closes its side (EOF), resets, or a shutdown
 * signal arrives. A client's failure is logged, never fatal to the server. */
/* snippet: echo-client */
static enum echo_end echo_client(int fd, const char *who, unsigned long long *echoed)
{
    char buf[ECHO_BUF_SIZE];

    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf)); /* sleeps until bytes or EOF arrive */
        if (n <= 0 && net_stop_requested)
            return ECHO_STOP; /* EINTR, or the 0 of a connection the handler shut down */
        if (n == 0)
            return ECHO_CLIENT_LEFT; /* EOF: every byte it sent has been echoed */
        if (n < 0) {
            if (errno == EINTR)
                continue; /* another signal's handler ran: read again */
            fprintf(stderr, "echo-blocking: read(fd=%d, %s): %s\n", fd, who, strerror(errno));
            return ECHO_CLIENT_LEFT;
        }
        ssize_t w = net_write_all(fd, buf, (size_t)n); /* sleeps until the kernel took all */
        if (w < 0 && net_stop_requested)
            return ECHO_STOP; /* EINTR, or EPIPE on a connection shut down */
        if (w < 0) {
            fprintf(stderr, "echo-blocking: write(fd=%d, %s): %s\n", fd, who, strerror((int)-w));
            return ECHO_CLIENT_LEFT;
        }
        *echoed += (unsigned long long)n;
    }
}
/* end snippet */

static void echo__peer_name(const struct sockaddr_in *sa, char *out, size_t size)
{
    char ip[INET_ADDRSTRLEN] = "?";

    inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof(ip));
    snprintf(out, size, "%s:%d", ip, ntohs(sa->sin_port));
}

/* accept() errors that concern one would-be client, not the server: the
 * connection died in the queue, or (Linux) a network error is pending on it. */
static int echo__accept_error_is_transient(int err)
{
    return err == ECONNABORTED || err == EPROTO || err == ENETDOWN || err == ENOPROTOOPT ||
           err == EHOSTDOWN || err == ENONET || err == EHOSTUNREACH || err == EOPNOTSUPP ||
           err == ENETUNREACH;
}

static int echo__on_opt(int opt, const char *arg, void *ctx)
{
    struct echo_opts *opts = ctx;

    (void)arg;
    if (opt != 'N')
        return -1;
    opts->nagle = true;
    return 0;
}

int main(int argc, char **argv)
{
    struct echo_opts opts = {.nagle = false};
    struct net_cli_extra extra = {
        .optstring = "N",
        .usage = "  -N        keep Nagle's algorithm on (no TCP_NODELAY)\n",
        .on_opt = echo__on_opt,
        .ctx = &opts,
    };
    struct net_cli cli;
    int listen_fd, status = 0;

    net_cli_parse(&cli, argc, argv, "Echo server that serves one client at a time (blocking I/O).",
                  &extra);
    setvbuf(stdout, NULL, _IOLBF, 0); /* each log line out as it happens, even into a file */
    net_on_shutdown_signals();
    listen_fd = net_listen_stoppable_or_die(&cli, ECHO_BACKLOG); /* the handler shuts it down */

    /* snippet: accept-loop */
    while (!net_stop_requested) {
        struct sockaddr_in peer;
        socklen_t peer_len = sizeof(peer);
        unsigned long long echoed = 0;
        char who[64];

        int fd = accept(listen_fd, (struct sockaddr *)&peer, &peer_len); /* sleeps */
        if (fd < 0) {
            if (net_stop_requested)
                break; /* EINTR, or EINVAL from the listener the handler shut down */
            if (errno == EINTR || echo__accept_error_is_transient(errno))
                continue;
            fprintf(stderr, "echo-blocking: accept(fd=%d): %s\n", listen_fd, strerror(errno));
            status = 1;
            break;
        }
        if (!net_stop_set_client(fd)) { /* the signal came before the handler could see fd */
            close(fd);
            break;
        }
        /* An echo often goes out in pieces (short writes). Nagle's algorithm
         * holds a small piece until the previous one is acknowledged, and
         * the client delays that ACK while it waits for the rest: 40 ms
         * stalls. A failure here costs only latency, so it is not fatal. */
        if (!opts.nagle)
            net_set_nodelay(fd);
        echo__peer_name(&peer, who, sizeof(who));
        printf("client %s connected\n", who);
        enum echo_end end = echo_client(fd, who, &echoed);
        net_stop_set_client(-1);
        close(fd);
        printf("client %s done, %llu bytes echoed\n", who, echoed);
        if (end == ECHO_STOP)
            break;
    }
    /* end snippet */

    close(listen_fd);
    return status;
}
