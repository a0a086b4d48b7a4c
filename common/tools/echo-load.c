/* SPDX-License-Identifier: MIT */
/* echo-load.c: measure an echo server's throughput and latency, checking every byte.
 *
 *     echo-load -p 8080                       # 1 connection, 1000 ping-pong messages of 128 bytes
 *     echo-load -p 8080 -c 50 -n 1000         # 50 connections at once
 *     echo-load -p 8080 -c 10 -D 8 -d 5       # 8 messages in flight per connection, for 5 s
 *     echo-load -p 8080 -l 1M -D 2            # messages bigger than any socket buffer
 *     echo-load -p 8080 -c 1000 --idle        # hold 1000 idle connections until Ctrl-C
 *     echo-load -p 8080 -c 200 -n 3 -l 20000 --vary 7 --eager   # 200 clients of 1 to 20000 bytes
 *
 * One thread drives every connection from one epoll loop, so the tool itself
 * stays cheap next to the server it measures. Each connection keeps up to
 * DEPTH messages in flight: it writes a message, and writes the next one as
 * soon as an echo completes (DEPTH 1 is ping-pong, more is pipelining).
 *
 * A message's bytes come from a hash of (connection, message number, offset),
 * so nothing is stored: the expected echo is computed again when it arrives
 * and compared byte for byte. A server that loses, duplicates, reorders or
 * corrupts a single byte is caught and the first bad byte is named.
 *
 * Latency is from the write() that carried a message's first byte to the
 * read() that brought its last echoed byte, on CLOCK_MONOTONIC. See README.md
 * for the report's fields. Exit status: 0 no errors, 1 errors, 2 bad arguments.
 */
#include "clock.h"
#include "load-hist.h"
#include "load-opts.h"
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define NS_PER_S             1000000000LL
#define LOAD_IO_SIZE         (256u << 10) /* the most one read() or write() moves */
#define LOAD_FD_MARGIN       10           /* stdio, epoll, the stop pipe, and spare */
#define LOAD_GRACE_NS        (5 * NS_PER_S)
#define LOAD_MAX_ERROR_LINES 10

enum conn_state { CONN_CONNECTING, CONN_RUNNING, CONN_DONE, CONN_FAILED };

struct conn {
    int fd;
    enum conn_state state;
    uint32_t events;   /* what epoll watches for it now */
    size_t len;        /* its messages' length: -l, or drawn by --vary */
    uint64_t send_seq; /* messages written completely */
    size_t send_off;   /* bytes of message send_seq written */
    uint64_t recv_seq; /* messages echoed completely and verified */
    size_t recv_off;   /* bytes of message recv_seq echoed */
    int64_t *started;  /* when each message in flight was started, at [seq % depth] */
};

struct load {
    struct load_opts o;
    struct conn *conns;
    int64_t *started;
    int epfd, stopfd;
    unsigned char *io, *expect; /* LOAD_IO_SIZE each, shared by all connections */
    struct load_hist lat;
    uint64_t requests, errors;
    uint64_t bytes;                     /* echoed and verified, in whole messages */
    unsigned connecting, running, held; /* held: checked and kept open by --idle */
    unsigned error_lines, errors_unshown;
    bool measuring; /* every connect finished: messages may flow */
    bool draining;  /* -d is over: finish the messages begun, begin none */
    bool stopped;   /* SIGINT or SIGTERM */
    int64_t t_begin, t_start, t_end, deadline, run_end, grace_end; /* clock_now_ns() */
};

/* ---- the message pattern ---- */

/* splitmix64's finaliser: each input bit flips about half of the output bits,
 * so neighbouring (connection, message, word) triples give unrelated bytes. */
static inline uint64_t load__mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Bytes [off, off + n) of message `seq` of connection `conn`. Only this
 * process writes and checks them, so the words' byte order does not matter. */
