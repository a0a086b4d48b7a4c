/* SPDX-License-Identifier: MIT */
/* stop-anytime.c: start a server many times and stop it at a different moment
 * each time, the way a supervisor (systemd, Docker, a Ctrl-C) does: whenever
 * it likes, not when the server happens to be asleep.
 *
 *     stop-anytime [options] -- build/chapters/06-kqueue/echo-kqueue -p 0
 *
 * Each start runs the command, reads its "listening on ADDR:PORT" line and
 * sends SIGTERM (or -s INT) at one of four moments, in turn:
 *
 *   listen   at once, on reading the line: the server may not have
 *            finished its set-up (signals queued but not yet registered);
 *   connect  right after a client connected: the server may be between
 *            accept() and its first read, or adding the fd to its poller;
 *   echo     in the middle of an echo: a client sends up to 256 KiB and
 *            the signal goes as the first bytes come back;
 *   delay    a client sends a line, then a random 0-2 ms passes.
 *
 * The clients stay connected while the server stops. Every start must end
 * with exit status 0 within -t seconds of the signal; one that does not is
 * killed (SIGKILL) and reported with its standard error. The server's
 * standard output is read (and dropped) all along, so a server that logs
 * every connection never blocks on a full pipe.
 *
 * Exit status: 0 every start stopped cleanly, 1 at least one did not (or a
 * start failed), 2 bad arguments.
 */
#include "clock.h"
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ECHO_BYTES (256 * 1024) /* what the "echo" moment's client sends, at most */

enum moment { AT_LISTEN, AT_CONNECT, AT_ECHO, AT_DELAY, MOMENTS };

static const char *const moment_names[MOMENTS] = {"listen", "connect", "echo", "delay"};
static const char *const moment_titles[MOMENTS] = {"just after 'listening on'",
                                                   "just after a connect", "mid-echo",
                                                   "0-2 ms after a line was sent"};

struct opts {
    int starts;         /* -n */
    int sig;            /* -s */
    double stop_s;      /* -t: seconds to exit after the signal */
    double start_s;     /* -w: seconds to print the listening line */
    const char *errlog; /* -e: the server's stderr, per start (rewritten each time) */
    unsigned seed;      /* -S */
    bool verbose;       /* -v */
    bool retry;         /* -R: a start that dies before its listening line is tried once more */
    char **cmd;
};

struct run {
    pid_t pid;
    int out; /* the server's stdout (read end) */
    int port;
    int client;     /* -1 when the moment needs none */
    double sent_at; /* when the signal went */
};

static void usage(FILE *to)
{
    fputs("usage: stop-anytime [-n STARTS] [-s TERM|INT] [-t SECS] [-w SECS] [-e FILE] [-S SEED] "
          "[-v]\n"
          "                    -- SERVER [ARGS...]\n"
          "Starts SERVER STARTS times and stops it with a signal at a different moment each\n"
          "time (just after 'listening on', after a connect, mid-echo, after 0-2 ms).\n"
          "  -n STARTS  how many starts (default 40)\n"
          "  -s SIG     TERM (default) or INT\n"
          "  -t SECS    each start must exit 0 within SECS of the signal (default 3)\n"
          "  -w SECS    how long a start may take to print 'listening on' (default 10)\n"
          "  -e FILE    where the server's stderr goes (default: a file in $TMPDIR)\n"
          "  -S SEED    seed of the random delays (default: the time)\n"
          "  -v         one line per start\n"
          "  -R         a start that ends before its listening line is tried once more\n"
          "             (Wine now and then fails to start a program; see tests/helpers/wine.bash)\n"
          "Exit status: 0 all stopped cleanly, 1 one did not, 2 bad arguments.\n",
          to);
}

static _Noreturn void usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "stop-anytime: %s: '%s'\n", what, arg ? arg : "");
    usage(stderr);
    exit(2);
}

