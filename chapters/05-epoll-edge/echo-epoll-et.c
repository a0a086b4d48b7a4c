/* SPDX-License-Identifier: MIT */
/* echo-epoll-et.c: a single-threaded echo server on edge-triggered epoll.
 *
 * Chapter 04's echo-epoll-lt with EPOLLET. Each socket is registered once
 * and never changed; in exchange the server must drain: accept until EAGAIN,
 * read until EAGAIN, write until EAGAIN. And it must stay fair: one client
 * that sends without pause would keep a draining loop to itself, so each
 * connection gets a budget of reads per turn, and a connection stopped by
 * its budget goes on the loop's own ready list, because the kernel will not
 * report it again. The loop is in loop.c, a connection in conn.c.
 *
 *     make -C chapters/05-epoll-edge
 *     build/chapters/05-epoll-edge/echo-epoll-et -p 0 [-R READS] [-S]
 *     build/common/tools/echo-client -p PORT hello      (from another terminal)
 *
 *   -R READS  reads per connection per turn (default 4; 0 = until EAGAIN,
 *             whatever the others wait)
 *   -S        stall on purpose: read once per edge and forget the rest, as a
 *             level-triggered loop would (the classic EPOLLET bug, to watch)
 *
 * On exit it prints how many connections it accepted, how many turns ended
 * at the budget with data left, and the most reads one turn made (the final
 * read that says EAGAIN counts). Linux 2.6.28 or later.
 */
#include "loop.h"
#include "net.h"

#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#define DEFAULT_READ_BUDGET 4 /* 4 reads of up to 64 KiB before the next client's turn */

struct options {
    int read_budget;
    bool forget;
};

static int on_opt(int opt, const char *arg, void *ctx)
{
    struct options *o = ctx;
    long v;

    if (opt == 'S') {
        o->forget = true;
        o->read_budget = 1;
        return 0;
    }
    if (opt != 'R' || net_parse_int(arg, 0, 1 << 20, &v) < 0)
        return -1;
    o->read_budget = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    struct options o = {.read_budget = DEFAULT_READ_BUDGET};
    struct net_cli_extra extra = {
        .optstring = "R:S",
        .usage = "  -R READS  reads per connection per turn (default 4; 0 = until EAGAIN)\n"
                 "  -S        read once per edge and forget the rest (the classic bug: stalls)\n",
        .on_opt = on_opt,
        .ctx = &o,
    };
    struct net_cli cli;
    struct loop l;
    int sig;

    net_cli_parse(&cli, argc, argv, "A single-threaded echo server on edge-triggered epoll.",
                  &extra);
    sig = net_signalfd_or_die(SFD_NONBLOCK); /* before listening: a test may send SIGTERM at once */
    loop_init(&l, net_listen_or_die(&cli, SOMAXCONN), sig, o.read_budget, o.forget);
    loop_run(&l);
    printf("accepted %lu connections; %lu turns ended at the read budget with data left;"
           " the longest turn made %d reads\n",
           l.stats.accepted, l.stats.requeued, l.stats.longest_turn);
    loop_close(&l);
    close(sig);
    return 0;
}
