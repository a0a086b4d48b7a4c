/* SPDX-License-Identifier: MIT */
/* echo-client.c: send bytes to an echo server and print what comes back.
 *
 *     echo-client -p 8080 hello                  # prints "hello" (no newline is added)
 *     echo-client -p 8080 < big.bin > out.bin    # any bytes, NULs included
 *     echo-client -p 8080 -q < big.bin           # only "sent X received Y" on stderr
 *     echo-client -p 8080 --reset < req.txt      # send, then abort the connection (RST)
 *
 * The client writes and reads at the same time. A naive one that first writes
 * everything and then reads deadlocks on a big payload: the server blocks
 * writing its echo to us because we are not reading, so it stops reading, so
 * our write blocks too. Here one poll() loop moves bytes in both directions on
 * a non-blocking socket, so neither side ever waits for the other.
 *
 * When all input is sent the client half-closes (shutdown(SHUT_WR)): the server
 * reads EOF, finishes echoing and closes, and our read of EOF ends the run.
 *
 * Exit status: 0 done, 1 I/O error, 2 bad arguments, 3 timeout (-t).
 */
#include "buf.h"
#include "clock.h"
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CLIENT_EXIT_IO      1
#define CLIENT_EXIT_USAGE   2
#define CLIENT_EXIT_TIMEOUT 3

#define CLIENT_READ_SIZE 65536

struct client_opts {
    const char *addr;
    int port;
    const char *message; /* NULL: read standard input */
    bool reset;
    bool no_shutdown;
    bool quiet;
    long read_delay_ms;
    size_t chunk;
    double timeout_s; /* 0: no timeout */
};

struct client {
    struct client_opts opt;
    int fd;
    struct buf pending; /* input read but not yet accepted by the socket */
    bool in_eof;        /* all of the input is in `pending` (or already sent) */
    bool done_sending;  /* all input sent (and half-closed, unless --no-shutdown) */
    unsigned long long sent, received;
    double deadline; /* CLOCK_MONOTONIC seconds, 0 for none */
};

static const char client__usage_text[] =
    "usage: echo-client [-b ADDR] -p PORT [options] [MESSAGE]\n"
    "Sends MESSAGE (or standard input when there is no MESSAGE) to an echo server and writes\n"
    "what comes back to standard output.\n"
    "  -b ADDR            server address (default 127.0.0.1)\n"
    "  -p PORT            server port (required)\n"
    "  -t SECONDS         give up after SECONDS, exit 3 (default 30; 0 = never)\n"
    "  -q                 do not print the echo; print \"sent X received Y\" on stderr\n"
    "  --chunk N          write at most N bytes per write() (default 65536; K/M suffixes)\n"
    "  --read-delay MS    sleep MS milliseconds before each read (a slow reader)\n"
    "  --no-shutdown      do not half-close; stop once every byte sent has come back\n"
    "  --reset            send the input, then abort the connection with RST, unread\n"
    "  -h, --help         show this help\n"
    "Exit status: 0 ok, 1 I/O error, 2 bad arguments, 3 timeout.\n";

static _Noreturn void client__usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static _Noreturn void client__usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs("echo-client: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fputs(client__usage_text, stderr);
    exit(CLIENT_EXIT_USAGE);
}

