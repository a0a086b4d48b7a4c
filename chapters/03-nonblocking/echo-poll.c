/* SPDX-License-Identifier: MIT */
/* echo-poll.c: a single-threaded echo server built on poll().
 *
 * One thread serves every client. It does not sleep in read() on one socket
 * (chapter 01) or park a thread per socket (chapter 02): it hands the kernel
 * the list of its sockets and asks "which of these can I read or write
 * without waiting?", does exactly that work, and asks again.
 *
 *     make -C chapters/03-nonblocking
 *     build/chapters/03-nonblocking/echo-poll -p 0
 *     build/common/tools/echo-client -p PORT hello      (from another terminal)
 *
 * Every socket is non-blocking. What the server does with a ready socket is
 * in conn.c, shared with echo-select.c: this file is only the loop.
 *
 * The pollfd array is kept from one call to the next, one slot per fd:
 * slot 0 is the stop pipe (it becomes readable on SIGINT/SIGTERM, which closes
 * the race between testing a flag and sleeping in poll()), slot 1 the
 * listener, then one slot per client. Each call still copies the whole array
 * into the kernel and back, and the kernel checks every fd in it: the cost
 * grows with the number of clients, idle ones included (see poll-cost.c).
 */
#include "conn.h"
#include "net.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SLOT_STOP       0
#define SLOT_LISTEN     1
#define SLOT_FIRST_CONN 2

/* New connections accepted per turn of the loop, so a flood of them cannot
 * starve the clients already connected. */
#define ACCEPT_BATCH 64

struct server {
    struct pollfd *pfds; /* what poll() watches; pfds[i] belongs to conns[i] */
    struct conn **conns; /* NULL in the stop and listener slots */
    size_t n;            /* slots in use */
    size_t cap;          /* slots allocated */
    int accept_errno;    /* last accept() error logged: a streak is logged once */
};

/* snippet: events */
/* Derived from the connection's state after every event, never left armed. */
static short conn_poll_events(const struct conn *c)
{
    return (short)((conn_wants_read(c) ? POLLIN : 0) | (conn_wants_write(c) ? POLLOUT : 0));
}
/* end snippet */

static int server__add_slot(struct server *s, int fd, struct conn *c, short events)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct pollfd *pfds = realloc(s->pfds, cap * sizeof(*pfds));
        if (!pfds)
            return -ENOMEM;
        s->pfds = pfds;
        struct conn **conns = realloc(s->conns, cap * sizeof(*conns));
        if (!conns)
            return -ENOMEM;
        s->conns = conns;
        s->cap = cap;
    }
    s->pfds[s->n] = (struct pollfd){.fd = fd, .events = events};
    s->conns[s->n] = c;
    s->n++;
    return 0;
}

/* Close slot i's connection and fill the hole with the last slot. */
static void server__drop(struct server *s, size_t i)
{
    conn_free(s->conns[i]);
    s->n--;
    s->pfds[i] = s->pfds[s->n];
    s->conns[i] = s->conns[s->n];
}

/* snippet: accept */
static void server__accept(struct server *s)
{
    int lfd = s->pfds[SLOT_LISTEN].fd;

    for (int k = 0; k < ACCEPT_BATCH; k++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && errno == EINTR)
            continue;
        if (fd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return; /* no one else is waiting */
        if (fd < 0) {
            /* EMFILE (out of fds) and the like. The connection stays in the
             * backlog, so the listener stays readable and the next poll()
             * returns at once: the loop spins until an fd is freed. Chapter
             * 04 fixes that; here we log once per streak and carry on. */
            if (errno != s->accept_errno)
                fprintf(stderr, "accept(fd=%d): %s\n", lfd, strerror(errno));
            s->accept_errno = errno;
            return;
        }
        s->accept_errno = 0;
        struct conn *c = conn_new(fd);
        if (!c || server__add_slot(s, fd, c, conn_poll_events(c)) < 0) {
            fprintf(stderr, "accept(fd=%d): no memory for client fd=%d, closing it\n", lfd, fd);
            if (c)
                conn_free(c);
            else
                close(fd);
        }
    }
}
/* end snippet */

/* snippet: serve */
static void server__serve(struct server *s, size_t i)
{
    struct pollfd *p = &s->pfds[i];
    short re = p->revents;
    enum conn_status st = CONN_KEEP;

    if (re & POLLNVAL) { /* we closed an fd and kept it in the set: a bug */
        fprintf(stderr, "poll: fd=%d is not open\n", p->fd);
        server__drop(s, i);
        return;
    }
    /* POLLERR and POLLHUP come even when not asked for. Treat them as the
     * events we did ask for: the read() or write() then reports the error or
     * the EOF, and the connection ends the ordinary way. */
    if (re & (POLLERR | POLLHUP))
        re |= p->events;
    if (re & POLLIN)
        st = conn_on_readable(s->conns[i]); /* reads, then tries to write */
    else if (re & POLLOUT)
        st = conn_on_writable(s->conns[i]);

    if (st == CONN_CLOSE)
        server__drop(s, i);
    else
        p->events = conn_poll_events(s->conns[i]);
}
/* end snippet */

static void server__free(struct server *s)
{
    for (size_t i = SLOT_FIRST_CONN; i < s->n; i++)
        conn_free(s->conns[i]);
    free(s->pfds);
    free(s->conns);
}

int main(int argc, char **argv)
{
    struct net_cli cli;
    struct server s = {0};
    int stop_fd, lfd, err, status = 0;

    net_cli_parse(&cli, argc, argv, "A single-threaded echo server on poll().", NULL);
    /* Before listening: a test may send SIGTERM as soon as it sees the port. */
    if ((stop_fd = net_stop_pipe()) < 0)
        net_die(-stop_fd, "pipe2(stop pipe)");
    lfd = net_listen_or_die(&cli, SOMAXCONN);
    if ((err = net_set_nonblocking(lfd)) < 0)
        net_die(-err, "fcntl(fd=%d, F_SETFL, O_NONBLOCK)", lfd);
    if (server__add_slot(&s, stop_fd, NULL, POLLIN) < 0 ||
        server__add_slot(&s, lfd, NULL, POLLIN) < 0)
        net_die(ENOMEM, "pollfd array");

    /* snippet: loop */
    for (;;) {
        if (poll(s.pfds, s.n, -1) < 0) {
            if (errno == EINTR)
                continue; /* a signal: the stop pipe is readable now */
            fprintf(stderr, "poll(%zu fds): %s\n", s.n, strerror(errno));
            status = 1;
            break;
        }
        if (s.pfds[SLOT_STOP].revents)
            break;
        /* From the end down: server__drop() moves the last slot into the
         * freed one, and the last slot has been served already. */
        for (size_t i = s.n; i-- > SLOT_FIRST_CONN;)
            if (s.pfds[i].revents)
                server__serve(&s, i);
        if (s.pfds[SLOT_LISTEN].revents & POLLIN)
            server__accept(&s); /* appends slots; poll() looks at them next turn */
    }
    /* end snippet */

    server__free(&s);
    close(lfd);
    net_stop_pipe_close(stop_fd);
    return status;
}
