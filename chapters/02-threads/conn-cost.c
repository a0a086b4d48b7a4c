/* SPDX-License-Identifier: MIT */
/* conn-cost.c: what one thread per connection costs, measured.
 *
 * It starts echo-threads (the one next to this program, or -e PATH) on
 * 127.0.0.1 port 0 and reads the port from its "listening on" line. Then, for
 * each count given with -n, it opens connections up to that count, proves each
 * one is served with a small echo (so its thread exists and has run), and
 * reads the server's /proc/PID/status:
 *
 *   Threads   threads in the process: one per client plus the main thread
 *   VmRSS     resident memory: pages really in RAM
 *   VmSize    virtual memory: address space reserved, touched or not
 *
 * The per-connection columns are the growth over the idle server divided by
 * the number of connections. The last column comes from the KernelStack line
 * of /proc/meminfo: each thread also has a kernel stack, which no VmRSS
 * counts. That line covers the whole machine, so other activity moves it too.
 *
 * Finally it sends SIGTERM with every connection still open and reports how
 * the server exited (a thread-per-connection server must wake and join them
 * all), with the context switches and CPU time the server used over its life.
 *
 * Each connection costs a descriptor on both sides. conn-cost raises its soft
 * RLIMIT_NOFILE as far as it needs (the server, started from here, inherits
 * it); past the hard limit it stops and says how to raise it.
 *
 * Build and run, from the repository root:
 *     make -C chapters/02-threads
 *     build/chapters/02-threads/conn-cost -n 100,500,1000
 *     build/chapters/02-threads/conn-cost -n 100,500,1000 -s 64
 *
 * Exit status: 0 measured and the server exited 0, 1 a failure, 2 bad arguments.
 */
#include "clock.h"
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define COST_MAX_STEPS  16
#define COST_FD_SLACK   64 /* descriptors beyond the connections: stdio, pipes, listener */
#define COST_TIMEOUT_MS 10000
#define COST_PROBE      "conn-cost probe\n"

struct cost_opts {
    long steps[COST_MAX_STEPS]; /* -n, increasing */
    int nsteps;
    long stack_kb; /* -s, 0 for the default */
    const char *server;
};

struct mem {
    long threads, rss_kib, vsz_kib, kstack_kib;
};

static void usage(FILE *to)
{
    fprintf(to, "usage: conn-cost [-n N[,N...]] [-s KB] [-e SERVER]\n"
                "Start echo-threads, hold N connections open (each proved served by one echo)\n"
                "and report the server's threads, VmRSS and VmSize per connection.\n"
                "  -n N,...   connection counts, increasing (default 1000)\n"
                "  -s KB      pass -s KB to the server: its thread stack size in KiB\n"
                "  -e SERVER  the server program (default: echo-threads next to conn-cost)\n"
                "  -h         show this help\n");
}

static _Noreturn void bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad_usage(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "conn-cost: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    usage(stderr);
    exit(2);
}

static void parse_args(struct cost_opts *o, int argc, char **argv)
{
    static char next_to_us[4096];
    char *list = NULL, *tok, *save;
    int opt;

    while ((opt = getopt(argc, argv, ":n:s:e:h")) != -1) {
        switch (opt) {
        case 'n':
            list = optarg;
            break;
        case 's':
            if (net_parse_int(optarg, 1, 1024 * 1024, &o->stack_kb) < 0)
                bad_usage("-s %s: not a stack size in KiB", optarg);
            break;
        case 'e':
            o->server = optarg;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        case ':':
            bad_usage("-%c needs a value", optopt);
        default:
            bad_usage("unknown option -%c", optopt);
        }
    }
    if (optind < argc)
        bad_usage("unexpected argument '%s'", argv[optind]);
    for (tok = strtok_r(list ? list : (char[]){"1000"}, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        long n, prev = o->nsteps ? o->steps[o->nsteps - 1] : 0;
        if (o->nsteps == COST_MAX_STEPS || net_parse_int(tok, 1, 1000000, &n) < 0 || n <= prev)
            bad_usage("-n: '%s' is not a connection count above the previous one", tok);
        o->steps[o->nsteps++] = n;
    }
    if (!o->server) {
        /* Room is left for the longer name that replaces ours. */
        ssize_t len = readlink("/proc/self/exe", next_to_us, sizeof(next_to_us) - 32);
        char *slash;
        if (len <= 0)
            net_die(errno, "readlink(/proc/self/exe)");
        next_to_us[len] = '\0';
        slash = strrchr(next_to_us, '/');
        strcpy(slash ? slash + 1 : next_to_us, "echo-threads");
        o->server = next_to_us;
    }
}

/* Make room for `need` descriptors, or explain how to. */
static void raise_fd_limit(long need)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        net_die(errno, "getrlimit(RLIMIT_NOFILE)");
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= (rlim_t)need)
        return;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < (rlim_t)need) {
        fprintf(stderr,
                "conn-cost: %ld connections need about %ld file descriptors in each process,\n"
                "but the hard limit (ulimit -Hn) is %llu. Raise it first, as root:\n"
                "    ulimit -Hn %ld && ulimit -n %ld\n"
                "(or in /etc/security/limits.conf), or ask for fewer connections with -n.\n",
                need - COST_FD_SLACK, need, (unsigned long long)rl.rlim_max, need, need);
        exit(1);
    }
    rl.rlim_cur = (rlim_t)need;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        net_die(errno, "setrlimit(RLIMIT_NOFILE, %ld)", need);
}

