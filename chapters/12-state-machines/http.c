/* SPDX-License-Identifier: MIT */
/* http.c: URL, request and response helpers for chapter 12 (see http.h). */
#include "http.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int http_parse_url(const char *url, struct http_url *u)
{
    const char *host, *end, *slash;
    size_t hlen;
    long port = 80;

    memset(u, 0, sizeof(*u));
    if (strncmp(url, "http://", 7) != 0)
        return -EINVAL;
    host = url + 7;
    slash = strchr(host, '/');
    end = slash ? slash : host + strlen(host);
    const char *colon = memchr(host, ':', (size_t)(end - host));
    hlen = (size_t)((colon ? colon : end) - host);
    if (hlen == 0 || hlen >= sizeof(u->host))
        return -EINVAL;
    memcpy(u->host, host, hlen);
    if (colon) {
        char *num_end;
        errno = 0;
        port = strtol(colon + 1, &num_end, 10);
        if (num_end != end || errno || port < 1 || port > 65535)
            return -EINVAL;
    }
    if (snprintf(u->path, sizeof(u->path), "%s", slash ? slash : "/") >= (int)sizeof(u->path))
        return -EINVAL;
    u->port = (int)port;
    u->addr.sin_family = AF_INET;
    u->addr.sin_port = htons((uint16_t)port);
    if (strcmp(u->host, "localhost") == 0)
        return inet_pton(AF_INET, "127.0.0.1", &u->addr.sin_addr) == 1 ? 0 : -EINVAL;
    return inet_pton(AF_INET, u->host, &u->addr.sin_addr) == 1 ? 0 : -EINVAL;
}

int http_format_request(const struct http_url *u, char *out, size_t cap)
{
    int n = snprintf(out, cap, "GET %s HTTP/1.0\r\nHost: %s:%d\r\nConnection: close\r\n\r\n",
                     u->path, u->host, u->port);

    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : n;
}

/* snippet: connect */
int http_connect_start(const struct http_url *u, int *fd)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), err;

    if (s < 0)
        return -errno;
    if (connect(s, (const struct sockaddr *)&u->addr, sizeof(u->addr)) == 0) {
        *fd = s; /* the handshake finished inside connect(): nothing to wait for */
        return 0;
    }
    err = errno;
    if (err == EINPROGRESS) {
        *fd = s; /* SYN sent: the socket turns writable when the handshake ends */
        return -EINPROGRESS;
    }
    close(s); /* ECONNREFUSED can come at once over loopback: the RST is already there */
    return -err;
}
/* end snippet */

ssize_t http_recv_some(int fd, struct buf *into)
{
    char chunk[HTTP_RECV_CHUNK];
    ssize_t n;

    do
        n = recv(fd, chunk, sizeof(chunk), 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    if (n > 0 && buf_append(into, chunk, (size_t)n) < 0)
        return -ENOMEM;
    return n;
}

int http_connect_result(int fd)
{
    int err = 0;
    socklen_t len = sizeof(err);

    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        return -errno;
    return -err;
}

int http_parse_response(const char *data, size_t len, size_t *body_off, size_t *body_len)
{
    const char *end = memmem(data, len, "\r\n\r\n", 4), *cl;
    int status;

    if (!end || len < 12 ||
        (memcmp(data, "HTTP/1.0 ", 9) != 0 && memcmp(data, "HTTP/1.1 ", 9) != 0))
        return -EPROTO;
    if (!isdigit((unsigned char)data[9]) || !isdigit((unsigned char)data[10]) ||
        !isdigit((unsigned char)data[11]))
        return -EPROTO;
    status = (data[9] - '0') * 100 + (data[10] - '0') * 10 + (data[11] - '0');
    *body_off = (size_t)(end + 4 - data);
    *body_len = len - *body_off;
    /* headers end at `end`; a Content-Length, if any, must match what came */
    cl = memmem(data, (size_t)(end - data), "\r\nContent-Length: ", 18);
    if (cl && strtoul(cl + 18, NULL, 10) != *body_len)
        return -EPROTO;
    return status == 200 ? 0 : status;
}

void http_to_upper(char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        s[i] = (char)toupper((unsigned char)s[i]);
}

const char *fetch_cli_parse(int argc, char **argv, const char *summary)
{
    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    struct http_url u;
    int opt;

    while ((opt = getopt(argc, argv, "vh")) != -1) {
        if (opt == 'v') {
            task_trace = true;
        } else {
            FILE *to = opt == 'h' ? stdout : stderr;
            fprintf(to,
                    "usage: %s [-v] http://ADDR:PORT/PATH\n%s\n  -v  trace every step on stderr\n",
                    prog, summary);
            exit(opt == 'h' ? 0 : 2);
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "usage: %s [-v] http://ADDR:PORT/PATH\n%s\n", prog, summary);
        exit(2);
    }
    if (http_parse_url(argv[optind], &u) < 0) {
        fprintf(stderr,
                "%s: bad URL '%s': want http://ADDR:PORT/PATH, ADDR an IPv4 address\n"
                "usage: %s [-v] http://ADDR:PORT/PATH\n",
                prog, argv[optind], prog);
        exit(2);
    }
    return argv[optind];
}

int fetch_report(const char *prog, struct task *t)
{
    if (!task_is_completed(t)) {
        fprintf(stderr, "%s: the loop ran out of work but the task never completed\n", prog);
        return 1;
    }
    if (t->error) {
        fprintf(stderr, "%s: %s: %s (%s)\n", prog, t->what, strerror(t->error),
                strerrorname_np(t->error));
        return 1;
    }
    if (fwrite(t->str, 1, t->len, stdout) != t->len || fflush(stdout) != 0) {
        fprintf(stderr, "%s: write(stdout): %s\n", prog, strerror(errno));
        return 1;
    }
    return 0;
}
