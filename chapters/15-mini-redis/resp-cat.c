/* SPDX-License-Identifier: MIT */
/* resp-cat.c: send Redis commands and show each reply's exact bytes.
 *
 * redis-cli shows a reply as a person wants to read it ("(integer) 1"); a
 * program that must answer byte for byte as Redis does needs to see the
 * bytes themselves. resp-cat reads commands, one per line, written as
 * redis-cli takes them (words split at spaces, "quotes" with \n \r \t and
 * \xHH inside), sends each as a RESP array, waits for its reply and prints
 * two lines: the command after "> ", then the reply with \r, \n, \\ and any
 * byte that is not printable escaped:
 *
 *     $ printf 'set k v\nget k\n' | resp-cat -p 6379
 *     > set k v
 *     +OK\r\n
 *     > get k
 *     $1\r\nv\r\n
 *
 * Lines that are empty or start with '#' are skipped. A line that starts
 * with "~ " is a command whose reply is a set rather than a list (KEYS, the
 * keys of SCAN): the elements of each of its arrays are printed sorted, so
 * two servers that order their keys differently still print the same line.
 *
 * With -r, the input is sent as it is, raw bytes (for malformed requests):
 * then resp-cat closes its sending side and prints every reply until the
 * server closes the connection; -c N sends it N bytes at a time with -d MS
 * milliseconds between the pieces, so that one request arrives in several
 * reads.
 *
 *     resp-cat [-b ADDR] [-p PORT | -s SOCKET] [-r [-c N] [-d MS]] [-t MS] [FILE]
 *
 * Exit status: 0, 1 when a reply did not come within -t ms (5000) or the
 * connection failed, 2 for bad arguments.
 */
#include "clock.h"
#include "net.h"
#include "resp.h"
#include "util.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct cat {
    int fd;
    long timeout_ms;
    struct buf in; /* replies received, not yet printed */
    bool closed;   /* the server closed the connection */
};

static _Noreturn void cat__usage(FILE *to, int status)
{
    fprintf(to,
            "usage: resp-cat [-b ADDR] [-p PORT | -s SOCKET] [-r [-c N] [-d MS]] [-t MS] [FILE]\n"
            "Send Redis commands (one per line, as redis-cli takes them) and print each\n"
            "reply's exact bytes, escaped, on one line. A line \"~ CMD\": sort its arrays.\n"
            "  -b ADDR    the server's address (default 127.0.0.1)\n"
            "  -p PORT    its port (default 6379)\n"
            "  -s SOCKET  a Unix socket instead\n"
            "  -r         send the input raw, then print every reply until the server closes\n"
            "  -c N       with -r: send N bytes at a time\n"
            "  -d MS      with -c: wait MS milliseconds between the pieces (default 2)\n"
            "  -t MS      wait at most MS for a reply (default 5000)\n");
    exit(status);
}

static int cat__connect_unix(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd;

    if (strlen(path) >= sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    strcpy(sa.sun_path, path);
    if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    return fd;
}

/* ---- replies: where one ends, and how it is printed -------------------------------- */

/* The length of the whole reply at b[0..len): 0 if it is not all here, -1
 * if it is not RESP2. */
static long long cat__reply_len(const char *b, size_t len)
{
    const char *nl = memmem(b, len, "\r\n", 2);
    long long n, off, r;

    if (!nl)
        return 0;
    off = nl - b + 2;
    if (b[0] == '+' || b[0] == '-' || b[0] == ':')
        return off;
    if (b[0] != '$' && b[0] != '*')
        return -1;
    if (!util_str_to_ll(b + 1, (size_t)(nl - b - 1), &n))
        return -1;
    if (n < 0)
        return off;
    if (b[0] == '$')
        return (size_t)off + (size_t)n + 2 <= len ? off + n + 2 : 0;
    for (; n > 0; n--) {
        if ((r = cat__reply_len(b + off, len - (size_t)off)) <= 0)
            return r;
        off += r;
    }
    return off;
}

static void cat__escape(struct buf *out, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        char tmp[8];
        int n;

        if (ch == '\r')
            n = snprintf(tmp, sizeof(tmp), "\\r");
        else if (ch == '\n')
            n = snprintf(tmp, sizeof(tmp), "\\n");
        else if (ch == '\\')
            n = snprintf(tmp, sizeof(tmp), "\\\\");
        else if (ch < 0x20 || ch >= 0x7f)
            n = snprintf(tmp, sizeof(tmp), "\\x%02x", ch);
        else
            n = snprintf(tmp, sizeof(tmp), "%c", ch);
        buf_append(out, tmp, (size_t)n);
    }
}