/* Start the server with its stdout on a pipe; return its port, or -1. */
static int server_spawn(const struct cost_opts *o, pid_t *pid)
{
    char line[256], kb[32];
    size_t len = 0;
    int out[2], port = -1;

    if (pipe2(out, O_CLOEXEC) < 0)
        net_die(errno, "pipe2");
    snprintf(kb, sizeof(kb), "%ld", o->stack_kb);
    *pid = fork();
    if (*pid < 0)
        net_die(errno, "fork");
    if (*pid == 0) {
        /* Without -s, the NULL in the fourth slot ends the list there. */
        char *argv[] = {(char *)o->server, "-p", "0", o->stack_kb ? "-s" : NULL, kb, NULL};
        dup2(out[1], STDOUT_FILENO);
        execv(o->server, argv);
        fprintf(stderr, "conn-cost: exec %s: %s\n", o->server, strerror(errno));
        _exit(127);
    }
    close(out[1]);
    while (len < sizeof(line) - 1 && !memchr(line, '\n', len)) {
        struct pollfd pfd = {.fd = out[0], .events = POLLIN};
        ssize_t n;
        if (poll(&pfd, 1, COST_TIMEOUT_MS) == 0) {
            fprintf(stderr, "conn-cost: %s printed no 'listening on' line\n", o->server);
            break;
        }
        n = read(out[0], line + len, sizeof(line) - 1 - len);
        if (n <= 0 && !(n < 0 && errno == EINTR))
            break;
        len += n > 0 ? (size_t)n : 0;
    }
    line[len] = '\0';
    close(out[0]);
    if (sscanf(line, "listening on %*[0-9.]:%d", &port) != 1)
        return -1;
    return port;
}

/* Send SIGTERM, wait up to COST_TIMEOUT_MS; return the exit status, or -1.
 * wait4() also returns the resources the server used over its life, all of
 * its threads included (ru_nvcsw: voluntary context switches, each one a
 * thread going to sleep, for instance in read() with no data). */
static int server_stop(pid_t pid, double *ms, struct rusage *ru)
{
    int64_t t0 = clock_now_ns();
    int status;

    kill(pid, SIGTERM);
    for (int i = 0; i < COST_TIMEOUT_MS / 10; i++) {
        pid_t r = wait4(pid, &status, WNOHANG, ru);
        if (r == pid) {
            *ms = (double)(clock_now_ns() - t0) / 1e6;
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        usleep(10000);
    }
    kill(pid, SIGKILL);
    wait4(pid, &status, 0, ru);
    return -1;
}

static long field_kib(const char *path, const char *key)
{
    char line[256];
    long v = -1;
    size_t klen = strlen(key);
    FILE *f = fopen(path, "r");

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            v = strtol(line + klen + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

static int mem_read(pid_t pid, struct mem *m)
{
    char path[64];

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    m->threads = field_kib(path, "Threads");
    m->rss_kib = field_kib(path, "VmRSS");
    m->vsz_kib = field_kib(path, "VmSize");
    m->kstack_kib = field_kib("/proc/meminfo", "KernelStack");
    return m->threads < 0 || m->rss_kib < 0 || m->vsz_kib < 0 ? -1 : 0;
}

/* One small echo: the connection is served by a running thread. */
static int probe(int fd, long i)
{
    char got[sizeof(COST_PROBE) - 1];
    size_t len = 0;
    ssize_t n;

    if ((n = net_write_all(fd, COST_PROBE, sizeof(got))) < 0) {
        fprintf(stderr, "conn-cost: write(connection %ld): %s\n", i + 1, strerror((int)-n));
        return -1;
    }
    while (len < sizeof(got)) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, COST_TIMEOUT_MS) == 0) {
            fprintf(stderr, "conn-cost: connection %ld: no echo within %d s: not served\n", i + 1,
                    COST_TIMEOUT_MS / 1000);
            return -1;
        }
        n = read(fd, got + len, sizeof(got) - len);
        if (n <= 0 && !(n < 0 && errno == EINTR)) {
            fprintf(stderr, "conn-cost: connection %ld: %s before the echo\n", i + 1,
                    n == 0 ? "EOF" : strerror(errno));
            return -1;
        }
        len += n > 0 ? (size_t)n : 0;
    }
    return memcmp(got, COST_PROBE, sizeof(got)) == 0 ? 0 : -1;
}

