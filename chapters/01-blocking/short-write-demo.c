/* SPDX-License-Identifier: MIT */
/* short-write-demo.c: the kernel itself returns short writes on a blocking socket.
 *
 * No shim, no tricks: a TCP connection over loopback whose receiving end
 * never reads, small socket buffers, and one write() of 16 MiB. The kernel
 * copies what fits into the buffers, then puts the thread to sleep until the
 * peer makes room, which never happens. A timer signal (SIGALRM) one second
 * later wakes the thread, and what write() returns depends on one thing:
 *
 *   bytes already copied in this call  ->  that count: a short write
 *   nothing copied yet                 ->  -1 with errno EINTR
 *
 * SA_RESTART (sigaction(2)) makes the kernel restart an interrupted call
 * instead of returning EINTR, but only a call that transferred nothing: a
 * short write stays short. So every blocking writer must loop (net_write_all),
 * and a server that wants SIGTERM to wake it must install its handler
 * WITHOUT SA_RESTART (net_on_shutdown_signals), or the blocked call goes
 * straight back to sleep. The fourth run below shows that: the first signal
 * is swallowed by the restart, and only the peer's reset a second later ends
 * the write.
 *
 * Build and run, from the repository root (it takes about 5 seconds):
 *     make -C chapters/01-blocking
 *     build/chapters/01-blocking/short-write-demo
 */
#include "clock.h"
#include "net.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define DEMO_WRITE_SIZE (16 * 1024 * 1024)
#define DEMO_SOCKBUF    (64 * 1024) /* the kernel doubles it for its bookkeeping */

/* The signal handler closes the peer on tick `demo__close_peer_on` (0: never),
 * so a restarted write has something that finally ends it. */
static volatile sig_atomic_t demo__ticks;
static volatile sig_atomic_t demo__close_peer_on;
static volatile sig_atomic_t demo__peer_fd = -1;

static void demo__on_alarm(int sig)
{
    (void)sig;
    demo__ticks++;
    if (demo__close_peer_on && demo__ticks == demo__close_peer_on && demo__peer_fd >= 0) {
        /* close() is async-signal-safe. Unread data in the peer's buffer
         * makes the kernel answer with a reset (RST), which wakes the writer. */
        close(demo__peer_fd);
        demo__peer_fd = -1;
    }
}

static void demo__install(int restart)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = demo__on_alarm;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigaction(SIGALRM, &sa, NULL);
}

/* SIGALRM every second from now on (0: disarm). */
static void demo__timer(int seconds)
{
    struct itimerval it = {{seconds, 0}, {seconds, 0}};

    setitimer(ITIMER_REAL, &it, NULL);
}

/* A loopback TCP connection with small buffers: `writer` sends, `peer` never reads. */
static int demo__connect_pair(int *writer, int *peer)
{
    int lfd, wfd, pfd, size = DEMO_SOCKBUF, err;

    lfd = net_listen("127.0.0.1", 0, 1);
    if (lfd < 0)
        return lfd;
    /* Set before the handshake: the accepted socket inherits it, and the
     * window the peer advertises is computed from it. */
    setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
    wfd = net_connect("127.0.0.1", net_local_port(lfd));
    if (wfd < 0) {
        err = wfd;
        goto close_listener;
    }
    setsockopt(wfd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
    do {
        pfd = accept(lfd, NULL, NULL);
    } while (pfd < 0 && errno == EINTR);
    if (pfd < 0) {
        err = -errno;
        goto close_writer;
    }
    close(lfd);
    *writer = wfd;
    *peer = pfd;
    return 0;

close_writer:
    close(wfd);
close_listener:
    close(lfd);
    return err;
}

/* One blocking write() of the whole buffer; print what it returned and when. */
/* snippet: timed-write */
static ssize_t demo_write(int fd, const char *buf, const char *why_short)
{
    double start = clock_now_s();
    ssize_t n = write(fd, buf, DEMO_WRITE_SIZE); /* blocks: the peer never reads */
    int err = errno;
    double took = clock_now_s() - start;

    if (n >= 0)
        printf("  write(fd=%d, %d bytes) returned %zd after %.2f s: %s\n", fd, DEMO_WRITE_SIZE, n,
               took, n < DEMO_WRITE_SIZE ? why_short : "everything");
    else
        printf("  write(fd=%d, %d bytes) returned -1 after %.2f s: %s\n", fd, DEMO_WRITE_SIZE, took,
               strerror(err));
    return n;
}
/* end snippet */

/* Two writes on one fresh connection: the first copies some bytes before the
 * signal, the second finds the buffers already full. */
static int demo_run(const char *buf, int restart)
{
    int writer = -1, peer = -1, err;

    demo__ticks = 0;
    demo__close_peer_on = restart ? 2 : 0;
    demo__install(restart);
    if ((err = demo__connect_pair(&writer, &peer)) < 0) {
        fprintf(stderr, "short-write-demo: loopback connection: %s\n", strerror(-err));
        return -1;
    }
    demo__peer_fd = peer;
    printf("%s, peer not reading:\n", restart ? "SA_RESTART" : "no SA_RESTART");

    demo__timer(1);
    demo_write(writer, buf, "a short write, bytes went in before the signal");
    demo__timer(1); /* re-armed: the next tick comes one second after this write starts */
    demo__ticks = 0;
    demo_write(writer, buf, "a short write");
    demo__timer(0);

    close(writer);
    if (demo__peer_fd >= 0)
        close(demo__peer_fd);
    demo__peer_fd = -1;
    return 0;
}

int main(int argc, char **argv)
{
    char *buf;
    int status = 0;

    net_cli_none(argc, argv,
                 "Show write() on a blocking socket returning a short count, and -1/EINTR,\n"
                 "when SIGALRM interrupts it; then the same with SA_RESTART.");
    signal(SIGPIPE, SIG_IGN); /* a write to the reset peer fails with EPIPE, not a kill */
    buf = calloc(1, DEMO_WRITE_SIZE);
    if (!buf)
        net_die(ENOMEM, "calloc(%d)", DEMO_WRITE_SIZE);
    if (demo_run(buf, 0) < 0 || demo_run(buf, 1) < 0)
        status = 1;
    free(buf);
    return status;
}
