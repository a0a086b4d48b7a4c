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
 * With -m, the script drives several connections, each named by the line
 * that first uses it, in the order of its lines (for blocking pops and
 * pub/sub, which take two clients):
 *
 *     a: CMD     send CMD on connection a, print its reply
 *     a& CMD     send CMD, then print its reply, or "(blocked)" once the
 *                server's INFO counts one more blocked client than before
 *     a?         print a's next reply ("a< "), the one a blocked command or
 *                a subscription gets later
 *     a!         close a; if it was blocked, wait until the server counts
 *                it out of its blocked clients
 *
 * Every wait is for a reply or for the count INFO gives, within -t: the
 * output never depends on how fast the server is.
 *
 *     resp-cat [-b ADDR] [-p PORT | -s SOCKET] [-r [-c N] [-d MS] | -m] [-t MS] [FILE]
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
#include <stdint.h>
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
    fprintf(
        to,
        "usage: resp-cat [-b ADDR] [-p PORT | -s SOCKET] [-r [-c N] [-d MS] | -m] [-t MS] [FILE]\n"
        "Send Redis commands (one per line, as redis-cli takes them) and print each\n"
        "reply's exact bytes, escaped, on one line. A line \"~ CMD\": sort its arrays.\n"
        "  -b ADDR    the server's address (default 127.0.0.1)\n"
        "  -p PORT    its port (default 6379)\n"
        "  -s SOCKET  a Unix socket instead\n"
        "  -r         send the input raw, then print every reply until the server closes\n"
        "  -c N       with -r: send N bytes at a time\n"
        "  -d MS      with -c: wait MS milliseconds between the pieces (default 2)\n"
        "  -m         several connections: lines NAME: CMD, NAME& CMD (it may block),\n"
        "             NAME? (its next reply), NAME! (close it)\n"
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

/* The next whole reply's length, reading until it is all in c->in: > 0;
 * 0 the connection ended first; -1 timeout. Not RESP: all there is. */
static long long cat__wait_reply(struct cat *c)
{
    long long len;
    int r;

    for (;;) {
        if (buf_len(&c->in) > 0 && (len = cat__reply_len(buf_peek(&c->in), buf_len(&c->in))) != 0)
            return len < 0 ? -(long long)buf_len(&c->in) - 1 : len;
        if ((r = cat__read_more(c)) <= 0)
            return r;
    }
}

/* Print the next whole reply after `prefix`. 1 printed, 0 the connection
 * ended first (what came of a reply is printed, marked), -1 timeout. */
static int cat__next_reply(struct cat *c, const char *prefix, bool sort)
{
    struct buf line = BUF_INIT;
    long long len = cat__wait_reply(c);

    if (len == 0 || len == -1) {
        if (len == 0 && buf_len(&c->in) > 0) {
            cat__escape(&line, buf_peek(&c->in), buf_len(&c->in));
            printf("%s(partial) %.*s\n", prefix, (int)buf_len(&line), buf_peek(&line));
            buf_consume(&c->in, buf_len(&c->in));
        }
        buf_free(&line);
        return (int)len;
    }
    if (len < 0) { /* not RESP: show the rest as it is */
        len = -len - 1;
        cat__escape(&line, buf_peek(&c->in), (size_t)len);
        printf("%s(not RESP) %.*s\n", prefix, (int)buf_len(&line), buf_peek(&line));
    } else {
        cat__print(&line, buf_peek(&c->in), (size_t)len, sort);
        printf("%s%.*s\n", prefix, (int)buf_len(&line), buf_peek(&line));
    }
    buf_consume(&c->in, (size_t)len);
    buf_free(&line);
    return 1;
}

/* Send a command line's words as a RESP array: 1 sent; 0 nothing to send
 * (unbalanced quotes, said on stdout; or no word); -1 the server closed. */
static int cat__send_line(struct cat *c, const char *line, size_t len)
{
    struct resp_parser p;
    struct buf req = BUF_INIT;
    char *copy;
    int r = 0;

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
        r = net_write_all(c->fd, buf_peek(&req), buf_len(&req)) < 0 ? -1 : 1;
    }
    resp_parser_free(&p);
    buf_free(&req);
    free(copy);
    return r;
}

/* After a send: print the reply (1), "(closed)" (0) or "(timeout)" (-1). */
static int cat__reply_or_say(struct cat *c, const char *prefix, bool sort)
{
    int r = cat__next_reply(c, prefix, sort);

    if (r == 0)
        printf("(closed)\n");
    else if (r < 0)
        printf("(timeout)\n");
    return r;
}