static int cat__cmp(const void *a, const void *b)
{
    const struct buf *x = a, *y = b;
    size_t lx = buf_len(x), ly = buf_len(y);
    int d = memcmp(buf_peek(x), buf_peek(y), lx < ly ? lx : ly);

    return d ? d : (lx > ly) - (lx < ly);
}

/* Print the reply at b (whole, `len` bytes) into out; with `sort`, the
 * elements of an array whose elements are not arrays come out sorted. */
static void cat__print(struct buf *out, const char *b, size_t len, bool sort)
{
    const char *nl = memmem(b, len, "\r\n", 2);
    size_t head = (size_t)(nl - b) + 2, off = head;
    long long n = 0;
    struct buf *items;
    bool nested = false;

    if (b[0] != '*' || !sort || !util_str_to_ll(b + 1, head - 3, &n) || n <= 0) {
        cat__escape(out, b, len);
        return;
    }
    cat__escape(out, b, head);
    if (!(items = calloc((size_t)n, sizeof(*items))))
        abort();
    for (long long i = 0; i < n; i++) {
        long long r = cat__reply_len(b + off, len - off);
        nested |= b[off] == '*';
        cat__print(&items[i], b + off, (size_t)r, sort);
        off += (size_t)r;
    }
    if (!nested)
        qsort(items, (size_t)n, sizeof(*items), cat__cmp);
    for (long long i = 0; i < n; i++) {
        buf_append(out, buf_peek(&items[i]), buf_len(&items[i]));
        buf_free(&items[i]);
    }
    free(items);
}

/* ---- the connection ------------------------------------------------------------------ */

/* Wait for bytes (or the end) within the timeout: 1, 0 at the end, -1 on timeout. */
static int cat__read_more(struct cat *c)
{
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    ssize_t n;
    int r;

    if (c->closed)
        return 0;
    while ((r = poll(&p, 1, (int)c->timeout_ms)) < 0 && errno == EINTR) {
    }
    if (r == 0)
        return -1;
    if (r < 0)
        net_die(errno, "poll(fd=%d)", c->fd);
    n = buf_read_from(&c->in, c->fd, 16384);
    if (n == -ECONNRESET || n == 0) {
        c->closed = true;
        return 0;
    }
    if (n < 0)
        net_die((int)-n, "read(fd=%d)", c->fd);
    return 1;
}

/* Print the next whole reply. 1 printed, 0 the connection ended first
 * (what came of a reply is printed, marked), -1 timeout. */
static int cat__next_reply(struct cat *c, bool sort)
{
    struct buf line = BUF_INIT;
    long long len;
    int r;

    for (;;) {
        if (buf_len(&c->in) > 0 && (len = cat__reply_len(buf_peek(&c->in), buf_len(&c->in))) != 0)
            break;
        if ((r = cat__read_more(c)) <= 0) {
            if (r == 0 && buf_len(&c->in) > 0) {
                cat__escape(&line, buf_peek(&c->in), buf_len(&c->in));
                printf("(partial) %.*s\n", (int)buf_len(&line), buf_peek(&line));
                buf_consume(&c->in, buf_len(&c->in));
            }
            buf_free(&line);
            return r;
        }
    }
    if (len < 0) { /* not RESP: show the rest as it is */
        len = (long long)buf_len(&c->in);
        cat__escape(&line, buf_peek(&c->in), (size_t)len);
        printf("(not RESP) %.*s\n", (int)buf_len(&line), buf_peek(&line));
    } else {
        cat__print(&line, buf_peek(&c->in), (size_t)len, sort);
        printf("%.*s\n", (int)buf_len(&line), buf_peek(&line));
    }
    buf_consume(&c->in, (size_t)len);
    buf_free(&line);
    return 1;
}

