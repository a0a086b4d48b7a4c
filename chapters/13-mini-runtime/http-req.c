/* SPDX-License-Identifier: MIT */
/* http-req.c: see http-req.h. */
#include "http-req.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

size_t http_head_len(const char *buf, size_t len)
{
    for (size_t i = 3; i < len; i++)
        if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' && buf[i - 3] == '\r')
            return i + 1;
    return 0;
}

/* The value of header `name` (without leading blanks) and its length, or NULL. */
static const char *http__header(const char *head, size_t len, const char *name, size_t *vlen)
{
    const char *p = memchr(head, '\n', len), *end = head + len;
    size_t n = strlen(name);

    while (p && ++p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            break;
        if ((size_t)(eol - p) > n && p[n] == ':' && strncasecmp(p, name, n) == 0) {
            const char *v = p + n + 1;
            while (v < eol && (*v == ' ' || *v == '\t'))
                v++;
            *vlen = (size_t)(eol - v);
            if (*vlen > 0 && v[*vlen - 1] == '\r')
                (*vlen)--;
            return v;
        }
        p = eol;
    }
    return NULL;
}

static bool http__value_is(const char *v, size_t vlen, const char *want)
{
    return v && vlen == strlen(want) && strncasecmp(v, want, vlen) == 0;
}

int http_parse_request(const char *head, size_t len, struct http_req *req)
{
    const char *eol = memchr(head, '\n', len), *sp1, *sp2, *v;
    size_t line, vlen;

    memset(req, 0, sizeof(*req));
    if (!eol || eol == head || eol[-1] != '\r')
        return -1;
    line = (size_t)(eol - head) - 1;
    if (!(sp1 = memchr(head, ' ', line)) ||
        !(sp2 = memchr(sp1 + 1, ' ', line - (size_t)(sp1 + 1 - head))))
        return -1;
    if (sp1 == head || sp2 == sp1 + 1 || (size_t)(sp2 - sp1 - 1) >= sizeof(req->path) - 16)
        return -1;
    for (const char *c = head; c < sp1; c++)
        if (!isupper((unsigned char)*c))
            return -1;
    if (head + line - sp2 - 1 != 8 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
        !isdigit((unsigned char)sp2[8]))
        return -1;
    req->minor = sp2[8] - '0';
    req->method = sp1 - head == 3 && memcmp(head, "GET", 3) == 0    ? HTTP_GET
                  : sp1 - head == 4 && memcmp(head, "HEAD", 4) == 0 ? HTTP_HEAD
                                                                    : HTTP_OTHER;
    memcpy(req->path, sp1 + 1, (size_t)(sp2 - sp1 - 1));
    if (strcmp(req->path, "/") == 0)
        strcpy(req->path, "/index.html");
    v = http__header(head, len, "Connection", &vlen);
    req->keep_alive =
        req->minor >= 1 ? !http__value_is(v, vlen, "close") : http__value_is(v, vlen, "keep-alive");
    req->has_body = http__header(head, len, "Transfer-Encoding", &vlen) != NULL ||
                    http_content_length(head, len) > 0;
    return 0;
}

/* snippet: path */
bool http_path_ok(const char *path)
{
    const char *seg = path;

    if (path[0] != '/' || strpbrk(path, "\\%"))
        return false;
    while (seg) { /* every segment between slashes */
        const char *next = strchr(seg + 1, '/');
        size_t n = next ? (size_t)(next - seg - 1) : strlen(seg + 1);
        if (n == 2 && strncmp(seg + 1, "..", 2) == 0)
            return false;
        seg = next;
    }
    return true;
}
/* end snippet */

const char *http_content_type(const char *path)
{
    static const char *const types[][2] = {
        {".html", "text/html"},     {".txt", "text/plain"},        {".css", "text/css"},
        {".js", "text/javascript"}, {".json", "application/json"}, {".png", "image/png"},
        {".jpg", "image/jpeg"},     {".c", "text/plain"},          {".h", "text/plain"},
        {".md", "text/markdown"},
    };
    const char *dot = strrchr(path, '.');

    for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(dot, types[i][0]) == 0)
            return types[i][1];
    return "application/octet-stream";
}

int http_parse_status(const char *head, size_t len)
{
    if (len < 12 || strncmp(head, "HTTP/1.", 7) != 0 || head[8] != ' ')
        return -1;
    for (int i = 9; i < 12; i++)
        if (!isdigit((unsigned char)head[i]))
            return -1;
    return atoi(head + 9);
}

long long http_content_length(const char *head, size_t len)
{
    size_t vlen;
    const char *v = http__header(head, len, "Content-Length", &vlen);
    long long n = 0;

    if (!v || vlen == 0 || vlen > 18)
        return -1;
    for (size_t i = 0; i < vlen; i++) {
        if (!isdigit((unsigned char)v[i]))
            return -1;
        n = n * 10 + (v[i] - '0');
    }
    return n;
}