/* A byte count such as 4096, 64K or 1M. Returns 0 or -EINVAL. */
static int client__parse_size(const char *s, size_t min, size_t max, size_t *out)
{
    unsigned long long v, mult = 1;
    char *end;

    if (!s || *s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        mult = 1024, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1024 * 1024, end++;
    if (errno || *end || v > max / mult || v * mult < min)
        return -EINVAL;
    *out = (size_t)(v * mult);
    return 0;
}

static int client__parse_seconds(const char *s, double max, double *out)
{
    char *end;
    double v;

    if (!s || !*s)
        return -EINVAL;
    errno = 0;
    v = strtod(s, &end);
    if (errno || *end || !(v >= 0 && v <= max)) /* the negation also refuses NaN */
        return -EINVAL;
    *out = v;
    return 0;
}

static void client_parse(struct client_opts *o, int argc, char **argv)
{
    enum { OPT_RESET = 256, OPT_NO_SHUTDOWN, OPT_READ_DELAY, OPT_CHUNK };
    static const struct option longopts[] = {
        {"reset", no_argument, NULL, OPT_RESET},
        {"no-shutdown", no_argument, NULL, OPT_NO_SHUTDOWN},
        {"read-delay", required_argument, NULL, OPT_READ_DELAY},
        {"chunk", required_argument, NULL, OPT_CHUNK},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct in_addr probe;
    long v;
    int opt;

    *o =
        (struct client_opts){.addr = NET_DEFAULT_ADDR, .port = -1, .chunk = 65536, .timeout_s = 30};
    /* The leading ':' makes getopt report problems to us instead of printing
     * its own message, so every usage error looks the same. */
    while ((opt = getopt_long(argc, argv, ":b:p:t:qh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'b':
            if (inet_pton(AF_INET, optarg, &probe) != 1)
                client__usage_error("-b %s: not an IPv4 address", optarg);
            o->addr = optarg;
            break;
        case 'p':
            if (net_parse_int(optarg, 1, 65535, &v) < 0)
                client__usage_error("-p %s: not a port number (1-65535)", optarg);
            o->port = (int)v;
            break;
        case 't':
            if (client__parse_seconds(optarg, 1e6, &o->timeout_s) < 0)
                client__usage_error("-t %s: not a number of seconds", optarg);
            break;
        case 'q':
            o->quiet = true;
            break;
        case OPT_RESET:
            o->reset = true;
            break;
        case OPT_NO_SHUTDOWN:
            o->no_shutdown = true;
            break;
        case OPT_READ_DELAY:
            if (net_parse_int(optarg, 0, 3600000, &o->read_delay_ms) < 0)
                client__usage_error("--read-delay %s: not a number of milliseconds", optarg);
            break;
        case OPT_CHUNK:
            if (client__parse_size(optarg, 1, 64u << 20, &o->chunk) < 0)
                client__usage_error("--chunk %s: not a size from 1 to 64M", optarg);
            break;
        case 'h':
            fputs(client__usage_text, stdout);
            exit(0);
        case ':':
            if (optopt > 0 && optopt < 128)
                client__usage_error("-%c needs a value", optopt);
            client__usage_error("%s needs a value", argv[optind - 1]);
        default:
            if (optopt)
                client__usage_error("unknown option -%c", optopt);
            client__usage_error("unknown option %s", argv[optind - 1]);
        }
    }
    if (o->port < 0)
        client__usage_error("-p PORT is required");
    if (o->reset && o->no_shutdown)
        client__usage_error("--reset and --no-shutdown do not go together");
    if (optind < argc)
        o->message = argv[optind++];
    if (optind < argc)
        client__usage_error("unexpected argument '%s' (quote a MESSAGE with spaces)", argv[optind]);
}

/* Connect without blocking, so that -t also bounds a connect to a host that
 * never answers (a blocking connect would wait for the kernel's own timeout,
 * which is minutes). Returns 0, -errno, or -ETIMEDOUT at the deadline. */
static int client__connect(struct client *c)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)c->opt.port)};
    struct pollfd pfd;
    socklen_t len = sizeof(int);
    int err = 0;

    inet_pton(AF_INET, c->opt.addr, &sa.sin_addr); /* checked when parsing -b */
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return -errno;
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
        return 0;
    if (errno != EINPROGRESS)
        return -errno;
    pfd = (struct pollfd){.fd = c->fd, .events = POLLOUT};
    for (;;) {
        int ms = -1;
        if (c->deadline > 0) {
            double left = c->deadline - clock_now_s();
            if (left <= 0)
                return -ETIMEDOUT;
            ms = (int)(left * 1000) + 1;
        }
        int n = poll(&pfd, 1, ms);
        if (n > 0)
            break;
        if (n < 0 && errno != EINTR)
            return -errno;
    }
    /* Writable means the handshake finished, well or badly: SO_ERROR says which. */
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        return -errno;
    return -err;
}

