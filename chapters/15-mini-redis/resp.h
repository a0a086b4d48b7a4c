/* SPDX-License-Identifier: MIT */
/* resp.h: RESP2, the protocol of Redis, both ways, with no I/O in it.
 *
 * Requests. A client sends either a multibulk request, an array of binary-
 * safe strings:
 *
 *     *2\r\n$3\r\nGET\r\n$3\r\nkey\r\n
 *
 * or an inline one, a line of words (what a person types into telnet):
 *
 *     GET key\r\n
 *
 * The bytes come from a stream: a read may bring half a request, or ten and
 * a half. resp_parse() takes whatever the buffer holds and either finds one
 * whole request, or says it needs more, remembering how far it got (the
 * count of arguments, the length of the one in progress), so the next call
 * goes on where this one stopped instead of starting again; or it finds the
 * bytes malformed and gives the error Redis would send before closing the
 * connection. The arguments stay where they are, in the caller's buffer
 * (redis's processMultibulkBuffer and processInlineBuffer, src/networking.c,
 * do the same with their query buffer); each is followed by a '\0' written
 * over the "\r\n" after it, so options compare as C strings, as Redis's do.
 *
 * Replies are appended to a struct buf (common/buf.h) by resp_add_*().
 */
#ifndef CH15_RESP_H
#define CH15_RESP_H

#include "buf.h"

#include <stdbool.h>
#include <stddef.h>

#define RESP_INLINE_MAX (64 * 1024)           /* PROTO_INLINE_MAX_SIZE */
#define RESP_BULK_MAX   (512LL * 1024 * 1024) /* proto-max-bulk-len's default */
#define RESP_ARGC_MAX   2147483647LL          /* INT_MAX: "*N" above is refused */

struct resp_arg {
    size_t off; /* from the start of the request */
    size_t len; /* buf[off + len] is '\0' */
};

enum resp_status {
    RESP_NEED_MORE, /* no whole request yet: call again with the same bytes and more */
    RESP_REQUEST,   /* argv[0..argc) is a request of `used` bytes (argc may be 0) */
    RESP_ERROR,     /* malformed: reply `error`, then close the connection */
};

/* The parse of one request, from its first byte. */
struct resp_parser {
    size_t pos;         /* bytes of the request already parsed */
    long long args;     /* multibulk: arguments still to come; 0: the count is not read */
    long long bulk_len; /* the next argument's length; -1: its "$N" line is not read */
    bool is_inline;
    /* the result */
    int argc;
    int cap;
    struct resp_arg *argv;
    size_t used;     /* RESP_REQUEST: bytes the request took */
    char error[128]; /* RESP_ERROR: the reply, without "-" and "\r\n" */
};

void resp_parser_init(struct resp_parser *p);
void resp_parser_free(struct resp_parser *p);

/* Parse the request at the start of buf[0..len). The buffer must hold the
 * same bytes as at the previous call (and more after them) until the call
 * that returns RESP_REQUEST or RESP_ERROR, which resets the parser for the
 * next request (at buf + used). It writes into buf: a '\0' after each
 * argument, and an inline request's words unquoted in place. */
enum resp_status resp_parse(struct resp_parser *p, char *buf, size_t len);

/* The bytes a request still needs at least (0: unknown), so a caller can
 * make room for a large argument in one step. */
size_t resp_parse_want(const struct resp_parser *p);

/* Replies. Each returns 0 or -ENOMEM, as buf_append(). */
int resp_add_simple(struct buf *b, const char *s);      /* +OK */
int resp_add_error(struct buf *b, const char *fmt, ...) /* -ERR ... */
    __attribute__((format(printf, 2, 3)));
int resp_add_int(struct buf *b, long long v);                /* :42 */
int resp_add_bulk(struct buf *b, const char *s, size_t len); /* $3\r\nfoo */
int resp_add_null(struct buf *b);                            /* $-1 */
int resp_add_array(struct buf *b, long long n);              /* *N, then N replies */

#endif
