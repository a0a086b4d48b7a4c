/* SPDX-License-Identifier: MIT */
/* resp.c: RESP2 requests parsed incrementally, replies encoded (resp.h).
 *
 * The parser follows redis's src/networking.c at tag 7.0.15 step by step
 * (processMultibulkBuffer, processInlineBuffer, and sds.c's sdssplitargs
 * for the words of an inline request), quirks included, since a client sees
 * them: the two bytes after a bulk argument are skipped, not checked; a
 * "*0" or "*-1" request is an empty one, answered by nothing; a line is
 * searched for with strchr() in a NUL-terminated buffer, so a NUL byte
 * hides the end of the line after it. Its state lives in struct
 * resp_parser, never on the stack: a request may end three reads later.
 */
#include "resp.h"

#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void resp_parser_init(struct resp_parser *p)
{
    memset(p, 0, sizeof(*p));
    p->bulk_len = -1;
}

void resp_parser_free(struct resp_parser *p)
{
    free(p->argv);
    p->argv = NULL;
    p->cap = 0;
}

/* Ready for the next request; argv keeps its memory. */
static void resp__reset(struct resp_parser *p)
{
    p->pos = 0;
    p->args = 0;
    p->bulk_len = -1;
    p->is_inline = false;
    p->argc = 0;
}

static enum resp_status resp__error(struct resp_parser *p, const char *msg)
{
    snprintf(p->error, sizeof(p->error), "%s", msg);
    resp__reset(p);
    return RESP_ERROR;
}

/* strchr() from buf + from, in a buffer whose end acts as a '\0': the first
 * c, or NULL if a '\0' or the end comes first (see the head comment). */
static char *resp__strchr(char *buf, size_t from, size_t len, char c)
{
    for (size_t i = from; i < len && buf[i] != '\0'; i++)
        if (buf[i] == c)
            return buf + i;
    return NULL;
}

static void resp__push(struct resp_parser *p, size_t off, size_t len)
{
    if (p->argc == p->cap) {
        int cap = p->cap ? p->cap * 2 : 16;
        struct resp_arg *v = realloc(p->argv, (size_t)cap * sizeof(*v));
        if (!v) {
            fprintf(stderr, "mini-redis: out of memory for %d arguments\n", cap);
            exit(1);
        }
        p->argv = v;
        p->cap = cap;
    }
    p->argv[p->argc++] = (struct resp_arg){off, len};
}

