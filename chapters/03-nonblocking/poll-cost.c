/* SPDX-License-Identifier: MIT */
/* poll-cost.c: what one poll() or select() call costs with many idle connections.
 *
 *     make -C chapters/03-nonblocking
 *     build/chapters/03-nonblocking/poll-cost        # 0 to 10,000 idle connections
 *     build/chapters/03-nonblocking/poll-cost -q     # quick: up to 1,000, shorter runs
 *
 * The set always holds one ready connection (a byte sits unread in it) plus
 * N idle ones. Each call has a zero timeout and reports the one ready fd, so
 * the work a server wants from it is the same whatever N is. What grows with
 * N is what the call itself does: copy all N+1 entries into the kernel, ask
 * every socket for its state, copy the answers back. The table shows that
 * cost per call and per fd.
 *
 * A child process plays the clients (one per connection), so each process
 * needs a little over N fds; rows that do not fit under `ulimit -n` are
 * skipped with the reason. select() is timed only while every fd is below
 * FD_SETSIZE (1024).
 */
#include "clock.h"
#include "net.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define FD_MARGIN 16 /* fds a process needs besides the connections */

static const int sizes_full[] = {0, 10, 100, 1000, 10000};
static const int sizes_quick[] = {0, 10, 100, 1000};

struct opts {
    int quick;
    int batch_ms; /* length of one timed batch of calls */
    int runs;     /* batches per measurement; the fastest one is reported */
};

/* Raise the soft fd limit as far as the hard limit allows; return it. */
static long fd_limit_raise(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        net_die(errno, "getrlimit(RLIMIT_NOFILE)");
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        net_die(errno, "setrlimit(RLIMIT_NOFILE, %llu)", (unsigned long long)rl.rlim_max);
    return rl.rlim_cur > 1000000 ? 1000000 : (long)rl.rlim_cur;
}

/* The child: connect n times, then hold the connections until the parent
 * closes its end of `hold` (or dies). */
static _Noreturn void clients_run(int port, int n, int hold)
{
    int *fds = calloc((size_t)n + 1, sizeof(int));
    char c;

    if (!fds)
        net_die(ENOMEM, "client: calloc(%d fds)", n);
    for (int i = 0; i < n; i++)
        if ((fds[i] = net_connect("127.0.0.1", port)) < 0)
            net_die(-fds[i], "client: connect #%d to 127.0.0.1:%d", i + 1, port);
    while (read(hold, &c, 1) < 0 && errno == EINTR)
        ;
    for (int i = 0; i < n; i++)
        close(fds[i]);
    free(fds);
    close(hold);
    _exit(0);
}

/* snippet: measure-poll */
/* Nanoseconds per poll() call over pfds[0..n), best of o->runs batches. */
static double time_poll(struct pollfd *pfds, int n, const struct opts *o)
{
    double best = 0;
    long calls = 1;

    for (int run = -1; run < o->runs; run++) { /* run -1 only sizes the batch */
        long long t0 = clock_now_ns(), dt;
        for (long i = 0; i < calls; i++)
            if (poll(pfds, (nfds_t)n, 0) != 1)
                net_die(errno ? errno : EIO, "poll(%d fds) did not report the one ready fd", n);
        dt = clock_now_ns() - t0;
        if (run < 0) {
            calls = (long)((double)o->batch_ms * 1e6 / ((double)dt + 1));
            calls = calls < 10 ? 10 : calls;
            continue;
        }
        if (run == 0 || (double)dt / (double)calls < best)
            best = (double)dt / (double)calls;
    }
    return best;
}
/* end snippet */

/* snippet: measure-select */
/* The same with select(). Its sets are overwritten by every call, so each
 * call starts from a copy of the template, as a select() server must. */
static double time_select(const struct pollfd *pfds, int n, const struct opts *o)
{
    fd_set tmpl, rd;
    int maxfd = -1;
    double best = 0;
    long calls = 1;

    FD_ZERO(&tmpl);
    for (int i = 0; i < n; i++) {
        if (pfds[i].fd >= FD_SETSIZE)
            return -1; /* FD_SET() would write outside the set */
        FD_SET(pfds[i].fd, &tmpl);
        maxfd = pfds[i].fd > maxfd ? pfds[i].fd : maxfd;
    }
    for (int run = -1; run < o->runs; run++) {
        long long t0 = clock_now_ns(), dt;
        for (long i = 0; i < calls; i++) {
            struct timeval zero = {0, 0}; /* select() may change it: reset each time */
            rd = tmpl;
            if (select(maxfd + 1, &rd, NULL, NULL, &zero) != 1)
                net_die(errno ? errno : EIO, "select(nfds=%d) did not report the ready fd",
                        maxfd + 1);
        }
        dt = clock_now_ns() - t0;
        if (run < 0) {
            calls = (long)((double)o->batch_ms * 1e6 / ((double)dt + 1));
            calls = calls < 10 ? 10 : calls;
            continue;
        }
        if (run == 0 || (double)dt / (double)calls < best)
            best = (double)dt / (double)calls;
    }
    return best;
}
/* end snippet */