static void load__pattern(unsigned char *dst, unsigned conn, uint64_t seq, size_t off, size_t n)
{
    uint64_t seed = load__mix(((uint64_t)conn << 40) ^ seq ^ 0x9e3779b97f4a7c15ULL);
    size_t i = off, end = off + n;

    while (i < end) {
        uint64_t w = load__mix(seed + (i >> 3) * 0x9e3779b97f4a7c15ULL);
        size_t skip = i & 7, take = 8 - skip < end - i ? 8 - skip : end - i;

        memcpy(dst, (unsigned char *)&w + skip, take);
        dst += take;
        i += take;
    }
}

/* ---- connections ---- */

static void load__error(struct load *l, unsigned i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One line per failure, but only the first few: a refused -c 10000 must not
 * bury the report under ten thousand identical lines. */
static void load__error(struct load *l, unsigned i, const char *fmt, ...)
{
    va_list ap;

    if (l->error_lines >= LOAD_MAX_ERROR_LINES) {
        l->errors_unshown++;
        return;
    }
    l->error_lines++;
    fprintf(stderr, "echo-load: conn %u: ", i);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* The messages a connection still owes: all that are left with -n, so that
 * requests + errors = CONNS x REQUESTS; with -d, those in flight, at least one. */
static uint64_t conn_unfinished(const struct load *l, const struct conn *c)
{
    uint64_t begun = c->send_seq + (c->send_off > 0);

    if (l->o.requests > 0)
        return l->o.requests - c->recv_seq;
    return begun - c->recv_seq > 0 ? begun - c->recv_seq : 1;
}

static void conn_close(struct load *l, struct conn *c, enum conn_state state)
{
    if (c->state == CONN_CONNECTING)
        l->connecting--;
    else if (c->state == CONN_RUNNING)
        l->running--;
    else if (c->state == CONN_DONE && c->fd >= 0)
        l->held--;
    if (c->fd >= 0)
        close(c->fd); /* also removes it from the epoll set */
    c->fd = -1;
    c->state = state;
}

static void conn_fail(struct load *l, struct conn *c)
{
    l->errors += conn_unfinished(l, c);
    conn_close(l, c, CONN_FAILED);
}

static int conn_watch(struct load *l, struct conn *c, uint32_t events)
{
    if (events == c->events)
        return 0;
    if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, c->fd, &(struct epoll_event){events, {.ptr = c}}) < 0) {
        load__error(l, (unsigned)(c - l->conns), "epoll_ctl(MOD, fd %d): %s", c->fd,
                    strerror(errno));
        conn_fail(l, c);
        return -1;
    }
    c->events = events;
    return 0;
}

/* A connection is finished when it has every echo it waits for. With -d,
 * once the time is up, that is when nothing is in flight any more. */
static void conn_check_done(struct load *l, struct conn *c)
{
    bool done = l->o.requests > 0 ? c->recv_seq == l->o.requests
                                  : l->draining && c->recv_seq == c->send_seq && c->send_off == 0;

    if (!done)
        return;
    if (l->o.idle) {
        /* Keep it open, watching only for the server closing it while idle. */
        l->running--;
        l->held++;
        c->state = CONN_DONE;
        conn_watch(l, c, EPOLLIN | EPOLLRDHUP);
        return;
    }
    conn_close(l, c, CONN_DONE);
}

/* May message `seq` be started now? Within the window, the count and the time. */
static bool conn_may_start(const struct load *l, const struct conn *c, uint64_t seq)
{
    if (l->draining || !l->measuring)
        return false;
    if (l->o.requests > 0 && seq >= l->o.requests)
        return false;
    return seq - c->recv_seq < l->o.depth;
}

/* Write as much as the window allows and the socket takes. Messages go out
 * back to back in one write(), which is what makes pipelining pay. */
