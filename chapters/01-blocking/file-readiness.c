/* SPDX-License-Identifier: MIT */
/* file-readiness.c: a regular file is never "not ready"; a pipe can be.
 *
 * A socket, a pipe or a terminal can have nothing to read yet. Then read()
 * sleeps until bytes arrive, O_NONBLOCK turns that sleep into EAGAIN, and
 * poll()/epoll can tell you when the bytes are there. A regular file has no
 * such state: its bytes exist already, and the only wait is for the disk.
 * The kernel cannot announce that wait in advance, so for a regular file:
 *   - poll() says "readable and writable" at once, every time;
 *   - O_NONBLOCK changes nothing: read() never fails with EAGAIN, it waits
 *     for the disk like any blocking read (the time below shows the wait
 *     when the file is not in the page cache);
 *   - epoll refuses the file outright: epoll_ctl(ADD) fails with EPERM.
 * This is why runtimes (.NET, libuv) send file I/O to a thread pool, and why
 * io_uring (chapter 07) matters for files.
 *
 * Build and run, from the repository root:
 *     make -C chapters/01-blocking
 *     build/chapters/01-blocking/file-readiness /etc/os-release
 * To see the disk wait, drop the page cache first (root):
 *     sync; echo 3 > /proc/sys/vm/drop_caches; build/chapters/01-blocking/file-readiness FILE
 */
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/epoll.h>
#endif

#define READ_SIZE (64 * 1024)

static char readiness__buf[READ_SIZE];

static void show_poll(int fd, short events)
{
    struct pollfd pfd = {.fd = fd, .events = events};
    int n = poll(&pfd, 1, 0); /* timeout 0: only ask, never wait */

    printf("  poll(%s, timeout 0): ", events & POLLOUT ? "POLLIN|POLLOUT" : "POLLIN");
    if (n < 0)
        printf("%s\n", strerror(errno));
    else if (n == 0)
        printf("nothing ready\n");
    else
        printf("ready now:%s%s\n", pfd.revents & POLLIN ? " POLLIN" : "",
               pfd.revents & POLLOUT ? " POLLOUT" : "");
}

static void show_nonblocking_read(int fd, const char *label)
{
    int64_t start = clock_now_ns();
    ssize_t n;

    do {
        n = read(fd, readiness__buf, sizeof(readiness__buf));
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        printf("  read(%s, O_NONBLOCK): -1 %s (%s)\n", label, strerror(errno),
               errno == EAGAIN ? "EAGAIN" : "error");
    else
        printf("  read(%s, O_NONBLOCK): %zd bytes in %.3f ms\n", label, n,
               (double)(clock_now_ns() - start) / 1e6);
}

static void show_epoll(int fd)
{
#ifdef __linux__
    struct epoll_event ev = {.events = EPOLLIN};
    int ep = epoll_create1(EPOLL_CLOEXEC);

    if (ep < 0) {
        printf("  epoll_create1: %s\n", strerror(errno));
        return;
    }
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
        printf("  epoll_ctl(ADD): %s (%s)\n", strerror(errno), errno == EPERM ? "EPERM" : "?");
    else
        printf("  epoll_ctl(ADD): accepted\n");
    close(ep);
#else
    (void)fd;
    printf("  epoll: not on this system\n");
#endif
}

static int show_regular_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

    if (fd < 0) {
        fprintf(stderr, "file-readiness: open(%s): %s\n", path, strerror(errno));
        return -1;
    }
    printf("regular file %s:\n", path);
    show_poll(fd, POLLIN | POLLOUT);
    show_nonblocking_read(fd, "first 64 KiB");
    if (lseek(fd, 0, SEEK_END) < 0) {
        fprintf(stderr, "file-readiness: lseek(%s, SEEK_END): %s\n", path, strerror(errno));
        close(fd);
        return -1;
    }
    show_poll(fd, POLLIN); /* at end of file: still "ready" */
    show_nonblocking_read(fd, "at end of file");
    show_epoll(fd);
    close(fd);
    return 0;
}

static int show_empty_pipe(void)
{
    int fds[2];

    if (pipe(fds) < 0) {
        fprintf(stderr, "file-readiness: pipe: %s\n", strerror(errno));
        return -1;
    }
    if (fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0) {
        fprintf(stderr, "file-readiness: fcntl(O_NONBLOCK): %s\n", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    printf("empty pipe (a writer exists, nothing written yet):\n");
    show_poll(fds[0], POLLIN);
    show_nonblocking_read(fds[0], "empty");
    show_epoll(fds[0]);
    close(fds[0]);
    close(fds[1]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "-h") == 0) {
        printf("usage: file-readiness FILE\n"
               "Show what poll(), O_NONBLOCK and epoll say about a regular file and an empty "
               "pipe.\n");
        return 0;
    }
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: file-readiness FILE\n");
        return 2;
    }
    if (show_regular_file(argv[1]) < 0)
        return 1;
    return show_empty_pipe() < 0 ? 1 : 0;
}
