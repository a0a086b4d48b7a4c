/* SPDX-License-Identifier: MIT */
/* http-req.h: the little HTTP/1.1 that http-rt and fetch-rt need: find the
 * end of a head, parse a request line and its headers, check a path.
 * No allocation: everything points into the caller's buffer.
 */
#ifndef CH13_HTTP_REQ_H
#define CH13_HTTP_REQ_H

#include <stdbool.h>
#include <stddef.h>

enum http_method { HTTP_GET, HTTP_HEAD, HTTP_OTHER };

struct http_req {
    enum http_method method;
    char path[1024]; /* the target, "/" made "/index.html"; checked by http_path_ok() */
    int minor;       /* HTTP/1.minor */
    bool keep_alive; /* HTTP/1.1 unless "Connection: close"; 1.0 only if asked */
    bool has_body;   /* Content-Length > 0 or Transfer-Encoding: not served here */
};

/* Bytes up to and including the blank line that ends the head, or 0 if
 * buf[0..len) holds no complete head yet. */
size_t http_head_len(const char *buf, size_t len);

/* Parse a complete head (http_head_len() bytes). 0, or -1 for a malformed
 * request (answer 400). */
int http_parse_request(const char *head, size_t len, struct http_req *req);

/* The path is safe to open under the root: it starts with '/', and no
 * segment is "..", and there is no NUL, backslash or '%' (no decoding
 * here, so nothing encoded can sneak past the check). */
bool http_path_ok(const char *path);

/* "text/html" for .html, and so on; application/octet-stream otherwise. */
const char *http_content_type(const char *path);

/* Status line of a response: "HTTP/1.1 200 OK" -> 200; -1 if malformed. */
int http_parse_status(const char *head, size_t len);
/* Content-Length of a head, or -1 if there is none. */
long long http_content_length(const char *head, size_t len);

#endif
