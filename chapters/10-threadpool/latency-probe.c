/* SPDX-License-Identifier: MIT */
/* latency-probe.c: how long does a small request take while a big one is read?
 *
 * Against file-server: asks for FAST a few times alone (the baseline), then
 * asks for SLOW on a second connection and, while that reply is still
 * coming, asks for FAST again and again, timing each reply.
 *
 *     build/chapters/10-threadpool/file-server -r DIR -p 9000 -s 50 -w 0 &   # reads on the loop
 *     build/chapters/10-threadpool/latency-probe -p 9000 -s big.bin -f small.txt
 *
 * If the server reads files on its loop thread, every fast request sent
 * while the slow file is read waits for that read to finish. If it reads
 * them on a pool, the loop answers the fast request as soon as a pool thread
 * has read it. Exit 0 when both files arrived whole, 1 otherwise, 3 after
 * -t seconds.
 */
#include "clock.h"
#include "net.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct probe {
    int fd;
    char head[256]; /* the reply line, while it arrives */
    size_t hlen;
    long long body_left; /* -1 while reading the reply line */
    long long bytes;     /* body bytes received for this reply */
    long long sent_ns;
};

static void on_alarm(int sig)
{
    static const char msg[] = "latency-probe: timeout\n";

    (void)sig;
    if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
        /* exiting anyway */
    }
    _exit(3);
}

static void probe_send(struct probe *pr, const char *path)
{
    char req[4200];
    int n = snprintf(req, sizeof(req), "GET %s\n", path);
    ssize_t err;

    pr->hlen = 0;
    pr->body_left = -1;
    pr->bytes = 0;
    pr->sent_ns = clock_now_ns();
    if ((err = net_write_all(pr->fd, req, (size_t)n)) < 0)
        net_die((int)-err, "write(GET %s)", path);
}

/* Read what is there. Returns 1 when the reply is complete, 0 if not yet. */
static int probe_on_readable(struct probe *pr, const char *path)
{
    char buf[65536];
    ssize_t n = read(pr->fd, buf, sizeof(buf));
    size_t i = 0;

    if (n < 0 && errno == EINTR)
        return 0;
    if (n <= 0) {
        fprintf(stderr, "latency-probe: %s: connection ended before the reply did\n", path);
        exit(1);
    }
    while (pr->body_left < 0 && i < (size_t)n) { /* the reply line */
        char c = buf[i++];
        if (c != '\n') {
            if (pr->hlen + 1 < sizeof(pr->head))
                pr->head[pr->hlen++] = c;
            continue;
        }
        pr->head[pr->hlen] = '\0';
        if (strncmp(pr->head, "OK ", 3) != 0) {
            fprintf(stderr, "latency-probe: %s: %s\n", path, pr->head);
            exit(1);
        }
        pr->body_left = atoll(pr->head + 3);
    }
    if (pr->body_left >= 0) {
        long long take = (long long)n - (long long)i;
        if (take > pr->body_left) {
            fprintf(stderr, "latency-probe: %s: more bytes than announced\n", path);
            exit(1);
        }
        pr->body_left -= take;
        pr->bytes += take;
    }
    return pr->body_left == 0;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static void connect_probe(struct probe *pr, const char *addr, int port)
{
    if ((pr->fd = net_connect(addr, port)) < 0)
        net_die(-pr->fd, "connect(%s:%d)", addr, port);
    net_set_nodelay(pr->fd);
}

static _Noreturn void usage(FILE *to, int status)
{
    fprintf(to, "usage: latency-probe [-b ADDR] -p PORT -s SLOW -f FAST [-g MS] [-t SEC]\n"
                "Time requests for FAST while file-server sends SLOW.\n"
                "  -g MS   pause between fast requests (default 20)\n"
                "  -t SEC  give up after SEC seconds (default 60): exit 3\n");
    exit(status);
}

int main(int argc, char **argv)
{
    const char *addr = NET_DEFAULT_ADDR, *slow = NULL, *fast = NULL;
    long port = -1, gap_ms = 20, secs = 60;
    struct probe s = {0}, f = {0};
    long long base[5], lat[4096], slow_ns = 0, next_fast;
    int opt, nlat = 0;
    bool fast_busy = false;

    while ((opt = getopt(argc, argv, "b:p:s:f:g:t:h")) != -1) {
        if (opt == 'h')
            usage(stdout, 0);
        else if (opt == 'b')
            addr = optarg;
        else if (opt == 's')
            slow = optarg;
        else if (opt == 'f')
            fast = optarg;
        else if (!((opt == 'p' && net_parse_int(optarg, 1, 65535, &port) == 0) ||
                   (opt == 'g' && net_parse_int(optarg, 0, 10000, &gap_ms) == 0) ||
                   (opt == 't' && net_parse_int(optarg, 1, 3600, &secs) == 0)))
            usage(stderr, 2);
    }
    if (port < 0 || !slow || !fast || optind < argc)
        usage(stderr, 2);
    signal(SIGALRM, on_alarm);
    alarm((unsigned)secs);
    connect_probe(&s, addr, (int)port);
    connect_probe(&f, addr, (int)port);

    for (int i = 0; i < 5; i++) { /* the baseline: FAST alone */
        probe_send(&f, fast);
        while (!probe_on_readable(&f, fast))
            ;
        base[i] = clock_now_ns() - f.sent_ns;
    }
    qsort(base, 5, sizeof(base[0]), cmp_ll);
    printf("fast request alone: %.2f ms (median of 5), %lld bytes\n", (double)base[2] / 1e6,
           f.bytes);

    /* snippet: probe */
    probe_send(&s, slow);
    next_fast = clock_now_ns() + 20 * 1000000LL; /* give the server time to start on SLOW */
    while (slow_ns == 0 || fast_busy) {
        struct pollfd pf[2] = {{s.fd, POLLIN, 0}, {f.fd, POLLIN, 0}};
        long long now = clock_now_ns();
        int wait_ms = fast_busy || slow_ns ? 1000 : (int)((next_fast - now) / 1000000);

        if (!fast_busy && slow_ns == 0 && now >= next_fast) {
            probe_send(&f, fast);
            fast_busy = true;
            continue;
        }
        if (poll(slow_ns ? pf + 1 : pf, slow_ns ? 1 : 2, wait_ms < 0 ? 0 : wait_ms) < 0 &&
            errno != EINTR)
            net_die(errno, "poll");
        if (!slow_ns && (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
            probe_on_readable(&s, slow))
            slow_ns = clock_now_ns() - s.sent_ns;
        if (fast_busy && (pf[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
            probe_on_readable(&f, fast)) {
            if (nlat < (int)(sizeof(lat) / sizeof(lat[0])))
                lat[nlat++] = clock_now_ns() - f.sent_ns;
            fast_busy = false;
            next_fast = clock_now_ns() + gap_ms * 1000000LL;
        }
    }
    /* end snippet */
    printf("slow request: %lld bytes in %.0f ms\n", s.bytes, (double)slow_ns / 1e6);
    if (nlat == 0) {
        printf("fast requests while the slow one ran: none (it was too quick)\n");
    } else {
        qsort(lat, (size_t)nlat, sizeof(lat[0]), cmp_ll);
        printf("fast requests while the slow one ran: %d, median %.2f ms, max %.2f ms\n", nlat,
               (double)lat[nlat / 2] / 1e6, (double)lat[nlat - 1] / 1e6);
    }
    close(s.fd);
    close(f.fd);
    return 0;
}