static void conn_send(struct load *l, struct conn *c)
{
    unsigned i = (unsigned)(c - l->conns);

    for (;;) {
        uint64_t seq = c->send_seq;
        int64_t now = clock_now_ns();
        size_t off = c->send_off, have = 0, total;
        ssize_t n;

        while (have < LOAD_IO_SIZE && (off > 0 || conn_may_start(l, c, seq))) {
            size_t take = c->len - off < LOAD_IO_SIZE - have ? c->len - off : LOAD_IO_SIZE - have;
            if (off == 0) /* stamped again if this write turns out not to carry it */
                c->started[seq % l->o.depth] = now;
            load__pattern(l->io + have, i, seq, off, take);
            have += take;
            off += take;
            if (off == c->len)
                off = 0, seq++;
        }
        if (have == 0) {
            conn_watch(l, c, EPOLLIN);
            return;
        }
        /* MSG_NOSIGNAL: a reset connection is an error to count, not SIGPIPE. */
        n = send(c->fd, l->io, have, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            load__error(l, i, "write: %s (after %llu messages)", strerror(errno),
                        (unsigned long long)c->recv_seq);
            conn_fail(l, c);
            return;
        }
        if (n > 0) {
            total = c->send_off + (size_t)n;
            c->send_seq += total / c->len;
            c->send_off = total % c->len;
        }
        if (n < (ssize_t)have) {
            /* The socket buffer is full: let epoll say when it has room. */
            conn_watch(l, c, EPOLLIN | EPOLLOUT);
            return;
        }
    }
}

/* Check a piece of echo against the pattern and count the messages it
 * completes. Returns -1 (connection failed) on a wrong byte. */
static int conn_verify(struct load *l, struct conn *c, const unsigned char *data, size_t n,
                       int64_t now)
{
    unsigned i = (unsigned)(c - l->conns);

    while (n > 0) {
        size_t take = c->len - c->recv_off < n ? c->len - c->recv_off : n;

        load__pattern(l->expect, i, c->recv_seq, c->recv_off, take);
        if (memcmp(l->expect, data, take) != 0) {
            size_t k = 0;
            while (l->expect[k] == data[k])
                k++;
            load__error(l, i,
                        "message %llu offset %zu: expected 0x%02x, got 0x%02x "
                        "(the echo differs from what was sent)",
                        (unsigned long long)c->recv_seq, c->recv_off + k, l->expect[k], data[k]);
            conn_fail(l, c);
            return -1;
        }
        c->recv_off += take;
        data += take;
        n -= take;
        if (c->recv_off == c->len) {
            l->bytes += c->len;
            load_hist_record(&l->lat, (uint64_t)(now - c->started[c->recv_seq % l->o.depth]));
            l->requests++;
            c->recv_seq++;
            c->recv_off = 0;
        }
    }
    return 0;
}

static void conn_receive(struct load *l, struct conn *c)
{
    unsigned i = (unsigned)(c - l->conns);
    uint64_t sent = c->send_seq * c->len + c->send_off;
    uint64_t got = c->recv_seq * c->len + c->recv_off;
    ssize_t n = read(c->fd, l->io, LOAD_IO_SIZE);
    int64_t now = clock_now_ns();

    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return;
        load__error(l, i, "read: %s (after %llu messages)", strerror(errno),
                    (unsigned long long)c->recv_seq);
        conn_fail(l, c);
        return;
    }
    if (n == 0) {
        load__error(l, i, "read: the server closed the connection after %llu messages%s",
                    (unsigned long long)c->recv_seq,
                    c->state == CONN_DONE ? ", while it was idle" : "");
        if (c->state == CONN_DONE)
            l->errors++;
        conn_fail(l, c);
        return;
    }
    if (got + (uint64_t)n > sent) {
        load__error(l, i, "the server sent %llu bytes more than it was sent",
                    (unsigned long long)(got + (uint64_t)n - sent));
        if (c->state == CONN_DONE)
            l->errors++;
        conn_fail(l, c);
        return;
    }
    if (conn_verify(l, c, l->io, (size_t)n, now) < 0)
        return;
    conn_check_done(l, c);
    if (c->state == CONN_RUNNING)
        conn_send(l, c); /* the echo opened the window: refill it at once */
}