static void usage(FILE *to, const char *prog)
{
    fprintf(to,
            "usage: %s [-q]\n"
            "Times poll() and select() with one ready connection and 0 to 10,000 idle ones.\n"
            "  -q   quick: up to 1,000 idle connections, shorter runs\n"
            "  -h   show this help\n",
            prog);
}

int main(int argc, char **argv)
{
    struct opts o = {.quick = 0, .batch_ms = 40, .runs = 5};
    const int *sizes = sizes_full;
    int nsizes = (int)(sizeof(sizes_full) / sizeof(sizes_full[0]));
    int opt, lfd, port, active_client, hold[2], max_n = 0, accepted = 0, status = 0;
    struct pollfd *pfds;
    long limit;
    pid_t child;

    while ((opt = getopt(argc, argv, "qh")) != -1) {
        if (opt == 'q') {
            o = (struct opts){.quick = 1, .batch_ms = 5, .runs = 3};
            sizes = sizes_quick;
            nsizes = (int)(sizeof(sizes_quick) / sizeof(sizes_quick[0]));
        } else if (opt == 'h') {
            usage(stdout, argv[0]);
            return 0;
        } else {
            usage(stderr, argv[0]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
        usage(stderr, argv[0]);
        return 2;
    }

    limit = fd_limit_raise();
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] + FD_MARGIN <= limit)
            max_n = sizes[i];
    signal(SIGPIPE, SIG_IGN);

    if ((lfd = net_listen("127.0.0.1", 0, SOMAXCONN)) < 0)
        net_die(-lfd, "listen(127.0.0.1:0)");
    port = net_local_port(lfd);
    if (!(pfds = calloc((size_t)max_n + 1, sizeof(*pfds))))
        net_die(ENOMEM, "calloc(%d pollfds)", max_n + 1);

    /* The ready connection: one byte is written and never read, so POLLIN
     * stays set (level-triggered) on every call. */
    if ((active_client = net_connect("127.0.0.1", port)) < 0)
        net_die(-active_client, "connect(127.0.0.1:%d)", port);
    if ((pfds[0].fd = accept(lfd, NULL, NULL)) < 0)
        net_die(errno, "accept(fd=%d)", lfd);
    if (write(active_client, "x", 1) != 1)
        net_die(errno, "write(fd=%d)", active_client);

    if (pipe(hold) < 0)
        net_die(errno, "pipe()");
    if ((child = fork()) < 0)
        net_die(errno, "fork()");
    if (child == 0) {
        close(hold[1]);
        close(lfd);
        close(pfds[0].fd);
        close(active_client);
        free(pfds);
        clients_run(port, max_n, hold[0]);
    }
    close(hold[0]);
    for (accepted = 0; accepted < max_n; accepted++) {
        struct pollfd lp = {.fd = lfd, .events = POLLIN};
        int fd = -1;
        /* Wait with a deadline: if the client process died, do not hang. */
        if (poll(&lp, 1, 10000) == 1)
            while ((fd = accept(lfd, NULL, NULL)) < 0 && errno == EINTR)
                ;
        else
            errno = ETIMEDOUT;
        if (fd < 0) {
            fprintf(stderr, "accept(fd=%d) #%d: %s\n", lfd, accepted + 1, strerror(errno));
            status = 1;
            goto out;
        }
        pfds[accepted + 1].fd = fd;
    }
    for (int i = 0; i <= max_n; i++)
        pfds[i].events = POLLIN;

    printf("poll() and select(), one ready connection and N idle ones, timeout 0, "
           "fastest of %d runs\n",
           o.runs);
    printf("%10s %15s %10s %17s %12s\n", "idle N", "poll ns/call", "ns/fd", "select ns/call",
           "ns/fd");
    for (int i = 0; i < nsizes; i++) {
        int n = sizes[i] + 1; /* the ready connection is pfds[0] */
        double p, s;
        if (sizes[i] > max_n) {
            printf("%10d   skipped: needs %d fds per process, ulimit -n allows %ld\n", sizes[i],
                   sizes[i] + FD_MARGIN, limit);
            continue;
        }
        p = time_poll(pfds, n, &o);
        s = time_select(pfds, n, &o);
        printf("%10d %15.0f %10.1f", sizes[i], p, p / n);
        if (s < 0)
            printf("   (fds >= FD_SETSIZE)\n");
        else
            printf(" %17.0f %12.1f\n", s, s / n);
        fflush(stdout);
    }

out:
    /* Close the server ends first: TIME_WAIT then stays on this side and
     * does not use up the client's ephemeral ports for the next run. */
    for (int i = 0; i <= accepted; i++)
        close(pfds[i].fd);
    close(hold[1]); /* the child sees EOF and exits (also if we die) */
    if (status != 0)
        kill(child, SIGTERM); /* it may still be connecting */
    waitpid(child, NULL, 0);
    close(active_client);
    close(lfd);
    free(pfds);
    return status;
}
