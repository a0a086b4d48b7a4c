/* SPDX-License-Identifier: MIT */
/* sum-pages.c: run SumPagesAsync (sum-pages-sm.c) on the loop, with a ticking
 * timer beside it.
 *
 *     make -C chapters/12-state-machines
 *     build/chapters/12-state-machines/http-server -p 8080 -d 200 &
 *     build/chapters/12-state-machines/sum-pages -p 8080 -n 3 -d 300 -t 50
 *
 * Prints "page I: N words" for each page, "total: N words" at the end, and
 * "tick K" each time the periodic timer fires. The timer is the witness:
 * it is served by the same loop, so ticks keep coming while SumPagesAsync
 * waits (for the server, or in Task.Delay) only if the state machine really
 * returns to the loop at each await. Code that blocked the thread instead
 * (a blocking recv(), a sleep()) would stop the ticks for as long as it
 * blocked.
 */
#include "sum-pages.h"
#include "net.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

struct ticker {
    struct loop_wait io; /* io.fd: a periodic timerfd */
    struct loop *loop;
    struct task *watched; /* to notice a state machine that can never resume */
    unsigned long ticks;
};

long count_words(const char *s, size_t len)
{
    long words = 0;
    int in_word = 0;

    for (size_t i = 0; i < len; i++) {
        int space = s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r';
        words += !space && !in_word;
        in_word = !space;
    }
    return words;
}

static void ticker_fire(void *frame)
{
    struct ticker *t = frame;
    uint64_t expirations;

    if (read(t->io.fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
        net_die(errno, "read(timerfd=%d)", t->io.fd);
    printf("tick %lu\n", ++t->ticks);
    /* Nothing else armed and the task not done: no event can ever resume it. */
    if (t->loop->armed == 0 && !task_is_completed(t->watched)) {
        fprintf(stderr, "sum-pages: stuck: the task is not completed and nothing is armed to "
                        "resume it (did move_next return without awaiting anything?)\n");
        exit(1);
    }
    loop_await_fd(t->loop, &t->io, EPOLLIN);
}

static void on_done(void *frame)
{
    loop_stop(frame);
}

static void usage(FILE *to)
{
    fprintf(to, "usage: sum-pages [-b ADDR] -p PORT [-n PAGES] [-d DELAY_MS] [-t TICK_MS]\n"
                "Add up the words of pages 1..PAGES of http://ADDR:PORT/page/I, waiting DELAY_MS\n"
                "after each, while a timer prints a tick every TICK_MS.\n"
                "  -b ADDR      server address (default 127.0.0.1)\n"
                "  -p PORT      server port\n"
                "  -n PAGES     pages to fetch (default 3)\n"
                "  -d DELAY_MS  Task.Delay after each page (default 100)\n"
                "  -t TICK_MS   tick period, 0 for none (default 20)\n");
}

int main(int argc, char **argv)
{
    long port = 0, pages = 3, delay_ms = 100, tick_ms = 20;
    const char *addr = "127.0.0.1";
    struct ticker ticker = {.io = {.fd = -1}};
    char base[128];
    struct loop loop;
    struct task *t;
    int opt, err, status = 0;

    while ((opt = getopt(argc, argv, "b:p:n:d:t:h")) != -1) {
        int bad = 0;
        switch (opt) {
        case 'b':
            addr = optarg;
            break;
        case 'p':
            bad = net_parse_int(optarg, 1, 65535, &port);
            break;
        case 'n':
            bad = net_parse_int(optarg, 0, 1000, &pages);
            break;
        case 'd':
            bad = net_parse_int(optarg, 0, 60000, &delay_ms);
            break;
        case 't':
            bad = net_parse_int(optarg, 0, 60000, &tick_ms);
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            bad = -1;
        }
        if (bad) {
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc || port == 0 || strlen(addr) > 64) {
        usage(stderr);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* one line at a time, in the order they happen */
    snprintf(base, sizeof(base), "http://%s:%ld", addr, port);
    if ((err = loop_init(&loop)) < 0)
        net_die(-err, "epoll_create1");

    t = sum_pages_async(&loop, base, (int)pages, (int)delay_ms);
    if (!task_is_completed(t)) {
        task_on_completed(t, on_done, &loop);
        if (tick_ms > 0) {
            if ((ticker.io.fd = loop_timerfd((int)tick_ms, (int)tick_ms)) < 0)
                net_die(-ticker.io.fd, "timerfd_create");
            ticker.io.resume = ticker_fire;
            ticker.io.frame = &ticker;
            ticker.loop = &loop;
            ticker.watched = t;
            loop_await_fd(&loop, &ticker.io, EPOLLIN);
        }
        if ((err = loop_run(&loop)) < 0)
            net_die(-err, "epoll_wait");
    }
    if (!task_is_completed(t)) {
        fprintf(stderr, "sum-pages: the loop ran out of work but the task never completed\n");
        status = 1;
    } else if (t->error) {
        fprintf(stderr, "sum-pages: %s: %s (%s)\n", t->what, strerror(t->error),
                strerrorname_np(t->error));
        status = 1;
    } else {
        printf("total: %ld words\n", t->value);
    }
    if (ticker.io.fd >= 0) {
        loop_forget(&loop, &ticker.io);
        close(ticker.io.fd);
    }
    task_free(t);
    loop_fini(&loop);
    return status;
}