static void conn_open(struct load *l, struct conn *c)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)l->o.port)};
    unsigned i = (unsigned)(c - l->conns);
    int one = 1;

    inet_pton(AF_INET, l->o.addr, &sa.sin_addr); /* checked when parsing -b */
    c->state = CONN_CONNECTING;
    l->connecting++;
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        load__error(l, i, "socket: %s", strerror(errno));
        goto fail;
    }
    /* Small messages and pipelining would otherwise meet Nagle's algorithm
     * and delayed ACKs, and measure a 40 ms timer instead of the server. */
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
        load__error(l, i, "connect(%s:%d): %s", l->o.addr, l->o.port, strerror(errno));
        goto fail;
    }
    /* Writable = the handshake is over, well or badly; SO_ERROR will say. */
    c->events = EPOLLOUT;
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, c->fd, &(struct epoll_event){EPOLLOUT, {.ptr = c}}) < 0) {
        load__error(l, i, "epoll_ctl(ADD, fd %d): %s", c->fd, strerror(errno));
        goto fail;
    }
    return;
fail:
    conn_fail(l, c);
}

static void conn_connected(struct load *l, struct conn *c)
{
    socklen_t len = sizeof(int);
    int err = 0;

    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (err) {
        load__error(l, (unsigned)(c - l->conns), "connect(%s:%d): %s", l->o.addr, l->o.port,
                    strerror(err));
        conn_fail(l, c);
        return;
    }
    l->connecting--;
    l->running++;
    c->state = CONN_RUNNING;
    if (conn_watch(l, c, EPOLLIN) == 0 && l->measuring)
        conn_send(l, c);
}

/* ---- the loop ---- */

/* Count what never finished as errors, with one line saying why. */
static void load__abandon(struct load *l, const char *why)
{
    uint64_t before = l->errors, unsent = 0, unechoed = 0;
    unsigned n = 0, connecting = 0, unsent_conns = 0, unechoed_conns = 0;

    /* Where each stuck connection was tells a stalled accept (still
     * connecting) from a server that stopped reading (bytes not all sent)
     * or stopped answering (sent, not echoed). */
    for (unsigned i = 0; i < l->o.conns; i++) {
        struct conn *c = &l->conns[i];
        uint64_t sent = c->send_seq * c->len + c->send_off;
        uint64_t got = c->recv_seq * c->len + c->recv_off;

        if (c->state != CONN_CONNECTING && c->state != CONN_RUNNING)
            continue;
        if (c->state == CONN_CONNECTING)
            connecting++;
        else if (c->send_off > 0) {
            unsent_conns++;
            unsent += c->len - c->send_off;
        }
        if (c->state == CONN_RUNNING && sent > got) {
            unechoed_conns++;
            unechoed += sent - got;
        }
        conn_fail(l, c);
        n++;
    }
    fprintf(stderr,
            "echo-load: %s: %u connections unfinished, %llu messages count as errors "
            "(%u still connecting; %u with %llu bytes of a message not yet written; "
            "%u with %llu bytes written and not echoed)\n",
            why, n, (unsigned long long)(l->errors - before), connecting, unsent_conns,
            (unsigned long long)unsent, unechoed_conns, (unsigned long long)unechoed);
}

static void load__begin(struct load *l)
{
    l->measuring = true;
    l->t_start = clock_now_ns();
    if (l->o.duration_s > 0 && !l->o.idle)
        l->run_end = l->t_start + (int64_t)(l->o.duration_s * 1e9);
    for (unsigned i = 0; i < l->o.conns; i++)
        if (l->conns[i].state == CONN_RUNNING)
            conn_send(l, &l->conns[i]);
}

static void load__drain(struct load *l)
{
    l->draining = true;
    l->grace_end = clock_now_ns() + LOAD_GRACE_NS;
    for (unsigned i = 0; i < l->o.conns; i++)
        if (l->conns[i].state == CONN_RUNNING)
            conn_check_done(l, &l->conns[i]);
}

