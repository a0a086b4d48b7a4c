/* SPDX-License-Identifier: MIT */
/* http.h: the plain HTTP/1.0 pieces every fetch program of chapter 12 shares.
 *
 * Only what a GET over loopback needs: parse "http://127.0.0.1:PORT/path",
 * write the request, start a non-blocking connect, and split a response into
 * status and body. No TLS, no DNS, no chunked encoding: the server is the
 * chapter's own http-server, and HTTP/1.0 ends the body with the connection.
 */
#ifndef CH12_HTTP_H
#define CH12_HTTP_H

#include "buf.h"
#include "loop.h"
#include "task.h"

#include <netinet/in.h>
#include <stddef.h>
#include <sys/types.h>

struct http_url {
    char host[64];
    int port;
    char path[256];
    struct sockaddr_in addr;
};

/* "http://HOST[:PORT]/PATH" with HOST an IPv4 address or localhost.
 * Returns 0 or -EINVAL. */
int http_parse_url(const char *url, struct http_url *u);

/* "GET PATH HTTP/1.0" and its headers, into out. Returns the length, or
 * -ENAMETOOLONG if it does not fit. */
int http_format_request(const struct http_url *u, char *out, size_t cap);

/* A non-blocking socket, connecting: 0 if connected already, -EINPROGRESS if
 * the handshake goes on (wait for EPOLLOUT, then http_connect_result), or
 * -errno (ECONNREFUSED...) with the socket closed. *fd is set in the first
 * two cases. */
int http_connect_start(const struct http_url *u, int *fd);

/* recv() once, at most HTTP_RECV_CHUNK bytes, appended to `into`. Returns
 * the bytes read, 0 at EOF, or -errno (-EAGAIN: nothing there yet). EINTR
 * is retried. The chunk is a local: it never has to outlive an await. */
#define HTTP_RECV_CHUNK 4096
ssize_t http_recv_some(int fd, struct buf *into);

/* After EPOLLOUT: how the connect ended (SO_ERROR). 0 or -errno. */
int http_connect_result(int fd);

/* The whole response, read to EOF: check the status line and the
 * Content-Length (a short body means the connection broke), and give the
 * body. Returns 0 for 200, the HTTP status for another status, or -EPROTO. */
int http_parse_response(const char *data, size_t len, size_t *body_off, size_t *body_len);

/* HttpClient.GetStringAsync(url), written as the C# compiler would write
 * it (get-string.c): returns a task whose result is the body. */
struct task *get_string_async(struct loop *l, const char *url);
size_t get_string_frame_size(void); /* sizeof its frame, for -v */

/* body.ToUpperInvariant(), ASCII only, in place. */
void http_to_upper(char *s, size_t len);

/* The command line every fetch program shares: [-v] URL. Sets task_trace
 * for -v, exits 0 on -h and 2 (usage on stderr) on anything else. */
const char *fetch_cli_parse(int argc, char **argv, const char *summary);

/* Print a finished fetch: the body on stdout and exit status 0, or the
 * error on stderr and 1 (a task that never completed is a bug: 1 too). */
int fetch_report(const char *prog, struct task *t);

#endif
