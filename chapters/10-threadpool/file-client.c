/* SPDX-License-Identifier: MIT */
/* file-client.c: fetch files from file-server (the protocol is in file-job.h).
 *
 *     build/chapters/10-threadpool/file-client -p PORT a.txt dir/b.bin > both
 *     build/chapters/10-threadpool/file-client -p PORT -S          (the pool's counters)
 *
 * Every PATH is requested in turn on one connection; the bytes of each file
 * are written to stdout (or -o FILE), one after the other. An ERR reply is
 * printed on stderr as "PATH: ERR CODE text" and the next path is tried.
 * Exit status: 0 every reply was OK, 1 an ERR reply or an I/O error,
 * 2 bad arguments, 3 no complete reply within -t seconds (default 30).
 */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct reader {
    int fd;
    char buf[64 * 1024];
    size_t start, end;
};

static void on_alarm(int sig)
{
    static const char msg[] = "file-client: timeout: no complete reply in time\n";

    (void)sig;
    if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
        /* exiting anyway */
    }
    _exit(3);
}

/* Refill when empty. Returns bytes available, 0 at EOF, -1 on error. */
static ssize_t reader_fill(struct reader *r)
{
    ssize_t n;

    if (r->start < r->end)
        return (ssize_t)(r->end - r->start);
    while ((n = read(r->fd, r->buf, sizeof(r->buf))) < 0 && errno == EINTR)
        ;
    if (n < 0)
        return -1;
    r->start = 0;
    r->end = (size_t)n;
    return n;
}

/* One reply line (without the newline) into line[cap]. 0, or -1 at EOF/error. */
static int reader_line(struct reader *r, char *line, size_t cap)
{
    size_t len = 0;

    for (;;) {
        if (reader_fill(r) <= 0)
            return -1;
        char c = r->buf[r->start++];
        if (c == '\n')
            break;
        if (len + 1 < cap)
            line[len++] = c;
    }
    line[len] = '\0';
    return 0;
}

/* Copy exactly `size` body bytes to out. 0, or -1 if the connection ended first. */
static int reader_body(struct reader *r, unsigned long long size, int out)
{
    while (size > 0) {
        ssize_t n = reader_fill(r), err;
        if (n <= 0)
            return -1;
        if ((unsigned long long)n > size)
            n = (ssize_t)size;
        if ((err = net_write_all(out, r->buf + r->start, (size_t)n)) < 0)
            net_die((int)-err, "write(output)");
        r->start += (size_t)n;
        size -= (unsigned long long)n;
    }
    return 0;
}

/* Send one request line, read its reply. 0 for OK, 1 for ERR; exits on I/O errors. */
static int request(struct reader *r, const char *req, const char *what, int out)
{
    char line[8192];
    unsigned long long size;
    char *end;
    ssize_t err;

    if ((err = net_write_all(r->fd, req, strlen(req))) < 0)
        net_die((int)-err, "write(request for %s)", what);
    if (reader_line(r, line, sizeof(line)) < 0) {
        fprintf(stderr, "file-client: %s: the server closed the connection without a reply\n",
                what);
        exit(1);
    }
    if (strncmp(line, "ERR ", 4) == 0) {
        fprintf(stderr, "%s: %s\n", what, line);
        return 1;
    }
    errno = 0;
    size = strncmp(line, "OK ", 3) == 0 ? strtoull(line + 3, &end, 10) : 0;
    if (strncmp(line, "OK ", 3) != 0 || errno || *end) {
        fprintf(stderr, "file-client: %s: not a reply line: '%s'\n", what, line);
        exit(1);
    }
    if (reader_body(r, size, out) < 0) {
        fprintf(stderr, "file-client: %s: the connection ended inside a %llu-byte body\n", what,
                size);
        exit(1);
    }
    return 0;
}

static _Noreturn void usage(FILE *to, int status)
{
    fprintf(to, "usage: file-client [-b ADDR] -p PORT [-o FILE] [-t SEC] (PATH... | -S)\n"
                "Fetch files from file-server; their bytes go to stdout (or FILE).\n"
                "  -S        ask for the pool's counters (STATS) instead\n"
                "  -t SEC    give up after SEC seconds (default 30): exit 3\n");
    exit(status);
}

int main(int argc, char **argv)
{
    const char *addr = NET_DEFAULT_ADDR, *outpath = NULL;
    long port = -1, secs = 30;
    struct reader *r;
    bool stats = false;
    int opt, out = STDOUT_FILENO, failed = 0;

    while ((opt = getopt(argc, argv, "b:p:o:t:Sh")) != -1) {
        switch (opt) {
        case 'b':
            addr = optarg;
            break;
        case 'p':
            if (net_parse_int(optarg, 1, 65535, &port) < 0)
                usage(stderr, 2);
            break;
        case 'o':
            outpath = optarg;
            break;
        case 't':
            if (net_parse_int(optarg, 1, 3600, &secs) < 0)
                usage(stderr, 2);
            break;
        case 'S':
            stats = true;
            break;
        case 'h':
            usage(stdout, 0);
        default:
            usage(stderr, 2);
        }
    }
    if (port < 0 || (optind == argc) != stats)
        usage(stderr, 2);
    signal(SIGALRM, on_alarm);
    signal(SIGPIPE, SIG_IGN);
    alarm((unsigned)secs);
    if (outpath && (out = open(outpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        net_die(errno, "open(%s)", outpath);
    if (!(r = calloc(1, sizeof(*r))))
        net_die(ENOMEM, "calloc");
    if ((r->fd = net_connect(addr, (int)port)) < 0)
        net_die(-r->fd, "connect(%s:%ld)", addr, port);
    if (stats)
        failed = request(r, "STATS\n", "STATS", out);
    for (int i = optind; i < argc; i++) {
        char req[8192];
        if ((size_t)snprintf(req, sizeof(req), "GET %s\n", argv[i]) >= sizeof(req)) {
            fprintf(stderr, "file-client: %.40s...: path too long\n", argv[i]);
            failed = 1;
            continue;
        }
        failed |= request(r, req, argv[i], out);
    }
    close(r->fd);
    free(r);
    if (out != STDOUT_FILENO)
        close(out);
    return failed;
}