static void load__dispatch(struct load *l, struct epoll_event *ev)
{
    struct conn *c = ev->data.ptr;

    if (!c) {
        l->stopped = true; /* the stop pipe: SIGINT or SIGTERM */
        return;
    }
    if (c->fd < 0)
        return; /* failed earlier in this same batch of events */
    if (c->state == CONN_CONNECTING) {
        conn_connected(l, c);
        return;
    }
    /* EPOLLERR and EPOLLHUP come unasked; read() turns them into a message. */
    if (ev->events & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP))
        conn_receive(l, c);
    if (c->state == CONN_RUNNING && (ev->events & EPOLLOUT))
        conn_send(l, c);
}

/* Run until every connection is done or failed, or a deadline or signal.
 * `hold_end` is for --idle's second part: wait until then (0 = until a signal). */
static int load_loop(struct load *l, bool hold, int64_t hold_end)
{
    struct epoll_event evs[256];

    for (;;) {
        int64_t now = clock_now_ns(), next = hold ? hold_end : l->deadline;
        int ms = -1, n;

        if (l->stopped)
            return 0;
        if (!hold && !l->measuring && (l->connecting == 0 || l->o.eager))
            load__begin(l);
        if (!hold && l->connecting + l->running == 0)
            return 0;
        if (hold && (l->held == 0 || (hold_end && now >= hold_end)))
            return 0;
        if (!hold && now >= l->deadline) {
            char why[64];
            snprintf(why, sizeof(why), "timeout after %g s", l->o.timeout_s);
            load__abandon(l, why);
            return 0;
        }
        if (!hold && l->run_end && !l->draining && now >= l->run_end)
            load__drain(l);
        if (!hold && l->draining && now >= l->grace_end) {
            load__abandon(l, "no echo within 5 s after the end of the run");
            return 0;
        }
        if (!hold && l->run_end)
            next = l->draining ? l->grace_end : l->run_end < next ? l->run_end : next;
        if (next)
            ms = (int)((next > now ? next - now : 0) / 1000000) + 1;

        n = epoll_wait(l->epfd, evs, (int)(sizeof(evs) / sizeof(evs[0])), ms);
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "echo-load: epoll_wait: %s\n", strerror(errno));
            return -1;
        }
        for (int k = 0; k < n; k++)
            load__dispatch(l, &evs[k]);
        l->t_end = clock_now_ns();
    }
}

/* ---- the report ---- */

static void load_report(const struct load *l)
{
    double secs = l->measuring && l->t_end > l->t_start ? (l->t_end - l->t_start) / 1e9 : 0;
    double rps = secs > 0 ? l->requests / secs : 0;
    double mbps = secs > 0 ? (double)l->bytes / secs / 1e6 : 0;
    double p50 = load_hist_percentile(&l->lat, 50) / 1e3;
    double p99 = load_hist_percentile(&l->lat, 99) / 1e3;
    double max = l->lat.max / 1e3;

    if (l->o.csv) {
        printf("connections,length,depth,requests,errors,seconds,req_per_s,mb_per_s,"
               "p50_us,p99_us,max_us\n");
        printf("%u,%zu,%u,%llu,%llu,%.3f,%.0f,%.2f,%.0f,%.0f,%.0f\n", l->o.conns, l->o.len,
               l->o.depth, (unsigned long long)l->requests, (unsigned long long)l->errors, secs,
               rps, mbps, p50, p99, max);
    } else {
        printf("connections %u  length %s%zu  depth %u\n", l->o.conns, l->o.vary ? "1 to " : "",
               l->o.len, l->o.depth);
        printf("requests    %llu  errors %llu  seconds %.3f\n", (unsigned long long)l->requests,
               (unsigned long long)l->errors, secs);
        printf("throughput  %.0f req/s  %.2f MB/s (each way)\n", rps, mbps);
        printf("latency us  p50 %.0f  p99 %.0f  max %.0f\n", p50, p99, max);
    }
    fflush(stdout);
}