static void parse(struct opts *o, int argc, char **argv)
{
    long v;
    int c;

    *o = (struct opts){.starts = 40, .sig = SIGTERM, .stop_s = 3, .start_s = 10};
    o->seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    while ((c = getopt(argc, argv, "+n:s:t:w:e:S:vRh")) != -1) {
        switch (c) {
        case 'n':
            if (net_parse_int(optarg, 1, 100000, &v) < 0)
                usage_error("-n wants a number of starts, 1 or more", optarg);
            o->starts = (int)v;
            break;
        case 's':
            if (strcmp(optarg, "TERM") == 0)
                o->sig = SIGTERM;
            else if (strcmp(optarg, "INT") == 0)
                o->sig = SIGINT;
            else
                usage_error("-s wants TERM or INT", optarg);
            break;
        case 't':
        case 'w':
            if (net_parse_int(optarg, 1, 3600, &v) < 0)
                usage_error(c == 't' ? "-t wants whole seconds, 1 to 3600"
                                     : "-w wants whole seconds, 1 to 3600",
                            optarg);
            *(c == 't' ? &o->stop_s : &o->start_s) = (double)v;
            break;
        case 'e':
            o->errlog = optarg;
            break;
        case 'S':
            if (net_parse_int(optarg, 0, 4294967295L, &v) < 0)
                usage_error("-S wants a number", optarg);
            o->seed = (unsigned)v;
            break;
        case 'v':
            o->verbose = true;
            break;
        case 'R':
            o->retry = true;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            exit(2);
        }
    }
    if (optind >= argc)
        usage_error("no server command after the options", NULL);
    o->cmd = &argv[optind];
}

/* Read and drop what the server wrote, waiting at most `ms` for it (the
 * pipe is non-blocking: the loop ends at EAGAIN, or at EOF). */
static void drain(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char buf[4096];

    if (fd >= 0 && poll(&p, 1, ms) > 0)
        while (read(fd, buf, sizeof(buf)) > 0) {
        }
}

/* Start the server with stdout on a pipe and stderr in `errlog`; wait for
 * its listening line. Returns 0, or -1 with the reason printed (-2 when it
 * closed its stdout without writing a byte: it died before it started). */
