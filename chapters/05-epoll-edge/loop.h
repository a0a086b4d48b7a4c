/* SPDX-License-Identifier: MIT */
/* loop.h: one thread, one epoll instance, edge-triggered (see loop.c).
 *
 * echo-epoll-et runs one loop on its main thread; echo-epoll-reuseport runs
 * one per thread, each with its own listening socket. A loop shares nothing
 * with another but the signalfd, which it only watches.
 */
#ifndef CH05_LOOP_H
#define CH05_LOOP_H

#include "conn.h"

#include <stdbool.h>

struct loop_stats {
    unsigned long accepted; /* connections accepted */
    unsigned long requeued; /* turns that ended at the read budget with data left */
    int longest_turn;       /* the most read() calls one connection made in one turn */
};

struct loop {
    int epfd;
    struct watch listener;     /* non-blocking listening socket, owned by the loop */
    struct watch sig;          /* signalfd, shared: watched, never read */
    struct list_node conns;    /* every open connection (conn.link) */
    struct watch *ready;       /* the loop's own ready list: work no edge will announce */
    struct watch **ready_tail; /* where the next one goes (FIFO: fair turns) */
    int read_budget;           /* reads per connection per turn; 0: until EAGAIN */
    bool forget;               /* -S: drop what the budget left (the classic ET bug) */
    bool accept_blocked;       /* accept() failed for lack of fds: retry when one frees */
    long long blocked_at;      /* when, in ms (CLOCK_MONOTONIC) */
    int accept_errno;          /* last accept() error logged: a streak is logged once */
    struct loop_stats stats;
};

/* Set up a loop around listen_fd (made non-blocking here, owned by the loop
 * from now on) and sig_fd (not owned). Exits with a message on failure. */
void loop_init(struct loop *l, int listen_fd, int sig_fd, int read_budget, bool forget);
/* Serve until the signalfd becomes readable. */
void loop_run(struct loop *l);
/* Close every connection, the listener and the epoll instance. */
void loop_close(struct loop *l);

#endif
