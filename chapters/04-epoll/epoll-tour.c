/* SPDX-License-Identifier: MIT */
/* epoll-tour.c: the rules of epoll, one step at a time, each checked.
 *
 *     make -C chapters/04-epoll
 *     build/chapters/04-epoll/epoll-tour
 *
 * Linux 2.6.17 or later (EPOLLRDHUP). The steps:
 *
 *   1. The interest list and the ready list: 100 pipes registered, 3 with
 *      bytes in them; epoll_wait() returns those 3 and nothing else. With a
 *      batch smaller than the ready list, the rest wait for the next call.
 *   2. Level-triggered: a pipe with unread bytes is reported on every call
 *      until it is empty.
 *   3. EPOLLOUT: a socket with room in its send buffer is writable on every
 *      call, which is why a server drops EPOLLOUT when it has nothing to send.
 *   4. EPOLLERR and EPOLLHUP are reported even when not asked for.
 *   5. EPOLLRDHUP: the peer half-closed; the event stays on after read()
 *      returned 0, which is why a server drops EPOLLIN after EOF.
 *   6. epoll_ctl() errors: EEXIST, ENOENT, EINVAL, ELOOP, EBADF, EPERM.
 *
 * If the kernel does something else than the text says, the program says so
 * and exits 1.
 */
#include "clock.h"
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define NPIPES 100

static const char *errname(int err)
{
    const char *name = strerrorname_np(err);
    return name ? name : "?";
}

/* "EPOLLIN|EPOLLRDHUP" for an event mask (a static buffer: print before the next call). */
static const char *evname(uint32_t ev)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } bits[] = {{EPOLLIN, "EPOLLIN"},   {EPOLLOUT, "EPOLLOUT"}, {EPOLLRDHUP, "EPOLLRDHUP"},
                {EPOLLERR, "EPOLLERR"}, {EPOLLHUP, "EPOLLHUP"}, {EPOLLPRI, "EPOLLPRI"},
                {EPOLLRDNORM, NULL},    {EPOLLWRNORM, NULL}};
    static char out[128];

    out[0] = '\0';
    for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
        if ((ev & bits[i].bit) && bits[i].name)
            snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", out[0] ? "|" : "",
                     bits[i].name);
    return out[0] ? out : "0";
}

static int new_epoll(void)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);

    if (ep < 0)
        net_die(errno, "epoll_create1");
    return ep;
}

static void add(int ep, int fd, uint32_t events, uint64_t tag)
{
    struct epoll_event ev = {.events = events, .data.u64 = tag};

    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
        net_die(errno, "epoll_ctl(ADD, fd=%d)", fd);
}