static int start(const struct opts *o, const char *errlog, struct run *r)
{
    char line[256];
    size_t len = 0;
    int pipefd[2];
    double deadline = clock_now_s() + o->start_s;

    if (pipe2(pipefd, O_CLOEXEC) < 0)
        net_die(errno, "pipe2");
    r->pid = fork();
    if (r->pid < 0)
        net_die(errno, "fork");
    if (r->pid == 0) {
        int err = open(errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (err < 0 || dup2(pipefd[1], 1) < 0 || dup2(err, 2) < 0)
            _exit(126);
        signal(SIGPIPE, SIG_DFL);
        execvp(o->cmd[0], o->cmd);
        fprintf(stderr, "stop-anytime: cannot run %s: %s\n", o->cmd[0], strerror(errno));
        _exit(127);
    }
    close(pipefd[1]);
    r->out = pipefd[0];
    net_set_nonblocking(r->out); /* drain() reads until EAGAIN */
    /* Byte by byte up to the first newline: what follows stays in the pipe. */
    while (len < sizeof(line) - 1) {
        struct pollfd p = {.fd = r->out, .events = POLLIN};
        int left = (int)((deadline - clock_now_s()) * 1000);
        ssize_t n;

        if (left <= 0 || poll(&p, 1, left) == 0) {
            fprintf(stderr, "stop-anytime: no 'listening on' line within %.0f s\n", o->start_s);
            return -1;
        }
        n = read(r->out, &line[len], 1);
        if (n < 0 && errno == EAGAIN)
            continue;
        if (n <= 0) {
            fprintf(stderr, "stop-anytime: the server closed its stdout before 'listening on'\n");
            return len == 0 ? -2 : -1;
        }
        if (line[len] == '\n')
            break;
        len++;
    }
    line[len] = '\0';
    const char *colon = strrchr(line, ':');
    long port;
    if (strncmp(line, "listening on ", 13) != 0 || !colon ||
        net_parse_int(colon + 1, 1, 65535, &port) < 0) {
        fprintf(stderr, "stop-anytime: expected 'listening on ADDR:PORT', got '%s'\n", line);
        return -1;
    }
    r->port = (int)port;
    return 0;
}

/* Bring the server to `m`, then send the signal. */
static void provoke(const struct opts *o, struct run *r, enum moment m)
{
    static char data[ECHO_BYTES];

    r->client = -1;
    if (m != AT_LISTEN) {
        r->client = net_connect("127.0.0.1", r->port);
        if (r->client < 0) /* a server that stopped too soon is judged below */
            fprintf(stderr, "stop-anytime: connect to port %d: %s\n", r->port,
                    strerror(-r->client));
    }
    if (r->client >= 0 && m == AT_ECHO) {
        struct pollfd p = {.fd = r->client, .events = POLLIN};
        char first;

        memset(data, 'e', sizeof(data));
        net_set_nonblocking(r->client);
        if (send(r->client, data, sizeof(data), MSG_NOSIGNAL) > 0 && poll(&p, 1, 2000) > 0)
            (void)recv(r->client, &first, 1, 0); /* the echo has begun: the rest is in flight */
    }
    if (r->client >= 0 && m == AT_DELAY) {
        struct timespec d = {0, (long)(rand() % 2001) * 1000};

        (void)send(r->client, "ping\n", 5, MSG_NOSIGNAL);
        nanosleep(&d, NULL);
    }
    r->sent_at = clock_now_s();
    kill(r->pid, o->sig);
}

/* Wait for the exit; 0 when it was status 0 in time, else -1 with why. */
static int judge(const struct opts *o, struct run *r, char *why, size_t size, double *took)
{
    int status;

    for (;;) {
        pid_t w = waitpid(r->pid, &status, WNOHANG);
        if (w == r->pid)
            break;
        if (clock_now_s() - r->sent_at > o->stop_s) {
            kill(r->pid, SIGKILL);
            waitpid(r->pid, &status, 0);
            snprintf(why, size, "still running %.1f s later (killed)", o->stop_s);
            return -1;
        }
        drain(r->out, 2);
    }
    *took = clock_now_s() - r->sent_at;
    if (WIFSIGNALED(status)) {
        snprintf(why, size, "killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
        return -1;
    }
    if (WEXITSTATUS(status) != 0) {
        snprintf(why, size, "exit status %d", WEXITSTATUS(status));
        return -1;
    }
    return 0;
}

static void show_stderr(const char *errlog)
{
    char line[512];
    FILE *f = fopen(errlog, "r");
    int n = 0;

    if (!f)
        return;
    while (fgets(line, sizeof(line), f) && n++ < 20)
        fprintf(stderr, "    | %s", line);
    fclose(f);
}

int main(int argc, char **argv)
{
    struct opts o;
    char errlog_tmp[4096];
    const char *errlog;
    int ok[MOMENTS] = {0}, tried[MOMENTS] = {0}, failed = 0;
    double slowest = 0;

    parse(&o, argc, argv);
    srand(o.seed);
    signal(SIGPIPE, SIG_IGN);
    errlog = o.errlog;
    if (!errlog) {
        const char *tmp = getenv("TMPDIR");
        int fd;

        snprintf(errlog_tmp, sizeof(errlog_tmp), "%s/stop-anytime.XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        if ((fd = mkstemp(errlog_tmp)) < 0)
            net_die(errno, "mkstemp(%s)", errlog_tmp);
        close(fd);
        errlog = errlog_tmp;
    }

    for (int i = 0; i < o.starts; i++) {
        enum moment m = (enum moment)(i % MOMENTS);
        struct run r = {.out = -1, .client = -1};
        char why[160];
        double took = 0;

        tried[m]++;
        int st = start(&o, errlog, &r);
        if (st == -2 && o.retry) { /* it died before a word: once more */
            waitpid(r.pid, NULL, 0);
            close(r.out);
            fprintf(stderr, "start %d (%s): ended before its listening line; started again (-R)\n",
                    i + 1, moment_names[m]);
            r = (struct run){.out = -1, .client = -1};
            st = start(&o, errlog, &r);
        }
        if (st < 0) {
            kill(r.pid, SIGKILL);
            waitpid(r.pid, NULL, 0);
            fprintf(stderr, "start %d (%s): did not start\n", i + 1, moment_names[m]);
            show_stderr(errlog);
            failed++;
        } else {
            provoke(&o, &r, m);
            if (judge(&o, &r, why, sizeof(why), &took) < 0) {
                fprintf(stderr, "start %d (%s), SIG%s: %s\n", i + 1, moment_titles[m],
                        o.sig == SIGTERM ? "TERM" : "INT", why);
                show_stderr(errlog);
                failed++;
            } else {
                ok[m]++;
                if (took > slowest)
                    slowest = took;
                if (o.verbose)
                    printf("start %d (%s): exit 0 after %.1f ms\n", i + 1, moment_names[m],
                           took * 1e3);
            }
        }
        if (r.client >= 0)
            close(r.client);
        if (r.out >= 0)
            close(r.out);
    }
    if (!o.errlog)
        unlink(errlog);

    printf("%d starts, %d stopped cleanly (exit 0 within %.0f s of SIG%s):", o.starts,
           o.starts - failed, o.stop_s, o.sig == SIGTERM ? "TERM" : "INT");
    for (int m = 0; m < MOMENTS; m++)
        if (tried[m])
            printf("%s %d/%d %s", m ? "," : "", ok[m], tried[m], moment_titles[m]);
    printf("; slowest exit %.1f ms (seed %u)\n", slowest * 1e3, o.seed);
    return failed ? 1 : 0;
}