/* One command line: its words as a RESP array, sent; its reply printed. */
static int cat__command(struct cat *c, char *line, size_t len)
{
    struct resp_parser p;
    struct buf req = BUF_INIT;
    bool sort = false;
    char *copy;
    int r = 1;

    if (len >= 2 && line[0] == '~' && line[1] == ' ') {
        sort = true;
        line += 2;
        len -= 2;
    }
    printf("> %.*s\n", (int)len, line);
    if (!(copy = malloc(len + 2)))
        abort();
    memcpy(copy, line, len);
    copy[len] = '\n';
    resp_parser_init(&p);
    if (resp_parse(&p, copy, len + 1) != RESP_REQUEST) {
        printf("(resp-cat: unbalanced quotes)\n");
    } else if (p.argc > 0) {
        resp_add_array(&req, p.argc);
        for (int i = 0; i < p.argc; i++)
            resp_add_bulk(&req, copy + p.argv[i].off, p.argv[i].len);
        if (net_write_all(c->fd, buf_peek(&req), buf_len(&req)) < 0) {
            printf("(closed)\n");
            r = 0;
        } else if ((r = cat__next_reply(c, sort)) == 0) {
            printf("(closed)\n");
        } else if (r < 0) {
            printf("(timeout)\n");
        }
    }
    resp_parser_free(&p);
    buf_free(&req);
    free(copy);
    return r;
}

static int cat__script(struct cat *c, FILE *in)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int r = 1;

    while (r > 0 && (n = getline(&line, &cap, in)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            n--;
        if (n == 0 || line[0] == '#')
            continue;
        r = cat__command(c, line, (size_t)n);
    }
    free(line);
    return r < 0 ? 1 : 0;
}

static int cat__raw(struct cat *c, FILE *in, long chunk, long delay_ms)
{
    struct buf all = BUF_INIT;
    char tmp[65536];
    size_t n;
    int r;

    while ((n = fread(tmp, 1, sizeof(tmp), in)) > 0)
        buf_append(&all, tmp, n);
    for (size_t off = 0; off < buf_len(&all);) {
        size_t piece =
            chunk > 0 && (size_t)chunk < buf_len(&all) - off ? (size_t)chunk : buf_len(&all) - off;
        if (off > 0 && chunk > 0) {
            struct timespec d = {delay_ms / 1000, (delay_ms % 1000) * 1000000};
            nanosleep(&d, NULL);
        }
        if (net_write_all(c->fd, buf_peek(&all) + off, piece) < 0)
            break; /* the server closed: what it said is read below */
        off += piece;
    }
    buf_free(&all);
    shutdown(c->fd, SHUT_WR);
    while ((r = cat__next_reply(c, false)) > 0) {
    }
    printf(r == 0 ? "(closed)\n" : "(timeout)\n");
    return r < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *addr = NET_DEFAULT_ADDR, *sock = NULL;
    long port = 6379, chunk = 0, delay = 2, timeout = 5000;
    struct cat c = {.in = BUF_INIT};
    bool raw = false;
    FILE *in = stdin;
    int opt, status;

    while ((opt = getopt(argc, argv, "b:p:s:rc:d:t:h")) != -1) {
        if (opt == 'b')
            addr = optarg;
        else if (opt == 'p' && net_parse_int(optarg, 1, 65535, &port) == 0)
            continue;
        else if (opt == 's')
            sock = optarg;
        else if (opt == 'r')
            raw = true;
        else if (opt == 'c' && net_parse_int(optarg, 1, 1L << 30, &chunk) == 0)
            continue;
        else if (opt == 'd' && net_parse_int(optarg, 0, 60000, &delay) == 0)
            continue;
        else if (opt == 't' && net_parse_int(optarg, 1, 3600000, &timeout) == 0)
            continue;
        else if (opt == 'h')
            cat__usage(stdout, 0);
        else
            cat__usage(stderr, 2);
    }
    if (argc - optind > 1)
        cat__usage(stderr, 2);
    if (optind < argc && !(in = fopen(argv[optind], "r"))) {
        fprintf(stderr, "resp-cat: %s: %s\n", argv[optind], strerror(errno));
        return 2;
    }
    signal(SIGPIPE, SIG_IGN); /* a server that closed: write() says EPIPE */
    c.fd = sock ? cat__connect_unix(sock) : net_connect(addr, (int)port);
    if (c.fd < 0) {
        fprintf(stderr, "resp-cat: connect to %s: %s\n", sock ? sock : addr, strerror(-c.fd));
        return 1;
    }
    c.timeout_ms = timeout;
    setvbuf(stdout, NULL, _IOLBF, 0);
    status = raw ? cat__raw(&c, in, chunk, delay) : cat__script(&c, in);
    close(c.fd);
    buf_free(&c.in);
    if (in != stdin)
        fclose(in);
    return status;
}