static void print_stack(const struct cost_opts *o)
{
    pthread_attr_t attr;
    size_t size = 0;

    if (o->stack_kb) {
        printf("thread stack: %ld KiB (-s %ld)\n", o->stack_kb, o->stack_kb);
        return;
    }
    /* The server inherits our RLIMIT_STACK, from which glibc takes its default. */
    if (pthread_getattr_default_np(&attr) == 0) {
        pthread_attr_getstacksize(&attr, &size);
        pthread_attr_destroy(&attr);
    }
    printf("thread stack: %zu KiB (glibc's default: ulimit -s, unless that is unlimited)\n",
           size / 1024);
}

int main(int argc, char **argv)
{
    struct cost_opts o = {0};
    struct mem idle, now;
    long open_conns = 0, max;
    int *fds, port, status, ret = 1;
    struct rusage ru;
    double ms = 0;
    pid_t pid;

    parse_args(&o, argc, argv);
    max = o.steps[o.nsteps - 1];
    raise_fd_limit(max + COST_FD_SLACK);
    signal(SIGPIPE, SIG_IGN);
    fds = calloc((size_t)max, sizeof(*fds));
    if (!fds)
        net_die(ENOMEM, "%ld descriptors", max);

    port = server_spawn(&o, &pid);
    if (port < 0)
        goto stop;
    printf("server: %s (pid %d) on 127.0.0.1:%d\n", o.server, (int)pid, port);
    print_stack(&o);
    if (mem_read(pid, &idle) < 0) {
        fprintf(stderr, "conn-cost: cannot read /proc/%d/status\n", (int)pid);
        goto stop;
    }
    printf("%7s %8s %10s %11s %13s %16s %16s\n", "conns", "threads", "VmRSS KiB", "VmSize KiB",
           "RSS/conn KiB", "VmSize/conn KiB", "kstack/conn KiB");
    printf("%7d %8ld %10ld %11ld %13s %16s %16s\n", 0, idle.threads, idle.rss_kib, idle.vsz_kib,
           "-", "-", "-");
    for (int s = 0; s < o.nsteps; s++) {
        for (; open_conns < o.steps[s]; open_conns++) {
            fds[open_conns] = net_connect("127.0.0.1", port);
            if (fds[open_conns] < 0) {
                fprintf(stderr, "conn-cost: connect(connection %ld): %s\n", open_conns + 1,
                        strerror(-fds[open_conns]));
                goto stop;
            }
            if (probe(fds[open_conns], open_conns) < 0) {
                open_conns++;
                goto stop;
            }
        }
        if (mem_read(pid, &now) < 0)
            goto stop;
        double n = (double)open_conns;
        printf("%7ld %8ld %10ld %11ld %13.1f %16.1f %16.1f\n", open_conns, now.threads, now.rss_kib,
               now.vsz_kib, (now.rss_kib - idle.rss_kib) / n, (now.vsz_kib - idle.vsz_kib) / n,
               (now.kstack_kib - idle.kstack_kib) / n);
        fflush(stdout);
    }
    ret = 0;
stop:
    status = server_stop(pid, &ms, &ru);
    if (status < 0) {
        fprintf(stderr, "conn-cost: the server did not exit within %d s of SIGTERM\n",
                COST_TIMEOUT_MS / 1000);
        ret = 1;
    } else if (status != 0) {
        fprintf(stderr, "conn-cost: the server exited with status %d\n", status);
        ret = 1;
    } else if (ret == 0) {
        printf("server stopped by SIGTERM with %ld connections open: exit 0 in %.0f ms\n",
               open_conns, ms);
        printf("server CPU time: %.0f ms user, %.0f ms system\n",
               ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3,
               ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3);
        printf("server context switches: %ld voluntary, %ld involuntary\n", ru.ru_nvcsw,
               ru.ru_nivcsw);
    }
    for (long i = 0; i < open_conns; i++)
        close(fds[i]);
    free(fds);
    return ret;
}
