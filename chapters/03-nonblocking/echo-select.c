/* SPDX-License-Identifier: MIT */
/* echo-select.c: a single-threaded echo server built on select().
 *
 * The same server as echo-poll.c, on the older call (4.2BSD, 1983). select()
 * takes three bitmaps (fd_set) of fd numbers: "tell me which of these are
 * readable, which writable, which have an exceptional condition". It
 * overwrites them with the answer, so they are rebuilt before every call.
 *
 *     make -C chapters/03-nonblocking
 *     build/chapters/03-nonblocking/echo-select -p 0
 *     build/common/tools/echo-client -p PORT hello      (from another terminal)
 *
 * The limit: an fd_set is a fixed array of FD_SETSIZE bits (1024 on Linux,
 * fixed when glibc was built). FD_SET() on an fd >= FD_SETSIZE writes past the
 * end of the bitmap: no error, just memory corruption. So an fd that high is
 * refused (closed and logged) the moment accept() returns it. poll() has no
 * such limit; that is the main reason it exists.
 */
#include "conn.h"
#include "net.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

/* New connections accepted per turn of the loop (see echo-poll.c). */
#define ACCEPT_BATCH 64

struct server {
    int stop_fd;                    /* readable on SIGINT/SIGTERM */
    int listen_fd;                  /* non-blocking */
    struct conn *conns[FD_SETSIZE]; /* indexed by fd: select() speaks fd numbers */
    int max_conn_fd;                /* highest fd in conns[], -1 when there is none */
    int accept_errno;               /* last accept() error logged */
};

/* snippet: sets */
/* Rebuilt before every call: select() overwrites the sets with its answer.
 * Returns the highest fd set, which select() wants plus one. */
static int server__fill_sets(const struct server *s, fd_set *rd, fd_set *wr)
{
    /* EXERCISE BEGIN select-sets: fill both sets from what each fd wants; return the highest fd */
    int maxfd = s->stop_fd > s->listen_fd ? s->stop_fd : s->listen_fd;

    FD_ZERO(rd);
    FD_ZERO(wr);
    FD_SET(s->stop_fd, rd);
    FD_SET(s->listen_fd, rd);
    for (int fd = 0; fd <= s->max_conn_fd; fd++) {
        const struct conn *c = s->conns[fd];
        if (!c)
            continue;
        if (conn_wants_read(c))
            FD_SET(fd, rd);
        if (conn_wants_write(c))
            FD_SET(fd, wr);
        if (fd > maxfd)
            maxfd = fd;
    }
    return maxfd;
    /* EXERCISE END */
}
/* end snippet */

static void server__drop(struct server *s, int fd)
{
    conn_free(s->conns[fd]);
    s->conns[fd] = NULL;
    while (s->max_conn_fd >= 0 && !s->conns[s->max_conn_fd])
        s->max_conn_fd--;
}

/* snippet: accept */
static void server__accept(struct server *s)
{
    for (int k = 0; k < ACCEPT_BATCH; k++) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && errno == EINTR)
            continue;
        if (fd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (fd < 0) {
            /* EMFILE and the like: logged once per streak; the loop spins
             * until an fd is freed (see echo-poll.c and chapter 04). */
            if (errno != s->accept_errno)
                fprintf(stderr, "accept(fd=%d): %s\n", s->listen_fd, strerror(errno));
            s->accept_errno = errno;
            return;
        }
        s->accept_errno = 0;
        if (fd >= FD_SETSIZE) {
            /* Never FD_SET() it: that would write outside the fd_set. */
            fprintf(stderr,
                    "accept(fd=%d): client fd=%d >= FD_SETSIZE (%d), select() "
                    "cannot watch it: closing it\n",
                    s->listen_fd, fd, FD_SETSIZE);
            close(fd);
            continue;
        }
        if (!(s->conns[fd] = conn_new(fd))) {
            fprintf(stderr, "accept(fd=%d): no memory for client fd=%d, closing it\n", s->listen_fd,
                    fd);
            close(fd);
            continue;
        }
        if (fd > s->max_conn_fd)
            s->max_conn_fd = fd;
    }
}
/* end snippet */

/* snippet: serve */
/* Every client fd is checked, ready or not: select() says which fds are
 * ready only by setting their bits, so finding them is a scan too. */
static void server__serve_ready(struct server *s, const fd_set *rd, const fd_set *wr)
{
    for (int fd = 0; fd <= s->max_conn_fd; fd++) {
        struct conn *c = s->conns[fd];
        enum conn_status st;

        if (!c || !(FD_ISSET(fd, rd) || FD_ISSET(fd, wr)))
            continue;
        /* An error or a reset shows up as "readable" (and "writable" if we
         * asked): the read() or write() then returns it. */
        st = FD_ISSET(fd, rd) ? conn_on_readable(c) : conn_on_writable(c);
        if (st == CONN_CLOSE)
            server__drop(s, fd);
    }
}
/* end snippet */

static void server__free(struct server *s)
{
    for (int fd = 0; fd <= s->max_conn_fd; fd++)
        if (s->conns[fd])
            conn_free(s->conns[fd]);
}

int main(int argc, char **argv)
{
    static struct server s; /* FD_SETSIZE pointers: too big for the stack, zeroed */
    struct net_cli cli;
    fd_set rd, wr;
    int err, status = 0;

    net_cli_parse(&cli, argc, argv, "A single-threaded echo server on select().", NULL);
    s.max_conn_fd = -1;
    if ((s.stop_fd = net_stop_pipe()) < 0)
        net_die(-s.stop_fd, "pipe2(stop pipe)");
    s.listen_fd = net_listen_or_die(&cli, SOMAXCONN);
    if ((err = net_set_nonblocking(s.listen_fd)) < 0)
        net_die(-err, "fcntl(fd=%d, F_SETFL, O_NONBLOCK)", s.listen_fd);
    if (s.stop_fd >= FD_SETSIZE || s.listen_fd >= FD_SETSIZE)
        net_die(EMFILE,
                "select() needs fds below FD_SETSIZE (%d); got stop pipe fd=%d, "
                "listener fd=%d",
                FD_SETSIZE, s.stop_fd, s.listen_fd);

    /* snippet: loop */
    for (;;) {
        int maxfd = server__fill_sets(&s, &rd, &wr);

        if (select(maxfd + 1, &rd, &wr, NULL, NULL) < 0) {
            if (errno == EINTR)
                continue; /* a signal: the stop pipe is readable now */
            fprintf(stderr, "select(nfds=%d): %s\n", maxfd + 1, strerror(errno));
            status = 1;
            break;
        }
        if (FD_ISSET(s.stop_fd, &rd))
            break;
        server__serve_ready(&s, &rd, &wr);
        if (FD_ISSET(s.listen_fd, &rd))
            server__accept(&s); /* after serving: a reused fd number is not in rd/wr */
    }
    /* end snippet */

    server__free(&s);
    close(s.listen_fd);
    net_stop_pipe_close(s.stop_fd);
    return status;
}