static void client__sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Read one piece of input from standard input into `pending`. */
static int client__read_input(struct client *c)
{
    ssize_t n = buf_read_from(&c->pending, STDIN_FILENO, c->opt.chunk);

    if (n == -EAGAIN)
        return 0; /* stdin was left non-blocking by whoever started us */
    if (n < 0) {
        fprintf(stderr, "echo-client: read(stdin): %s\n", strerror((int)-n));
        return -1;
    }
    if (n == 0)
        c->in_eof = true;
    return 0;
}

/* Send at most one chunk of pending input. */
static int client__send(struct client *c)
{
    size_t len = buf_len(&c->pending) < c->opt.chunk ? buf_len(&c->pending) : c->opt.chunk;
    /* MSG_NOSIGNAL: writing to a connection the server reset must be an error
     * we can report, not a SIGPIPE that kills us without a word. */
    ssize_t n = send(c->fd, buf_peek(&c->pending), len, MSG_NOSIGNAL);

    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return 0;
        fprintf(stderr, "echo-client: write: %s (after sending %llu bytes)\n", strerror(errno),
                c->sent);
        return -1;
    }
    buf_consume(&c->pending, (size_t)n);
    c->sent += (unsigned long long)n;
    return 0;
}

/* Read one piece of echo and pass it to stdout. Returns 1 at EOF, 0, or -1. */
static int client__receive(struct client *c, char *data)
{
    ssize_t n;

    if (c->opt.read_delay_ms > 0)
        client__sleep_ms(c->opt.read_delay_ms);
    n = read(c->fd, data, CLIENT_READ_SIZE);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return 0;
        fprintf(stderr, "echo-client: read: %s (after receiving %llu bytes)\n", strerror(errno),
                c->received);
        return -1;
    }
    if (n == 0)
        return 1;
    c->received += (unsigned long long)n;
    if (c->opt.reset)
        return 0; /* drained only so a big input can go out; not part of the result */
    if (!c->opt.quiet) {
        /* Blocking is fine here: standard output is ours alone. net_write_all
         * also copes with short writes and a non-blocking stdout. */
        ssize_t w = net_write_all(STDOUT_FILENO, data, (size_t)n);
        if (w < 0) {
            fprintf(stderr, "echo-client: write(stdout): %s\n", strerror((int)-w));
            return -1;
        }
    }
    return 0;
}

/* SO_LINGER with a zero timeout turns close() into an abort: the kernel drops
 * unsent data and sends RST instead of the FIN of an orderly close. */
static int client__reset(struct client *c)
{
    struct linger lg = {.l_onoff = 1, .l_linger = 0};

    if (setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) < 0) {
        fprintf(stderr, "echo-client: setsockopt(SO_LINGER {1, 0}): %s\n", strerror(errno));
        return -1;
    }
    close(c->fd);
    c->fd = -1;
    return 0;
}

