/* SPDX-License-Identifier: MIT */
/* net.c: see net.h. */
#include "net.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

atomic_int net_stop_requested;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "a signal handler may only touch lock-free atomics");
/* Read by the signal handler: volatile sig_atomic_t, so the handler sees
 * every store in program order. */
static volatile sig_atomic_t net__stop_wfd = -1;
/* The sockets the handler shuts down (net_stop_set_listener/_client). */
static volatile sig_atomic_t net__stop_listen_fd = -1;
static volatile sig_atomic_t net__stop_client_fd = -1;

static void net__usage(FILE *to, const char *prog, const char *summary,
                       const struct net_cli_extra *extra)
{
    fprintf(to, "usage: %s [-b ADDR] [-p PORT]%s\n", prog, extra ? " [options]" : "");
    if (summary)
        fprintf(to, "%s\n", summary);
    fprintf(to,
            "  -b ADDR   address to listen on (default %s)\n"
            "  -p PORT   port to listen on, 0 for any free port (default %d)\n",
            NET_DEFAULT_ADDR, NET_DEFAULT_PORT);
    if (extra && extra->usage)
        fputs(extra->usage, to);
    fprintf(to, "  -h        show this help\n");
}

int net_parse_int(const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    /* strtol would skip leading blanks and accept '+': a port is digits only */
    if (!s || !(isdigit((unsigned char)*s) || (*s == '-' && min < 0)))
        return -EINVAL;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -EINVAL;
    *out = v;
    return 0;
}

void net_cli_parse(struct net_cli *cli, int argc, char **argv, const char *summary,
                   const struct net_cli_extra *extra)
{
    char optstring[64] = ":b:p:h";
    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    struct in_addr probe;
    long port;
    int opt;

    cli->addr = NET_DEFAULT_ADDR;
    cli->port = NET_DEFAULT_PORT;
    if (extra && extra->optstring)
        strncat(optstring, extra->optstring, sizeof(optstring) - strlen(optstring) - 1);

    while ((opt = getopt(argc, argv, optstring)) != -1) {
        switch (opt) {
        case 'b':
            if (inet_pton(AF_INET, optarg, &probe) != 1) {
                fprintf(stderr, "%s: -b %s: not an IPv4 address\n", prog, optarg);
                goto bad;
            }
            cli->addr = optarg;
            break;
        case 'p':
            if (net_parse_int(optarg, 0, 65535, &port) < 0) {
                fprintf(stderr, "%s: -p %s: not a port number (0-65535)\n", prog, optarg);
                goto bad;
            }
            cli->port = (int)port;
            break;
        case 'h':
            net__usage(stdout, prog, summary, extra);
            exit(0);
        case ':':
            fprintf(stderr, "%s: -%c needs a value\n", prog, optopt);
            goto bad;
        case '?':
            fprintf(stderr, "%s: unknown option -%c\n", prog, optopt);
            goto bad;
        default:
            if (extra && extra->on_opt && extra->on_opt(opt, optarg, extra->ctx) == 0)
                break;
            goto bad;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
        goto bad;
    }
    return;
bad:
    net__usage(stderr, prog, summary, extra);
    exit(2);
}

void net_cli_none(int argc, char **argv, const char *summary)
{
    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    int help = argc == 2 && strcmp(argv[1], "-h") == 0;

    if (argc == 1)
        return;
    fprintf(help ? stdout : stderr, "usage: %s\n%s\n", prog, summary);
    exit(help ? 0 : 2);
}

/* A TCP socket that is not inherited across exec(). Linux and FreeBSD set
 * close-on-exec atomically with SOCK_CLOEXEC; macOS has no such flag. */
static int net__socket(void)
{
#ifdef SOCK_CLOEXEC
    return socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
#else
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd >= 0)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
#endif
}

static int net__addr(const char *addr, int port, struct sockaddr_in *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, addr, &sa->sin_addr) != 1)
        return -EINVAL;
    return 0;
}

int net_listen(const char *addr, int port, int backlog)
{
    struct sockaddr_in sa;
    int fd, one = 1, err;

    if ((err = net__addr(addr, port, &sa)) < 0)
        return err;
    fd = net__socket();
    if (fd < 0)
        return -errno;
    /* SO_REUSEADDR lets a restarted server bind while old connections sit in
     * TIME_WAIT; it does not let two live servers share the port. */
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
        goto fail;
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        goto fail;
    if (listen(fd, backlog) < 0)
        goto fail;
    return fd;
fail:
    err = -errno;
    close(fd);
    return err;
}

int net_connect(const char *addr, int port)
{
    struct sockaddr_in sa;
    int fd, err;

    if ((err = net__addr(addr, port, &sa)) < 0)
        return err;
    fd = net__socket();
    if (fd < 0)
        return -errno;
    while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        if (errno == EINTR)
            continue; /* simplification: a real retry would poll for completion */
        err = -errno;
        close(fd);
        return err;
    }
    return fd;
}

int net_local_port(int fd)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);

    if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
        return -errno;
    return ntohs(sa.sin_port);
}

void net_announce(int listen_fd)
{
    struct sockaddr_in sa = {0}; /* if getsockname fails, print port 0, not stack garbage */
    socklen_t len = sizeof(sa);
    char ip[INET_ADDRSTRLEN] = "?";

    if (getsockname(listen_fd, (struct sockaddr *)&sa, &len) == 0)
        inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
    printf("listening on %s:%d\n", ip, ntohs(sa.sin_port));
    fflush(stdout);
}

