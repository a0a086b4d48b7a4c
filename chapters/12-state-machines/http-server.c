/* SPDX-License-Identifier: MIT */
/* http-server.c: the tiny HTTP/1.0 server the fetch programs of chapter 12 talk to.
 *
 *     make -C chapters/12-state-machines
 *     build/chapters/12-state-machines/http-server -p 0          # "listening on 127.0.0.1:PORT"
 *     build/chapters/12-state-machines/http-server -p 8080 -d 200 -s 100000
 *
 * GET /anything answers 200 with a body made up from the path: a first line
 * "you asked for /anything", then lower-case words, the same words for the
 * same path every time, so a test can fetch a page twice and compare.
 * GET /status/NNN answers with that status instead. Options:
 *   -d MS     wait MS milliseconds before answering (a slow backend: the
 *             client has to suspend while it waits)
 *   -s BYTES  make every 200 body exactly BYTES long (default: 100 to 499
 *             bytes, from the path)
 *
 * It is a test fixture, not the subject of the chapter, so it is the simplest
 * server that keeps the course's server contract: blocking, one client at a
 * time (chapter 01's shape), with a 5 s receive timeout so a silent client
 * cannot hold it. SIGINT/SIGTERM interrupt whatever call it sleeps in
 * (no SA_RESTART), and it closes everything and exits 0.
 */
#include "net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REQ_MAX  8192
#define BODY_MAX (64L << 20)

struct server_opts {
    long delay_ms; /* -d */
    long size;     /* -s, 0 = from the path */
};

static int on_opt(int opt, const char *arg, void *ctx)
{
    struct server_opts *o = ctx;

    if (opt == 'd')
        return net_parse_int(arg, 0, 60000, &o->delay_ms) == 0 ? 0 : -1;
    if (opt == 's')
        return net_parse_int(arg, 1, BODY_MAX, &o->size) == 0 ? 0 : -1;
    return -1;
}

/* FNV-1a: the same path always gives the same body. */
static unsigned long path_hash(const char *path)
{
    unsigned long h = 2166136261u;

    for (; *path; path++)
        h = (h ^ (unsigned char)*path) * 16777619u;
    return h;
}

/* The body for `path`: "you asked for PATH\n", then words chosen by the
 * path's hash, a newline every 8 words, cut to exactly `size` bytes. */
static char *make_body(const char *path, long size, size_t *len)
{
    static const char *const words[] = {"state", "machine", "await",  "resume", "frame",
                                        "stack", "epoll",   "socket", "task",   "loop"};
    unsigned long h = path_hash(path), k = 0;
    size_t want = size ? (size_t)size : 100 + h % 400, n;
    char *b = malloc(want + 64);

    if (!b)
        return NULL;
    n = (size_t)snprintf(b, want + 64, "you asked for %.200s\n", path);
    while (n < want) {
        h = h * 6364136223846793005UL + 1442695040888963407UL; /* an LCG: cheap and fixed */
        n += (size_t)snprintf(b + n, want + 64 - n, "%s%c", words[(h >> 33) % 10],
                              ++k % 8 == 0 ? '\n' : ' ');
    }
    b[want - 1] = '\n';
    *len = want;
    return b;
}

/* Sleep MS milliseconds, unless a shutdown signal comes first. */
static void delay(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !net_stop_requested)
        ;
}

/* Read the request head (up to the blank line). Returns its length, 0 if the
 * client left, timed out or sent too much, -1 on a shutdown signal. */
static ssize_t read_request(int fd, char *req)
{
    size_t got = 0;

    while (got < REQ_MAX - 1) {
        ssize_t n = recv(fd, req + got, REQ_MAX - 1 - got, 0);
        if (n < 0 && errno == EINTR) {
            if (net_stop_requested)
                return -1;
            continue;
        }
        if (n <= 0)
            return 0; /* EOF, reset, or the 5 s SO_RCVTIMEO (EAGAIN) */
        got += (size_t)n;
        req[got] = '\0';
        if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
            return (ssize_t)got;
    }
    return 0;
}

static void serve(int fd, const struct server_opts *o)
{
    char req[REQ_MAX], path[256], head[256], *body = NULL;
    const char *reason = "OK";
    size_t len = 0;
    int status = 200, hlen;
    struct timeval tv = {5, 0};

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (read_request(fd, req) <= 0)
        return;
    if (sscanf(req, "GET %255s HTTP/1.%*c", path) != 1) {
        status = 400, reason = "Bad Request";
    } else if (strncmp(path, "/status/", 8) == 0) {
        status = atoi(path + 8);
        if (status < 100 || status > 599)
            status = 400;
        reason = "Status Asked For";
    }
    if (o->delay_ms)
        delay(o->delay_ms);
    if (net_stop_requested)
        return;
    if (status == 200 && !(body = make_body(path, o->size, &len)))
        status = 500, reason = "Out Of Memory";
    hlen = snprintf(head, sizeof(head),
                    "HTTP/1.0 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                    "Connection: close\r\n\r\n",
                    status, reason, len);
    if (net_write_all(fd, head, (size_t)hlen) >= 0 && len)
        net_write_all(fd, body, len); /* a client that left is not our problem */
    free(body);
}

int main(int argc, char **argv)
{
    struct server_opts o = {0, 0};
    struct net_cli_extra extra = {
        .optstring = "d:s:",
        .usage = "  -d MS     wait MS milliseconds before each answer (default 0)\n"
                 "  -s BYTES  every 200 body is BYTES long (default: 100-499, from the path)\n",
        .on_opt = on_opt,
        .ctx = &o,
    };
    struct net_cli cli;
    int lfd;

    net_cli_parse(&cli, argc, argv, "A tiny HTTP/1.0 server, one client at a time.", &extra);
    /* Before listening: a test may signal as soon as it sees the port. The
     * handler also shuts down the listener and the client being served, so
     * a signal between the flag test and accept() or recv() is not lost
     * (chapter 01, "Signals, EINTR, and stopping a blocked server"). */
    net_on_shutdown_signals();
    lfd = net_listen_stoppable_or_die(&cli, 128); /* the handler shuts it down */
    while (!net_stop_requested) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (net_stop_requested)
                break; /* EINTR, or EINVAL from the listener shut down */
            if (errno != EINTR && errno != ECONNABORTED)
                fprintf(stderr, "accept(fd=%d): %s\n", lfd, strerror(errno));
            if (errno == EMFILE || errno == ENFILE)
                delay(100); /* the client waits in the backlog; do not spin */
            continue;
        }
        if (!net_stop_set_client(fd)) {
            close(fd);
            break;
        }
        serve(fd, &o);
        net_stop_set_client(-1);
        close(fd);
    }
    close(lfd);
    return 0;
}