/* ---- main ---- */

static int load__check_fd_limit(const struct load_opts *o)
{
    unsigned long long need = (unsigned long long)o->conns + LOAD_FD_MARGIN;
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && need > rl.rlim_cur) {
        fprintf(stderr,
                "echo-load: -c %u needs %llu file descriptors but the limit is %llu; "
                "raise it with ulimit -n\n",
                o->conns, need, (unsigned long long)rl.rlim_cur);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct load l = {.epfd = -1, .stopfd = -1};
    int status = 1;

    load_opts_parse(&l.o, argc, argv);
    if (load__check_fd_limit(&l.o) < 0)
        return 2;
    l.t_begin = clock_now_ns();
    l.deadline = l.t_begin + (int64_t)(l.o.timeout_s * 1e9);

    l.conns = calloc(l.o.conns, sizeof(*l.conns));
    l.started = calloc((size_t)l.o.conns * l.o.depth, sizeof(*l.started));
    l.io = malloc(LOAD_IO_SIZE);
    l.expect = malloc(LOAD_IO_SIZE);
    if (!l.conns || !l.started || !l.io || !l.expect) {
        fprintf(stderr, "echo-load: malloc for %u connections of depth %u: %s\n", l.o.conns,
                l.o.depth, strerror(ENOMEM));
        goto out_mem;
    }
    l.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l.epfd < 0) {
        fprintf(stderr, "echo-load: epoll_create1: %s\n", strerror(errno));
        goto out_mem;
    }
    /* The stop pipe turns SIGINT/SIGTERM into an epoll event, so the loop
     * notices at once; it also sets SIGPIPE to be ignored. */
    l.stopfd = net_stop_pipe();
    if (l.stopfd < 0) {
        fprintf(stderr, "echo-load: pipe2: %s\n", strerror(-l.stopfd));
        goto out_epoll;
    }
    if (epoll_ctl(l.epfd, EPOLL_CTL_ADD, l.stopfd, &(struct epoll_event){EPOLLIN, {.ptr = NULL}}) <
        0) {
        fprintf(stderr, "echo-load: epoll_ctl(ADD, stop pipe): %s\n", strerror(errno));
        goto out_stop;
    }

    for (unsigned i = 0; i < l.o.conns; i++) {
        l.conns[i].fd = -1;
        l.conns[i].started = l.started + (size_t)i * l.o.depth;
        /* --vary: a length of its own, the same for a given seed in every run */
        l.conns[i].len = l.o.vary ? 1 + load__mix(l.o.vary_seed << 32 ^ i) % l.o.len : l.o.len;
    }
    for (unsigned i = 0; i < l.o.conns && !net_stop_requested; i++)
        conn_open(&l, &l.conns[i]);
    if (load_loop(&l, false, 0) < 0)
        goto out_conns;

    if (l.o.idle) {
        int64_t hold_end = 0;
        bool none = l.held == 0;
        if (!none && !l.stopped) {
            printf("holding %u connections\n", l.held);
            fflush(stdout);
            if (l.o.duration_s > 0)
                hold_end = clock_now_ns() + (int64_t)(l.o.duration_s * 1e9);
            if (load_loop(&l, true, hold_end) < 0)
                goto out_conns;
        }
        status = l.errors > 0 || none;
    } else {
        load_report(&l);
        status = l.errors > 0;
    }
    if (l.errors_unshown > 0)
        fprintf(stderr, "echo-load: %u more connection errors not shown\n", l.errors_unshown);

out_conns:
    for (unsigned i = 0; i < l.o.conns; i++)
        if (l.conns[i].fd >= 0)
            close(l.conns[i].fd);
out_stop:
    net_stop_pipe_close(l.stopfd);
out_epoll:
    close(l.epfd);
out_mem:
    free(l.expect);
    free(l.io);
    free(l.started);
    free(l.conns);
    return status;
}