static int net__listen_or_die(const struct net_cli *cli, int backlog, bool stoppable)
{
    int fd = net_listen(cli->addr, cli->port, backlog);

    if (fd < 0)
        net_die(-fd, "listen on %s:%d", cli->addr, cli->port);
    if (stoppable)
        net_stop_set_listener(fd); /* before the port is printed */
    net_announce(fd);
    return fd;
}

int net_listen_or_die(const struct net_cli *cli, int backlog)
{
    return net__listen_or_die(cli, backlog, false);
}

int net_listen_stoppable_or_die(const struct net_cli *cli, int backlog)
{
    return net__listen_or_die(cli, backlog, true);
}

int net_set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);

    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return -errno;
    return 0;
}

int net_set_nodelay(int fd)
{
    int one = 1;

    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
        return -errno;
    return 0;
}

ssize_t net_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    size_t done = 0;

    while (done < len) {
        ssize_t n = write(fd, p + done, len - done);
        if (n == 0)
            return -EIO; /* never for a socket with len > 0; do not loop on it */
        if (n > 0) {
            done += (size_t)n; /* a short write is normal: loop for the rest */
            /* A signal cuts a blocking write short too; if it was a shutdown
             * signal, writing on could block forever on a peer that never reads. */
            if (done < len && net_stop_requested)
                return -EINTR;
            continue;
        }
        if (errno == EINTR) {
            if (net_stop_requested)
                return -EINTR;
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
                return -errno;
            continue;
        }
        return -errno;
    }
    return (ssize_t)done;
}

ssize_t net_read_exact(int fd, void *data, size_t len)
{
    char *p = data;
    size_t done = 0;

    while (done < len) {
        ssize_t n = read(fd, p + done, len - done);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n == 0)
            break; /* EOF */
        if (errno == EINTR) {
            if (net_stop_requested)
                return -EINTR;
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            struct pollfd pfd = {.fd = fd, .events = POLLIN};
            if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
                return -errno;
            continue;
        }
        return -errno;
    }
    return (ssize_t)done;
}

/* snippet: handler */
static void net__on_signal(int sig)
{
    int saved = errno, wfd = net__stop_wfd;
    int client = net__stop_client_fd, listener = net__stop_listen_fd;
    char c = (char)sig;

    net_stop_requested = 1;
    /* shutdown() is async-signal-safe (signal-safety(7)) */
    if (client >= 0)
        shutdown(client, SHUT_RDWR); /* read() returns 0, write() fails with EPIPE */
    if (listener >= 0)
        shutdown(listener, SHUT_RDWR); /* accept() fails with EINVAL (Linux) */
    if (wfd >= 0) {
        /* write() is async-signal-safe; if the pipe is full a wake-up is
         * already pending, so EAGAIN is fine to ignore. */
        ssize_t n = write(wfd, &c, 1);
        (void)n;
    }
    errno = saved;
}
/* end snippet */

void net_on_shutdown_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = net__on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: blocking calls must return EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

void net_stop_set_listener(int fd)
{
    net__stop_listen_fd = fd;
}

/* snippet: set-client */
bool net_stop_set_client(int fd)
{
    net__stop_client_fd = fd;
    /* The flag is read after the store above, never before (the fence keeps
     * the compiler from swapping them; the handler runs on this thread, so
     * no more is needed): a signal that came earlier set the flag but found
     * no fd to shut down, and one that comes later finds the fd. */
    atomic_signal_fence(memory_order_seq_cst);
    return fd < 0 || !net_stop_requested;
}
/* end snippet */

int net_stop_pipe(void)
{
    int fds[2];

    if (net__stop_wfd >= 0)
        return -EBUSY;
#ifdef __linux__
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) < 0)
        return -errno;
#else
    if (pipe(fds) < 0)
        return -errno;
    for (int i = 0; i < 2; i++) {
        fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
        fcntl(fds[i], F_SETFD, FD_CLOEXEC);
    }
#endif
    net__stop_wfd = fds[1];
    net_on_shutdown_signals();
    return fds[0];
}

void net_stop_pipe_close(int rfd)
{
    int wfd = net__stop_wfd;

    if (rfd >= 0)
        close(rfd);
    /* Forget the fd before closing it: a signal arriving in between must not
     * write into whatever file reuses the number next. */
    net__stop_wfd = -1;
    if (wfd >= 0)
        close(wfd);
}

#ifdef __linux__
/* snippet: signalfd */
int net_signalfd(int flags)
{
    sigset_t mask;
    int fd, err;

    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    if ((err = pthread_sigmask(SIG_BLOCK, &mask, NULL)) != 0)
        return -err;
    if ((fd = signalfd(-1, &mask, flags | SFD_CLOEXEC)) < 0)
        return -errno;
    signal(SIGPIPE, SIG_IGN); /* a write to a reset client fails with EPIPE instead */
    return fd;
}
/* end snippet */

int net_signalfd_or_die(int flags)
{
    int fd = net_signalfd(flags);

    if (fd < 0)
        net_die(-fd, "signalfd(SIGINT|SIGTERM)");
    return fd;
}
#endif

void net_die(int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, ": %s\n", strerror(err));
    exit(1);
}

void net_unexpected(const char *fmt, ...)
{
    va_list ap;

    fflush(stdout);
    fputs("unexpected: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}
