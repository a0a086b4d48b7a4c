/* SPDX-License-Identifier: MIT */
/* epoll-dup.c: close() does not always take an fd out of epoll.
 *
 *     make -C chapters/04-epoll
 *     build/chapters/04-epoll/epoll-dup
 *
 * epoll registers an open file description (the kernel object behind an fd),
 * keyed by the fd number it was added with. close(fd) removes it from the
 * interest list only when that was the last fd referring to the object. After
 * dup() (or fork(), which copies every fd into the child), closing the
 * registered fd leaves the registration alive: events keep coming for an fd
 * number the process no longer has open, and it cannot be removed by that
 * number (EBADF) or by the duplicate (ENOENT). The cure is EPOLL_CTL_DEL
 * before close() whenever an fd may have been duplicated.
 */
#include "net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *ctl_result(int r)
{
    return r == 0 ? "0" : strerrorname_np(errno);
}

/* Events reported within 100 ms; prints them. */
static int show_wait(int ep)
{
    struct epoll_event ev;
    int n = epoll_wait(ep, &ev, 1, 100);

    if (n < 0)
        net_die(errno, "epoll_wait(epfd=%d)", ep);
    if (n == 0)
        printf("  epoll_wait() = 0: nothing reported\n");
    else
        printf("  epoll_wait() = 1: EPOLLIN for the fd registered as %d\n", (int)ev.data.fd);
    return n;
}

int main(int argc, char **argv)
{
    int sv[2], ep, fd, copy, n1, n2, del_old, del_copy;
    struct epoll_event ev = {.events = EPOLLIN};

    net_cli_none(argc, argv, "Shows that close() leaves an fd in epoll while a dup() of it lives.");
    /* snippet: dup */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        net_die(errno, "socketpair");
    if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
        net_die(errno, "epoll_create1");
    fd = sv[0];
    ev.data.fd = fd;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
        net_die(errno, "epoll_ctl(ADD, fd=%d)", fd);
    copy = dup(fd);
    close(fd); /* the socket lives on through `copy` */
    printf("registered fd %d, then dup(%d) = %d, then close(%d)\n", fd, fd, copy, fd);

    if (write(sv[1], "x", 1) != 1)
        net_die(errno, "write(fd=%d)", sv[1]);
    printf("the peer writes a byte:\n");
    n1 = show_wait(ep);
    del_old = epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    printf("  epoll_ctl(DEL, %d) = %s: that fd number is closed\n", fd, ctl_result(del_old));
    del_copy = epoll_ctl(ep, EPOLL_CTL_DEL, copy, NULL);
    printf("  epoll_ctl(DEL, %d) = %s: the registration is under fd %d, not %d\n", copy,
           ctl_result(del_copy), fd, copy);

    close(copy); /* the last reference: now the registration goes */
    printf("close(%d), the last fd of the socket:\n", copy);
    n2 = show_wait(ep);
    /* end snippet */
    close(sv[1]);
    close(ep);
    if (n1 != 1 || del_old == 0 || del_copy == 0 || n2 != 0) {
        fprintf(stderr, "unexpected: the kernel did not behave as described above\n");
        return 1;
    }
    printf("a closed fd stays in epoll while another fd refers to the same socket\n");
    return 0;
}