static int wait_for(int ep, struct epoll_event *evs, int max, int ms)
{
    int n;

    while ((n = epoll_wait(ep, evs, max, ms)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        net_die(errno, "epoll_wait(epfd=%d, %d)", ep, max);
    return n;
}

/* A connected loopback TCP pair: *a and *b. */
static void tcp_pair(int *a, int *b)
{
    int lfd = net_listen("127.0.0.1", 0, 4);

    if (lfd < 0)
        net_die(-lfd, "listen(127.0.0.1:0)");
    if ((*a = net_connect("127.0.0.1", net_local_port(lfd))) < 0)
        net_die(-*a, "connect(127.0.0.1:%d)", net_local_port(lfd));
    if ((*b = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
        net_die(errno, "accept(fd=%d)", lfd);
    close(lfd);
}

static void put(int fd, const char *bytes)
{
    if (write(fd, bytes, strlen(bytes)) != (ssize_t)strlen(bytes))
        net_die(errno, "write(fd=%d)", fd);
}

/* snippet: ready-list */
static void step_ready_list(void)
{
    int ep = new_epoll(), p[NPIPES][2], ready[] = {7, 42, 93};
    struct epoll_event evs[64];
    int n;

    for (int i = 0; i < NPIPES; i++) {
        if (pipe2(p[i], O_NONBLOCK | O_CLOEXEC) < 0)
            net_die(errno, "pipe2");
        add(ep, p[i][0], EPOLLIN, (uint64_t)i); /* data: the pipe's number */
    }
    for (int i = 0; i < 3; i++)
        put(p[ready[i]][1], "x");
    n = wait_for(ep, evs, 64, 0);
    printf("  %d pipes in the interest list, bytes written into 3 of them\n", NPIPES);
    printf("  epoll_wait(maxevents 64) = %d:", n);
    for (int i = 0; i < n; i++)
        printf(" pipe %llu", (unsigned long long)evs[i].data.u64);
    printf("\n");
    if (n != 3)
        net_unexpected("epoll_wait returned %d events for 3 ready pipes", n);

    /* A batch of 2 for 3 ready: the third waits, and comes first next time. */
    n = wait_for(ep, evs, 2, 0);
    printf("  epoll_wait(maxevents 2) = %d: pipe %llu, pipe %llu", n,
           (unsigned long long)evs[0].data.u64, (unsigned long long)evs[1].data.u64);
    n = wait_for(ep, evs, 2, 0);
    printf("; again = %d: pipe %llu first\n", n, (unsigned long long)evs[0].data.u64);
    if (n != 2 || evs[0].data.u64 != (uint64_t)ready[2])
        net_unexpected("the pipe left out of a full batch did not come first in the next one");
    /* end snippet */
    for (int i = 0; i < NPIPES; i++) {
        close(p[i][0]);
        close(p[i][1]);
    }
    close(ep);
}

static void step_level_triggered(void)
{
    int ep = new_epoll(), p[2], n = 0;
    struct epoll_event ev;
    char buf[8];

    if (pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0)
        net_die(errno, "pipe2");
    add(ep, p[0], EPOLLIN, 0);
    put(p[1], "abc");
    for (int i = 0; i < 3; i++)
        n += wait_for(ep, &ev, 1, 0);
    printf("  3 bytes in a pipe, nothing read: reported by %d of 3 epoll_wait() calls\n", n);
    if (n != 3)
        net_unexpected("level-triggered epoll reported unread bytes %d times of 3", n);
    if (read(p[0], buf, 1) != 1)
        net_die(errno, "read(fd=%d)", p[0]);
    n = wait_for(ep, &ev, 1, 0);
    printf("  1 byte read, 2 left: reported again (%d)\n", n);
    if (read(p[0], buf, sizeof(buf)) != 2 || (n = wait_for(ep, &ev, 1, 0)) != 0)
        net_unexpected("after reading everything epoll_wait returned %d", n);
    printf("  the rest read: epoll_wait() = 0, the pipe left the ready list\n");
    close(p[0]);
    close(p[1]);
    close(ep);
}

/* snippet: epollout */
static void step_epollout(void)
{
    int ep = new_epoll(), a, b, n = 0;
    struct epoll_event ev;
    int64_t t0;

    tcp_pair(&a, &b);
    add(ep, a, EPOLLIN | EPOLLOUT, 0);
    t0 = clock_now_ns();
    for (int i = 0; i < 100000; i++)
        n += wait_for(ep, &ev, 1, -1); /* timeout -1: sleep as long as nothing is ready */
    printf("  EPOLLOUT asked, nothing to send: %d of 100000 epoll_wait(timeout -1) calls\n"
           "  returned at once, in %.0f ms\n",
           n, (double)(clock_now_ns() - t0) / 1e6);
    if (n != 100000)
        net_unexpected("EPOLLOUT was not reported on every call");
    ev.events = EPOLLIN;
    if (epoll_ctl(ep, EPOLL_CTL_MOD, a, &ev) < 0)
        net_die(errno, "epoll_ctl(MOD, fd=%d)", a);
    n = wait_for(ep, &ev, 1, 200);
    printf("  EPOLL_CTL_MOD to EPOLLIN only: epoll_wait(200 ms) = %d, the loop can sleep\n", n);
    if (n != 0)
        net_unexpected("epoll_wait reported %s without EPOLLOUT asked", evname(ev.events));
    /* end snippet */
    close(a);
    close(b);
    close(ep);
}

static void step_err_hup(void)
{
    int ep = new_epoll(), rp[2], wp[2], a, b, n;
    struct epoll_event ev;
    struct linger abort_close = {.l_onoff = 1, .l_linger = 0};

    if (pipe2(rp, O_CLOEXEC) < 0 || pipe2(wp, O_CLOEXEC) < 0)
        net_die(errno, "pipe2");
    add(ep, rp[0], 0, 1); /* events 0: nothing asked for */
    close(rp[1]);
    n = wait_for(ep, &ev, 1, 0);
    printf("  pipe read end, events 0, writer closed: %d event, %s\n", n, evname(ev.events));
    if (n != 1 || !(ev.events & EPOLLHUP))
        net_unexpected("no EPOLLHUP for a pipe whose writer closed");
    n = wait_for(ep, &ev, 1, 0) + wait_for(ep, &ev, 1, 0);
    printf("  and again on %d of the next 2 calls: level-triggered, like the rest\n", n);
    if (n != 2)
        net_unexpected("EPOLLHUP was reported %d times of 2 after the first", n);
    epoll_ctl(ep, EPOLL_CTL_DEL, rp[0], NULL);

    add(ep, wp[1], 0, 2);
    close(wp[0]);
    n = wait_for(ep, &ev, 1, 0);
    printf("  pipe write end, events 0, reader closed: %d event, %s\n", n, evname(ev.events));
    if (n != 1 || !(ev.events & EPOLLERR))
        net_unexpected("no EPOLLERR for a pipe whose reader closed");
    epoll_ctl(ep, EPOLL_CTL_DEL, wp[1], NULL);

    tcp_pair(&a, &b);
    add(ep, a, 0, 3);
    if (setsockopt(b, SOL_SOCKET, SO_LINGER, &abort_close, sizeof(abort_close)) < 0)
        net_die(errno, "setsockopt(fd=%d, SO_LINGER)", b);
    close(b); /* linger 0: the peer sends RST */
    n = wait_for(ep, &ev, 1, 2000);
    printf("  TCP socket, events 0, peer reset: %d event, %s\n", n, evname(ev.events));
    if (n != 1 || !(ev.events & (EPOLLERR | EPOLLHUP)))
        net_unexpected("no EPOLLERR/EPOLLHUP for a reset TCP connection");
    close(a);
    close(rp[0]);
    close(wp[1]);
    close(ep);
}

/* snippet: rdhup */
static void step_rdhup(void)
{
    int ep = new_epoll(), a, b, n;
    struct epoll_event ev;
    char buf[16];

    tcp_pair(&a, &b);
    add(ep, a, EPOLLIN | EPOLLRDHUP, 0);
    put(b, "bye");
    if (shutdown(b, SHUT_WR) < 0) /* the peer half-closes: FIN after its bytes */
        net_die(errno, "shutdown(fd=%d, SHUT_WR)", b);
    n = wait_for(ep, &ev, 1, 2000);
    printf("  the peer sent 3 bytes and half-closed: %s\n", n ? evname(ev.events) : "nothing");
    if (n != 1 || !(ev.events & EPOLLRDHUP))
        net_unexpected("no EPOLLRDHUP after the peer's shutdown(SHUT_WR)");
    n = (int)read(a, buf, sizeof(buf));
    printf("  read() = %d, read() again = %d (EOF)\n", n, (int)read(a, buf, sizeof(buf)));
    n = wait_for(ep, &ev, 1, 0) + wait_for(ep, &ev, 1, 0);
    printf("  after EOF, still asked for EPOLLIN: reported by %d of 2 calls (%s)\n", n,
           evname(ev.events));
    if (n != 2)
        net_unexpected("EOF was not reported again while EPOLLIN stayed armed");
    /* end snippet */
    close(a);
    close(b);
    close(ep);
}

/* snippet: ctl-errors */
static void show_ctl(const char *what, int ep, int op, int fd, int expect)
{
    struct epoll_event ev = {.events = EPOLLIN};
    int r = epoll_ctl(ep, op, fd, &ev), err = r < 0 ? errno : 0;

    printf("  %-52s -> %s\n", what, r == 0 ? "0" : errname(err));
    if (err != expect)
        net_unexpected("%s: expected %s", what, errname(expect));
}

static void step_ctl_errors(void)
{
    int ep = new_epoll(), ep2 = new_epoll(), p[2];
    FILE *file = tmpfile(); /* a regular file, deleted on exit */

    if (pipe2(p, O_CLOEXEC) < 0)
        net_die(errno, "pipe2");
    if (!file)
        net_die(errno, "tmpfile()");
    show_ctl("ADD a pipe", ep, EPOLL_CTL_ADD, p[0], 0);
    show_ctl("ADD the same pipe again", ep, EPOLL_CTL_ADD, p[0], EEXIST);
    show_ctl("MOD a pipe never added", ep, EPOLL_CTL_MOD, p[1], ENOENT);
    show_ctl("DEL a pipe never added", ep, EPOLL_CTL_DEL, p[1], ENOENT);
    show_ctl("ADD the epoll fd to itself", ep, EPOLL_CTL_ADD, ep, EINVAL);
    show_ctl("ADD epoll B to epoll A", ep, EPOLL_CTL_ADD, ep2, 0);
    show_ctl("ADD epoll A to epoll B (a cycle)", ep2, EPOLL_CTL_ADD, ep, ELOOP);
    close(p[1]);
    show_ctl("ADD an fd that is closed", ep, EPOLL_CTL_ADD, p[1], EBADF);
    show_ctl("ADD a regular file", ep, EPOLL_CTL_ADD, fileno(file), EPERM);
    fclose(file);
    close(p[0]);
    close(ep2);
    close(ep);
}
/* end snippet */

int main(int argc, char **argv)
{
    net_cli_none(argc, argv, "Shows the rules of epoll, one step at a time, each checked.");
    signal(SIGPIPE, SIG_IGN); /* step 4 writes nothing, but be safe with closed pipes */
    printf("step 1: the interest list and the ready list\n");
    step_ready_list();
    printf("step 2: level-triggered: reported while the condition holds\n");
    step_level_triggered();
    printf("step 3: EPOLLOUT with nothing to send\n");
    step_epollout();
    printf("step 4: EPOLLERR and EPOLLHUP come without being asked for\n");
    step_err_hup();
    printf("step 5: EPOLLRDHUP, and EOF that stays readable\n");
    step_rdhup();
    printf("step 6: epoll_ctl() errors\n");
    step_ctl_errors();
    printf("every step behaved as described\n");
    return 0;
}
