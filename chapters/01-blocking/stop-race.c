/* SPDX-License-Identifier: MIT */
/* stop-race.c: the race between a stop flag and a blocking call, made to hit
 * every time, and the two ways to close it.
 *
 * A blocking server's loop looks like this:
 *
 *     while (!stop_requested)        the flag is tested: 0
 *         n = read(fd, ...);         the thread enters the kernel and sleeps
 *
 * A SIGTERM whose handler sets the flag is caught in time if it lands while
 * the thread sleeps (read() returns EINTR) or before the test. If it lands
 * between the two, the handler sets the flag, and read() then sleeps as
 * if nothing had happened: nobody looks at the flag again until a client
 * sends something. In a real server that gap is a few instructions wide.
 * Here the program sends itself the signal in exactly that gap (raise()
 * runs the handler before it returns), so the race is hit on every run.
 *
 *     stop-race flag       the flag alone: read() sleeps on, until a 1 s
 *                          watchdog (SIGALRM) ends it; exit status 1
 *     stop-race shutdown   the handler also shuts the sockets down, as
 *                          echo-blocking's does (stop.c): read() returns 0
 *                          and accept() fails, at once; exit status 0
 *     stop-race ppoll      SIGTERM stays blocked, except inside ppoll(),
 *                          which unblocks it and sleeps in one step: the
 *                          pending signal interrupts it at once; exit 0
 *
 * The sockets are real: a listener on 127.0.0.1 with one connection
 * accepted from it, which the program "serves".
 */
#include "clock.h"
#include "net.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum mode { MODE_FLAG, MODE_SHUTDOWN, MODE_PPOLL };

static enum mode mode;
static volatile sig_atomic_t listen_fd = -1, client_fd = -1;

static void on_term(int sig)
{
    (void)sig;
    net_stop_requested = 1;
    /* EXERCISE BEGIN lost-signal: shutdown mode: shut down both sockets the program sleeps on */
    if (mode == MODE_SHUTDOWN) {
        shutdown(client_fd, SHUT_RDWR);
        shutdown(listen_fd, SHUT_RDWR);
    }
    /* EXERCISE END */
}

static void on_alarm(int sig)
{
    (void)sig; /* only there to interrupt the call (no SA_RESTART) */
}

static void catch (int sig, void (*handler)(int))
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL); /* no SA_RESTART: a blocked call returns EINTR */
}

/* A listener on 127.0.0.1, one client connected to it, and the server's
 * end of that connection. */
static void make_sockets(int *client_end)
{
    int port, fd;

    if ((fd = net_listen("127.0.0.1", 0, 4)) < 0)
        net_die(-fd, "listen on 127.0.0.1");
    listen_fd = fd;
    if ((port = net_local_port(fd)) < 0)
        net_die(-port, "getsockname");
    if ((*client_end = net_connect("127.0.0.1", port)) < 0)
        net_die(-*client_end, "connect to 127.0.0.1:%d", port);
    if ((fd = accept(listen_fd, NULL, NULL)) < 0)
        net_die(errno, "accept");
    client_fd = fd;
}

/* "CALL returned N after S s" (S < 0: no time), with errno's name on -1. */
static void report(const char *call, ssize_t ret, int err, double slept)
{
    char after[32] = "";

    if (slept >= 0)
        snprintf(after, sizeof(after), " after %.2f s", slept);
    if (ret < 0)
        printf("%s returned -1 (%s)%s\n", call, strerror(err), after);
    else
        printf("%s returned %zd%s\n", call, ret, after);
}

int main(int argc, char **argv)
{
    sigset_t term, unblocked;
    int peer, err;
    char buf[64];
    ssize_t n;
    double t0;

    if (argc != 2 ||
        (strcmp(argv[1], "flag") && strcmp(argv[1], "shutdown") && strcmp(argv[1], "ppoll"))) {
        fprintf(stderr, "usage: stop-race flag|shutdown|ppoll\n"
                        "Sends itself SIGTERM between testing a stop flag and a blocking call,\n"
                        "and shows what each way of stopping makes of it.\n");
        return 2;
    }
    mode = !strcmp(argv[1], "flag")       ? MODE_FLAG
           : !strcmp(argv[1], "shutdown") ? MODE_SHUTDOWN
                                          : MODE_PPOLL;
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    catch (SIGTERM, on_term);
    catch (SIGALRM, on_alarm);
    make_sockets(&peer);

    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    /* EXERCISE BEGIN lost-signal: ppoll mode: block SIGTERM; unblocked = the old mask without it */
    if (mode == MODE_PPOLL)
        sigprocmask(SIG_BLOCK, &term, &unblocked); /* `unblocked`: the mask as it was */
    sigdelset(&unblocked, SIGTERM);
    /* EXERCISE END */

    /* snippet: window */
    if (net_stop_requested)
        return 0;
    printf("flag tested: %d\n", (int)net_stop_requested);
    raise(SIGTERM); /* the signal lands here, between the test and the call */
    printf("SIGTERM sent: %s\n", mode == MODE_PPOLL
                                     ? "blocked, so it waits, pending; the flag is still 0"
                                     : "its handler ran and set the flag to 1");
    alarm(1); /* the watchdog: a read() that sleeps on is interrupted after 1 s */
    t0 = clock_now_s();
    if (mode == MODE_PPOLL) {
        struct pollfd p = {.fd = client_fd, .events = POLLIN};

        n = ppoll(&p, 1, NULL, &unblocked); /* unblocks SIGTERM and sleeps, in one step */
        err = errno;
        report("ppoll() on the connection, with SIGTERM unblocked,", n, err, clock_now_s() - t0);
    } else {
        n = read(client_fd, buf, sizeof(buf)); /* nobody has sent anything: it sleeps */
        err = errno;
        report("read() on the connection", n, err, clock_now_s() - t0);
    }
    /* end snippet */
    alarm(0);

    if (mode == MODE_SHUTDOWN) {
        int fd = accept(listen_fd, NULL, NULL);

        err = errno;
        if (fd >= 0)
            close(fd);
        report("accept() on the listener", fd, err, -1);
    }
    bool stopped = net_stop_requested && clock_now_s() - t0 < 0.5;
    printf("%s\n",
           stopped ? "stopped at once: the signal was not lost"
                   : "the call slept on after SIGTERM, until the watchdog: the signal was lost");
    close(peer);
    close(client_fd);
    close(listen_fd);
    return stopped ? 0 : 1;
}