static bool resp__hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int resp__hex_value(char c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static bool resp__space(char c) /* isspace() in the C locale */
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* sdssplitargs over line[0..len), which ends at len or at a '\0', writing
 * the words back into the line itself: a word is never longer than the
 * bytes it was read from, so the writing never overtakes the reading. Each
 * word is followed by a '\0' (there is always a byte for it: the one that
 * ended the word, or the line's own "\n"). false: unbalanced quotes. */
static bool resp__split_inline(struct resp_parser *p, char *line, size_t len)
{
    size_t r = 0, w = 0;
#define AT(i) ((i) < len ? line[i] : '\0')

    for (;;) {
        size_t start;
        bool inq = false, insq = false, done = false;

        while (AT(r) && resp__space(AT(r)))
            r++;
        if (!AT(r))
            return true;
        start = w;
        while (!done) {
            char c = AT(r);
            if (inq) {
                if (c == '\\' && AT(r + 1) == 'x' && resp__hex(AT(r + 2)) && resp__hex(AT(r + 3))) {
                    line[w++] =
                        (char)(resp__hex_value(AT(r + 2)) * 16 + resp__hex_value(AT(r + 3)));
                    r += 3;
                } else if (c == '\\' && AT(r + 1)) {
                    char e = AT(r + 1);
                    r++;
                    line[w++] = e == 'n'   ? '\n'
                                : e == 'r' ? '\r'
                                : e == 't' ? '\t'
                                : e == 'b' ? '\b'
                                : e == 'a' ? '\a'
                                           : e;
                } else if (c == '"') {
                    if (AT(r + 1) && !resp__space(AT(r + 1)))
                        return false; /* a closing quote must end the word */
                    done = true;
                } else if (!c) {
                    return false;
                } else {
                    line[w++] = c;
                }
            } else if (insq) {
                if (c == '\\' && AT(r + 1) == '\'') {
                    r++;
                    line[w++] = '\'';
                } else if (c == '\'') {
                    if (AT(r + 1) && !resp__space(AT(r + 1)))
                        return false;
                    done = true;
                } else if (!c) {
                    return false;
                } else {
                    line[w++] = c;
                }
            } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || !c) {
                done = true;
            } else if (c == '"') {
                inq = true;
            } else if (c == '\'') {
                insq = true;
            } else {
                line[w++] = c;
            }
            if (AT(r))
                r++;
        }
        resp__push(p, start, w - start);
        line[w++] = '\0';
    }
#undef AT
}

/* processInlineBuffer: one line, "\n" or "\r\n" ended. */
static enum resp_status resp__inline(struct resp_parser *p, char *buf, size_t len)
{
    char *nl = resp__strchr(buf, 0, len, '\n');
    size_t linelen, eol = 1;

    if (!nl) {
        if (len > RESP_INLINE_MAX)
            return resp__error(p, "Protocol error: too big inline request");
        return RESP_NEED_MORE;
    }
    linelen = (size_t)(nl - buf);
    if (linelen > 0 && buf[linelen - 1] == '\r') {
        linelen--;
        eol++;
    }
    if (!resp__split_inline(p, buf, linelen))
        return resp__error(p, "Protocol error: unbalanced quotes in request");
    p->used = linelen + eol;
    return RESP_REQUEST;
}

/* processMultibulkBuffer: "*N\r\n", then N times "$LEN\r\n" LEN bytes and two more. */
static enum resp_status resp__multibulk(struct resp_parser *p, char *buf, size_t len)
{
    long long ll;
    char *nl;

    if (p->args == 0) {
        if (!(nl = resp__strchr(buf, p->pos, len, '\r'))) {
            if (len - p->pos > RESP_INLINE_MAX)
                return resp__error(p, "Protocol error: too big mbulk count string");
            return RESP_NEED_MORE;
        }
        if ((size_t)(nl - buf) + 2 > len) /* the "\n" is not here yet */
            return RESP_NEED_MORE;
        if (!util_str_to_ll(buf + p->pos + 1, (size_t)(nl - buf) - p->pos - 1, &ll) ||
            ll > RESP_ARGC_MAX)
            return resp__error(p, "Protocol error: invalid multibulk length");
        p->pos = (size_t)(nl - buf) + 2;
        if (ll <= 0) { /* an empty request: nothing to run, nothing to answer */
            p->used = p->pos;
            return RESP_REQUEST;
        }
        p->args = ll;
    }
    while (p->args > 0) {
        if (p->bulk_len == -1) {
            if (!(nl = resp__strchr(buf, p->pos, len, '\r'))) {
                if (len - p->pos > RESP_INLINE_MAX)
                    return resp__error(p, "Protocol error: too big bulk count string");
                return RESP_NEED_MORE;
            }
            if ((size_t)(nl - buf) + 2 > len)
                return RESP_NEED_MORE;
            if (buf[p->pos] != '$') {
                char msg[64];
                snprintf(msg, sizeof(msg), "Protocol error: expected '$', got '%c'", buf[p->pos]);
                return resp__error(p, msg);
            }
            if (!util_str_to_ll(buf + p->pos + 1, (size_t)(nl - buf) - p->pos - 1, &ll) || ll < 0 ||
                ll > RESP_BULK_MAX)
                return resp__error(p, "Protocol error: invalid bulk length");
            p->pos = (size_t)(nl - buf) + 2;
            p->bulk_len = ll;
        }
        if (len - p->pos < (size_t)p->bulk_len + 2)
            return RESP_NEED_MORE;
        resp__push(p, p->pos, (size_t)p->bulk_len);
        buf[p->pos + (size_t)p->bulk_len] = '\0'; /* over the "\r", which is not checked */
        p->pos += (size_t)p->bulk_len + 2;
        p->bulk_len = -1;
        p->args--;
    }
    p->used = p->pos;
    return RESP_REQUEST;
}

enum resp_status resp_parse(struct resp_parser *p, char *buf, size_t len)
{
    enum resp_status st;

    if (p->used) { /* the previous call returned a request: this is the next one */
        p->used = 0;
        resp__reset(p);
    }
    if (len == 0)
        return RESP_NEED_MORE;
    if (p->pos == 0 && p->args == 0 && !p->is_inline)
        p->is_inline = buf[0] != '*';
    /* An inline request is parsed again from its start at each call: it is
     * one line, at most RESP_INLINE_MAX bytes, and the search for its end is
     * all the work there is. */
    p->argc = p->is_inline ? 0 : p->argc;
    st = p->is_inline ? resp__inline(p, buf, len) : resp__multibulk(p, buf, len);
    return st;
}

size_t resp_parse_want(const struct resp_parser *p)
{
    if (p->is_inline || p->bulk_len < 0)
        return 0;
    return p->pos + (size_t)p->bulk_len + 2;
}

/* ---- replies ---------------------------------------------------------------------- */

static int resp__line(struct buf *b, char type, long long v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "%c%lld\r\n", type, v);

    return buf_append(b, tmp, (size_t)n);
}

int resp_add_simple(struct buf *b, const char *s)
{
    int err;

    if ((err = buf_append(b, "+", 1)) < 0 || (err = buf_append(b, s, strlen(s))) < 0)
        return err;
    return buf_append(b, "\r\n", 2);
}

/* addReplyErrorFormat: "-ERR " unless the text brings its own code
 * (WRONGTYPE, NOPROTO, EXECABORT), and no line break inside, or the client would read
 * the rest as another reply. */
int resp_add_error(struct buf *b, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    int n, err;

    va_start(ap, fmt);
    n = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n < 0)
        return -EINVAL;
    if ((size_t)n >= sizeof(msg))
        n = (int)sizeof(msg) - 1;
    for (int i = 0; i < n; i++)
        if (msg[i] == '\r' || msg[i] == '\n')
            msg[i] = ' ';
    if ((err = buf_append(b, "-", 1)) < 0)
        return err;
    if (strncmp(msg, "WRONGTYPE ", 10) != 0 && strncmp(msg, "NOPROTO ", 8) != 0 &&
        strncmp(msg, "EXECABORT ", 10) != 0 && (err = buf_append(b, "ERR ", 4)) < 0)
        return err;
    if ((err = buf_append(b, msg, (size_t)n)) < 0)
        return err;
    return buf_append(b, "\r\n", 2);
}

int resp_add_int(struct buf *b, long long v)
{
    return resp__line(b, ':', v);
}

int resp_add_bulk(struct buf *b, const char *s, size_t len)
{
    int err;

    if ((err = resp__line(b, '$', (long long)len)) < 0 || (err = buf_append(b, s, len)) < 0)
        return err;
    return buf_append(b, "\r\n", 2);
}

int resp_add_null(struct buf *b)
{
    return buf_append(b, "$-1\r\n", 5);
}

int resp_add_array(struct buf *b, long long n)
{
    return resp__line(b, '*', n);
}
