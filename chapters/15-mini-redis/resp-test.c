/* SPDX-License-Identifier: MIT */
/* resp-test.c: the RESP parser (resp.c) fed as a socket feeds it.
 *
 * A stream cuts requests wherever it likes. Each test here gives the parser
 * the same bytes cut every way there is: whole, in two pieces at every
 * point, and one byte at a time, into one buffer that grows as a
 * connection's query buffer does; and requires the same requests, or the
 * same error, each time.
 *
 *     build/chapters/15-mini-redis/resp-test        (exit 0: every check held)
 */
#include "check.h"
#include "resp.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a run of the parser found: the arguments of every request, each
 * written as its length and bytes, "|" between requests; or the error. */
struct outcome {
    char text[8192];
    size_t len;
};

static void outcome__add(struct outcome *o, const char *s, size_t n)
{
    if (o->len + n < sizeof(o->text)) {
        memcpy(o->text + o->len, s, n);
        o->len += n;
        o->text[o->len] = '\0';
    }
}

/* Feed `in` in pieces ending at the offsets cuts[0..ncuts) (then the
 * rest), as reads would bring them. */
static void feed(const char *in, size_t len, const size_t *cuts, size_t ncuts, struct outcome *o)
{
    char *buf = malloc(len + 1);
    struct resp_parser p;
    size_t have = 0, pos = 0;

    resp_parser_init(&p);
    memset(o, 0, sizeof(*o));
    for (size_t k = 0; k <= ncuts; k++) {
        size_t upto = cuts && k < ncuts ? cuts[k] : len;
        memcpy(buf + have, in + have, upto - have);
        have = upto;
        for (;;) {
            enum resp_status st = resp_parse(&p, buf + pos, have - pos);
            char tmp[64];
            if (st == RESP_NEED_MORE)
                break;
            if (st == RESP_ERROR) {
                outcome__add(o, "ERROR ", 6);
                outcome__add(o, p.error, strlen(p.error));
                resp_parser_free(&p);
                free(buf);
                return;
            }
            for (int i = 0; i < p.argc; i++) {
                int n = snprintf(tmp, sizeof(tmp), "%zu:", p.argv[i].len);
                outcome__add(o, tmp, (size_t)n);
                outcome__add(o, buf + pos + p.argv[i].off, p.argv[i].len);
                CHECK_MSG(buf[pos + p.argv[i].off + p.argv[i].len] == '\0',
                          "argument %d is not followed by a NUL", i);
                outcome__add(o, " ", 1);
            }
            outcome__add(o, "|", 1);
            pos += p.used;
        }
    }
    if (pos < have)
        outcome__add(o, "INCOMPLETE", 10);
    resp_parser_free(&p);
    free(buf);
}

/* `in` gives `expected` whole, cut in two anywhere, and byte by byte. */
static void check_every_cut(const char *name, const char *in, size_t len, const char *expected)
{
    struct outcome o;
    size_t *cuts = malloc((len + 1) * sizeof(*cuts));
    bool ok = true;

    feed(in, len, NULL, 0, &o);
    ok &= CHECK_MSG(strcmp(o.text, expected) == 0, "%s, whole: expected '%s', got '%s'", name,
                    expected, o.text);
    for (size_t cut = 1; cut < len && ok; cut++) {
        feed(in, len, &cut, 1, &o);
        ok &= CHECK_MSG(strcmp(o.text, expected) == 0, "%s, cut at %zu: expected '%s', got '%s'",
                        name, cut, expected, o.text);
    }
    for (size_t i = 0; i < len; i++)
        cuts[i] = i + 1;
    if (ok) {
        feed(in, len, cuts, len, &o);
        CHECK_MSG(strcmp(o.text, expected) == 0, "%s, byte by byte: expected '%s', got '%s'", name,
                  expected, o.text);
    }
    free(cuts);
    printf("%s - %s\n", ok ? "ok" : "not ok", name);
}

#define CASE(name, in, expected) check_every_cut(name, in, sizeof(in) - 1, expected)

int main(void)
{
    CASE("one multibulk request", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "3:GET 1:k |");
    CASE("three requests in one buffer, one of them empty",
         "*1\r\n$4\r\nPING\r\n*0\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", "4:PING ||4:ECHO 0: |");
    CASE("binary arguments keep their NUL and CRLF bytes", "*2\r\n$4\r\nECHO\r\n$5\r\na\0\r\nb\r\n",
         "4:ECHO 5:a\0\r\nb |");
    CASE("inline requests, LF or CRLF ended, and blank lines", "PING\r\n\r\nECHO  hello\n",
         "4:PING ||4:ECHO 5:hello |");
    CASE("inline quoting: escapes, hex, single quotes", "SET \"a b\" 'it\\'s' \"\\x41\\n\"\r\n",
         "3:SET 3:a b 4:it's 2:A\n |");
    CASE("an inline request and a multibulk one together", "PING\r\n*1\r\n$4\r\nPING\r\n",
         "4:PING |4:PING |");
    CASE("a request not yet whole is only incomplete", "*2\r\n$3\r\nGET\r\n$1\r\n", "INCOMPLETE");
    CASE("the two bytes after an argument are skipped, not checked", "*1\r\n$3\r\nfooXYPING\r\n",
         "3:foo |4:PING |");
    CASE("errors: bad multibulk length", "*abc\r\n",
         "ERROR Protocol error: invalid multibulk length");
    CASE("errors: more arguments than INT_MAX", "*2147483648\r\n",
         "ERROR Protocol error: invalid multibulk length");
    CASE("errors: negative bulk length", "*1\r\n$-1\r\n",
         "ERROR Protocol error: invalid bulk length");
    CASE("errors: bulk length over 512 MiB", "*1\r\n$536870913\r\n",
         "ERROR Protocol error: invalid bulk length");
    CASE("errors: not a bulk", "*1\r\nx3\r\n", "ERROR Protocol error: expected '$', got 'x'");
    CASE("errors: unbalanced quotes", "GET \"k\r\n",
         "ERROR Protocol error: unbalanced quotes in request");
    CASE("errors: after a good request, the bad one", "PING\r\n*1\r\n$x\r\n",
         "4:PING |ERROR Protocol error: invalid bulk length");
    {
        static char big[RESP_INLINE_MAX + 8];
        int before = check_failures;
        struct outcome o;
        memset(big, 'a', sizeof(big));
        feed(big, sizeof(big), NULL, 0, &o);
        CHECK_MSG(strcmp(o.text, "ERROR Protocol error: too big inline request") == 0,
                  "64 KiB without a newline: got '%s'", o.text);
        big[0] = '*';
        feed(big, sizeof(big), NULL, 0, &o);
        CHECK_MSG(strcmp(o.text, "ERROR Protocol error: too big mbulk count string") == 0,
                  "a count line of 64 KiB: got '%s'", o.text);
        memcpy(big, "*1\r\n$", 5);
        feed(big, sizeof(big), NULL, 0, &o);
        CHECK_MSG(strcmp(o.text, "ERROR Protocol error: too big bulk count string") == 0,
                  "a bulk length line of 64 KiB: got '%s'", o.text);
        feed(big, RESP_INLINE_MAX, NULL, 0, &o);
        CHECK_MSG(strcmp(o.text, "INCOMPLETE") == 0, "just under 64 KiB waits: got '%s'", o.text);
        printf("%s - the 64 KiB limits on a line\n", check_failures > before ? "not ok" : "ok");
    }
    return check_failures ? 1 : 0;
}