/* One command line: sent, and its reply printed. */
static int cat__command(struct cat *c, char *line, size_t len)
{
    bool sort = false;
    int r;

    if (len >= 2 && line[0] == '~' && line[1] == ' ') {
        sort = true;
        line += 2;
        len -= 2;
    }
    printf("> %.*s\n", (int)len, line);
    if ((r = cat__send_line(c, line, len)) < 0) {
        printf("(closed)\n");
        return 0;
    }
    return r == 0 ? 1 : cat__reply_or_say(c, "", sort);
}

/* Each line of a script that is neither blank nor a comment ("#..."),
 * without its end, to fn, while fn returns more than 0. Returns fn's last
 * result (1 when the script ran out). */
static int cat__lines(FILE *in, int (*fn)(void *ctx, char *line, size_t len), void *ctx)
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
        r = fn(ctx, line, (size_t)n);
    }
    free(line);
    return r;
}

static int cat__script_line(void *ctx, char *line, size_t len)
{
    return cat__command(ctx, line, len);
}

static int cat__script(struct cat *c, FILE *in)
{
    return cat__lines(in, cat__script_line, c) < 0 ? 1 : 0;
}

/* ---- several connections (-m) ----------------------------------------------------- */

#define CAT_SESSIONS 16
#define CAT_POLL_MS  5 /* between two looks at INFO while waiting for a client to block */

struct session {
    char name[16];
    struct cat c;
    bool open;
    bool blocked; /* its last command blocked, and no reply has been read since */
};

struct sessions {
    const char *addr, *sock;
    long port, timeout_ms;
    struct session s[CAT_SESSIONS];
    struct cat ctl; /* asks INFO clients how many clients are blocked */
};

static int cat__open(struct sessions *m, struct cat *c)
{
    *c = (struct cat){.fd =
                          m->sock ? cat__connect_unix(m->sock) : net_connect(m->addr, (int)m->port),
                      .timeout_ms = m->timeout_ms,
                      .in = BUF_INIT};
    if (c->fd < 0) {
        fprintf(stderr, "resp-cat: connect to %s: %s\n", m->sock ? m->sock : m->addr,
                strerror(-c->fd));
        return -1;
    }
    return 0;
}

/* INFO's blocked_clients, on the control connection; -1 if it cannot say. */
static long cat__blocked_clients(struct sessions *m)
{
    static const char info[] = "INFO clients";
    const char *field;
    long long len;
    long n = -1;

    if ((m->ctl.fd < 0 && cat__open(m, &m->ctl) < 0) ||
        cat__send_line(&m->ctl, info, strlen(info)) < 0 || (len = cat__wait_reply(&m->ctl)) <= 0)
        return -1;
    buf_append(&m->ctl.in, "", 1); /* a '\0' for strstr, consumed with the reply */
    if ((field = strstr(buf_peek(&m->ctl.in), "blocked_clients:")))
        n = strtol(field + 16, NULL, 10);
    buf_consume(&m->ctl.in, buf_len(&m->ctl.in));
    return n;
}

/* Bytes of a reply are here, or on their way in the socket. */
static bool cat__pending(struct cat *c)
{
    struct pollfd p = {.fd = c->fd, .events = POLLIN};

    return buf_len(&c->in) > 0 || poll(&p, 1, 0) > 0;
}

static void cat__sleep_ms(long ms)
{
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000};

    nanosleep(&d, NULL);
}

/* "NAME& CMD": send, then wait for either its reply (printed) or one more
 * blocked client on the server than before it was sent ("(blocked)"):
 * a condition, never a lucky moment. 1, or -1 when neither came in time. */
static int cat__send_blocking(struct sessions *m, struct session *s, const char *cmd, size_t len)
{
    long before = cat__blocked_clients(m);
    int64_t end = clock_now_ms() + m->timeout_ms;
    int r;

    if (before < 0 || (r = cat__send_line(&s->c, cmd, len)) < 0) {
        printf("(closed)\n");
        return 0;
    }
    if (r == 0)
        return 1;
    while (clock_now_ms() < end) {
        if (cat__pending(&s->c))
            return cat__reply_or_say(&s->c, "", false);
        if (cat__blocked_clients(m) > before) {
            s->blocked = true;
            printf("(blocked)\n");
            return 1;
        }
        cat__sleep_ms(CAT_POLL_MS);
    }
    printf("(timeout)\n");
    return -1;
}

/* "NAME!": close it; if it was blocked, wait until the server has counted
 * it out of its blocked clients. */
static int cat__close_session(struct sessions *m, struct session *s)
{
    bool waited_on = s->blocked && !cat__pending(&s->c);
    long before = waited_on ? cat__blocked_clients(m) : 0;
    int64_t end = clock_now_ms() + m->timeout_ms;

    close(s->c.fd);
    buf_free(&s->c.in);
    s->open = s->blocked = false;
    printf("%s closed\n", s->name);
    while (waited_on && cat__blocked_clients(m) >= before) {
        if (clock_now_ms() >= end) {
            printf("(timeout: still %ld blocked)\n", before);
            return -1;
        }
        cat__sleep_ms(CAT_POLL_MS);
    }
    return 1;
}

