/* SPDX-License-Identifier: MIT */
/* conn-cost: what does an idle connection cost a server? Your prediction
 * first, then what the chapter's c10k.sh measured (exercise 14-c10k/conn-cost).
 *
 *     make -C exercises/14-c10k/conn-cost
 *     build/exercises/14-c10k/conn-cost/conn-cost          # your figures, and how far off
 *     build/exercises/14-c10k/conn-cost/conn-cost -c T E   # check them against T and E
 *
 * The figures are bytes of the server's resident memory (VmRSS) per idle
 * connection, c10k.sh's B/conn column: for echo-threads (chapter 02, a
 * thread per connection) and echo-epoll-lt (chapter 04, one thread, epoll).
 * -c T E compares your measured figures with T and E, the B/conn that
 * c10k.sh measures now (the exercise's test runs it): each must be within
 * half of it, or within 1 KiB, whichever is wider.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct conn_cost {
    long predicted_threads; /* bytes per idle connection: echo-threads */
    long predicted_events;  /* bytes per idle connection: echo-epoll-lt */
    long measured_threads;  /* c10k.sh's B/conn for echo-threads */
    long measured_events;   /* c10k.sh's B/conn for echo-epoll-lt */
};

static void conn_cost_fill(struct conn_cost *c)
{
    /* EXERCISE BEGIN: your two predictions first; then the B/conn that c10k.sh -n 300 printed */
    c->predicted_threads = 8192; /* two pages of stack touched, and a little for the thread */
    c->predicted_events = 512;   /* the struct conn, an epoll entry, a small buffer */
    c->measured_threads = 12574; /* c10k.sh -n 300 -s echo-threads,echo-epoll-lt -T none */
    c->measured_events = 122;
    /* EXERCISE END */
}

static void conn_cost_usage(FILE *f, const char *prog)
{
    fprintf(
        f,
        "usage: %s [-c THREADS_NOW EVENTS_NOW]\n"
        "  prints your predicted and measured bytes per idle connection; with -c, also\n"
        "  checks the measured ones against what c10k.sh measures now (within half, or 1 KiB)\n",
        prog);
}

static int conn_cost_parse(const char *s, long *v)
{
    char *end;

    errno = 0;
    *v = strtol(s, &end, 10);
    return errno || end == s || *end || *v <= 0 ? -1 : 0;
}

/* How far off: "2.5 times too high", "about right". */
static void conn_cost_verdict(const char *server, long predicted, long measured)
{
    double r = (double)predicted / (double)measured;

    printf("%-14s predicted %6ld B, measured %6ld B per idle connection: ", server, predicted,
           measured);
    if (r >= 0.8 && r <= 1.25)
        printf("about right\n");
    else if (r > 1)
        printf("%.1f times too high\n", r);
    else
        printf("%.1f times too low\n", 1 / r);
}

/* Is `mine` within half of `now`, or within 1 KiB of it? */
static int conn_cost_agrees(const char *server, long mine, long now)
{
    long tolerance = now / 2 > 1024 ? now / 2 : 1024;

    if (labs(mine - now) <= tolerance)
        return 1;
    fprintf(stderr,
            "conn-cost: %s: your measured %ld B is far from the %ld B that c10k.sh measures "
            "now (tolerance %ld B): run it again and copy its B/conn column\n",
            server, mine, now, tolerance);
    return 0;
}

int main(int argc, char **argv)
{
    struct conn_cost c = {-1, -1, -1, -1};
    long now_threads = 0, now_events = 0;

    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        conn_cost_usage(stdout, argv[0]);
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "-c") == 0) {
        if (conn_cost_parse(argv[2], &now_threads) < 0 ||
            conn_cost_parse(argv[3], &now_events) < 0) {
            fprintf(stderr, "conn-cost: -c takes two byte counts above 0, not '%s' '%s'\n", argv[2],
                    argv[3]);
            conn_cost_usage(stderr, argv[0]);
            return 2;
        }
    } else if (argc != 1) {
        conn_cost_usage(stderr, argv[0]);
        return 2;
    }

    conn_cost_fill(&c);
    if (c.predicted_threads <= 0 || c.predicted_events <= 0) {
        fprintf(stderr, "conn-cost: write your two predictions first (bytes, above 0)\n");
        return 1;
    }
    if (c.measured_threads <= 0 || c.measured_events <= 0) {
        fprintf(stderr, "conn-cost: now measure: chapters/14-c10k/c10k.sh -n 300 -s "
                        "echo-threads,echo-epoll-lt -T none, and copy its B/conn column\n");
        return 1;
    }
    conn_cost_verdict("echo-threads", c.predicted_threads, c.measured_threads);
    conn_cost_verdict("echo-epoll-lt", c.predicted_events, c.measured_events);
    printf("measured: a thread per connection costs %.0f times what an epoll loop does\n",
           (double)c.measured_threads / (double)c.measured_events);
    if (now_threads > 0) {
        int threads_ok = conn_cost_agrees("echo-threads", c.measured_threads, now_threads);
        int events_ok = conn_cost_agrees("echo-epoll-lt", c.measured_events, now_events);

        if (!threads_ok || !events_ok)
            return 1;
    }
    return 0;
}