/* The poll() loop. Returns an exit status. */
static int client_run(struct client *c)
{
    char *data = malloc(CLIENT_READ_SIZE);
    int status = CLIENT_EXIT_IO;

    if (!data) {
        fprintf(stderr, "echo-client: malloc(%d): %s\n", CLIENT_READ_SIZE, strerror(ENOMEM));
        return CLIENT_EXIT_IO;
    }
    for (;;) {
        struct pollfd pfd[2] = {{.fd = c->fd}, {.fd = -1}};
        bool all_sent = c->in_eof && buf_len(&c->pending) == 0;
        int ms = -1, n, r;

        if (all_sent && !c->done_sending) {
            if (c->opt.reset) {
                status = client__reset(c) < 0 ? CLIENT_EXIT_IO : 0;
                goto out;
            }
            if (!c->opt.no_shutdown && shutdown(c->fd, SHUT_WR) < 0) {
                fprintf(stderr, "echo-client: shutdown(SHUT_WR): %s\n", strerror(errno));
                goto out;
            }
            c->done_sending = true;
        }
        if (c->done_sending && c->opt.no_shutdown && c->received >= c->sent) {
            status = 0;
            goto out;
        }

        /* Keep reading while there is input left even with --reset: an echo
         * nobody reads would fill the buffers and stall our writes for good. */
        if (!c->opt.reset || !all_sent)
            pfd[0].events |= POLLIN;
        if (buf_len(&c->pending) > 0)
            pfd[0].events |= POLLOUT;
        /* Take more input only when the socket has drained what we have, so a
         * huge input never sits in memory all at once. */
        if (!c->in_eof && buf_len(&c->pending) < c->opt.chunk)
            pfd[1] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};

        if (c->deadline > 0) {
            double left = c->deadline - clock_now_s();
            if (left <= 0) {
                fprintf(stderr,
                        "echo-client: timeout after %g s: sent %llu bytes, received %llu bytes\n",
                        c->opt.timeout_s, c->sent, c->received);
                status = CLIENT_EXIT_TIMEOUT;
                goto out;
            }
            ms = (int)(left * 1000) + 1;
        }
        n = poll(pfd, 2, ms);
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "echo-client: poll: %s\n", strerror(errno));
            goto out;
        }
        if (n <= 0)
            continue;

        if (pfd[1].revents && client__read_input(c) < 0)
            goto out;
        /* POLLERR/POLLHUP come whatever we asked for; the read or write that
         * follows turns them into an error message naming the call. */
        if ((pfd[0].revents & (POLLOUT | POLLERR)) && buf_len(&c->pending) > 0 &&
            client__send(c) < 0)
            goto out;
        if ((pfd[0].revents & (POLLIN | POLLERR | POLLHUP)) && (pfd[0].events & POLLIN)) {
            r = client__receive(c, data);
            if (r < 0)
                goto out;
            if (r == 1) {
                if (!c->done_sending || (c->opt.no_shutdown && c->received < c->sent)) {
                    fprintf(stderr,
                            "echo-client: read: the server closed the connection early "
                            "(sent %llu bytes, received %llu bytes)\n",
                            c->sent, c->received);
                    goto out;
                }
                status = 0;
                goto out;
            }
        }
    }
out:
    free(data);
    return status;
}

int main(int argc, char **argv)
{
    struct client c = {.fd = -1};
    int status = CLIENT_EXIT_IO, err;

    client_parse(&c.opt, argc, argv);
    buf_init(&c.pending);
    if (c.opt.timeout_s > 0)
        c.deadline = clock_now_s() + c.opt.timeout_s;
    if (c.opt.message) {
        if (buf_append(&c.pending, c.opt.message, strlen(c.opt.message)) < 0) {
            fprintf(stderr, "echo-client: buffer MESSAGE: %s\n", strerror(ENOMEM));
            goto out_buf;
        }
        c.in_eof = true;
    } else if (fcntl(STDIN_FILENO, F_GETFL) < 0) {
        /* Closed stdin: socket() would get fd 0 and be read as our own input. */
        fprintf(stderr, "echo-client: read(stdin): %s\n", strerror(errno));
        goto out_buf;
    }

    err = client__connect(&c);
    if (err == -ETIMEDOUT && c.deadline > 0 && clock_now_s() >= c.deadline) {
        fprintf(stderr,
                "echo-client: timeout after %g s: sent 0 bytes, received 0 bytes "
                "(connect(%s:%d) did not complete)\n",
                c.opt.timeout_s, c.opt.addr, c.opt.port);
        status = CLIENT_EXIT_TIMEOUT;
        goto out_sock;
    }
    if (err < 0) {
        fprintf(stderr, "echo-client: connect(%s:%d): %s\n", c.opt.addr, c.opt.port,
                strerror(-err));
        goto out_sock;
    }

    status = client_run(&c);
    if (status == 0 && c.opt.quiet)
        fprintf(stderr, "sent %llu received %llu\n", c.sent, c.received);

out_sock:
    if (c.fd >= 0)
        close(c.fd);
out_buf:
    buf_free(&c.pending);
    return status;
}