/* One line of a -m script: "NAME: CMD", "NAME& CMD", "NAME?" or "NAME!";
 * "~ NAME: CMD" sorts the reply's arrays, as "~ CMD" does alone. */
static int cat__session_line(struct sessions *m, char *line, size_t len)
{
    bool sort = len >= 2 && line[0] == '~' && line[1] == ' ';
    size_t n;
    struct session *s = NULL;
    char prefix[24], op;
    char *cmd;
    size_t clen;
    int r;

    if (sort) {
        line += 2;
        len -= 2;
    }
    n = strspn(line, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
    if (n == 0 || n >= sizeof(s->name) || n >= len || !strchr(":&?!", line[n])) {
        fprintf(stderr, "resp-cat: -m: not NAME: CMD, NAME& CMD, NAME? or NAME!: %.*s\n", (int)len,
                line);
        return -2;
    }
    op = line[n];
    cmd = line + n + 1 + (n + 1 < len && line[n + 1] == ' ');
    clen = len - (size_t)(cmd - line);
    for (int i = 0; i < CAT_SESSIONS && !s; i++)
        if (m->s[i].open && strlen(m->s[i].name) == n && !memcmp(m->s[i].name, line, n))
            s = &m->s[i];
    for (int i = 0; i < CAT_SESSIONS && !s; i++)
        if (!m->s[i].open) {
            s = &m->s[i];
            if (cat__open(m, &s->c) < 0)
                return -2;
            memcpy(s->name, line, n);
            s->name[n] = '\0';
            s->open = true;
        }
    if (!s) {
        fprintf(stderr, "resp-cat: -m: more than %d connections\n", CAT_SESSIONS);
        return -2;
    }
    switch (op) {
    case '!':
        return cat__close_session(m, s);
    case '?':
        snprintf(prefix, sizeof(prefix), "%s< ", s->name);
        s->blocked = false;
        return cat__reply_or_say(&s->c, prefix, false);
    case '&':
        printf("%s> %.*s\n", s->name, (int)clen, cmd);
        return cat__send_blocking(m, s, cmd, clen);
    default:
        printf("%s> %.*s\n", s->name, (int)clen, cmd);
        if ((r = cat__send_line(&s->c, cmd, clen)) <= 0) {
            if (r < 0)
                printf("(closed)\n");
            return r < 0 ? 0 : 1;
        }
        s->blocked = false;
        return cat__reply_or_say(&s->c, "", sort);
    }
}

static int cat__sessions_line(void *ctx, char *line, size_t len)
{
    return cat__session_line(ctx, line, len);
}

static int cat__sessions(struct sessions *m, FILE *in)
{
    int r = cat__lines(in, cat__sessions_line, m);

    for (int i = 0; i < CAT_SESSIONS; i++)
        if (m->s[i].open) {
            close(m->s[i].c.fd);
            buf_free(&m->s[i].c.in);
        }
    if (m->ctl.fd >= 0) {
        close(m->ctl.fd);
        buf_free(&m->ctl.in);
    }
    return r == -2 ? 2 : r < 0 ? 1 : 0;
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
    while ((r = cat__next_reply(c, "", false)) > 0) {
    }
    printf(r == 0 ? "(closed)\n" : "(timeout)\n");
    return r < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *addr = NET_DEFAULT_ADDR, *sock = NULL;
    long port = 6379, chunk = 0, delay = 2, timeout = 5000;
    struct cat c = {.in = BUF_INIT};
    bool raw = false, multi = false;
    FILE *in = stdin;
    int opt, status;

    while ((opt = getopt(argc, argv, "b:p:s:rmc:d:t:h")) != -1) {
        if (opt == 'b')
            addr = optarg;
        else if (opt == 'p' && net_parse_int(optarg, 1, 65535, &port) == 0)
            continue;
        else if (opt == 's')
            sock = optarg;
        else if (opt == 'r')
            raw = true;
        else if (opt == 'm')
            multi = true;
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
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (multi) {
        struct sessions m = {.addr = addr, .sock = sock, .port = port, .timeout_ms = timeout};
        m.ctl.fd = -1;
        status = cat__sessions(&m, in);
        if (in != stdin)
            fclose(in);
        return status;
    }
    c.fd = sock ? cat__connect_unix(sock) : net_connect(addr, (int)port);
    if (c.fd < 0) {
        fprintf(stderr, "resp-cat: connect to %s: %s\n", sock ? sock : addr, strerror(-c.fd));
        return 1;
    }
    c.timeout_ms = timeout;
    status = raw ? cat__raw(&c, in, chunk, delay) : cat__script(&c, in);
    close(c.fd);
    buf_free(&c.in);
    if (in != stdin)
        fclose(in);
    return status;
}
