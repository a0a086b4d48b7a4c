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
#include "resp-feed.h"
#include "resp.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `in` gives `expected` whole, cut in two anywhere, and byte by byte. */
static void check_every_cut(const char *name, const char *in, size_t len, const char *expected)
{
    struct resp_outcome o = {0};
    size_t *cuts = malloc((len + 1) * sizeof(*cuts));
    bool ok = true;

    resp_feed(in, len, NULL, 0, &o);
    ok &= CHECK_MSG(!o.broken && strcmp(o.text, expected) == 0,
                    "%s, whole: expected '%s', got '%s'%s%s", name, expected, o.text,
                    o.broken ? ": " : "", o.broken ? o.broken : "");
    for (size_t cut = 1; cut < len && ok; cut++) {
        resp_feed(in, len, &cut, 1, &o);
        ok &= CHECK_MSG(!o.broken && strcmp(o.text, expected) == 0,
                        "%s, cut at %zu: expected '%s', got '%s'%s%s", name, cut, expected, o.text,
                        o.broken ? ": " : "", o.broken ? o.broken : "");
    }
    for (size_t i = 0; i + 1 < len; i++)
        cuts[i] = i + 1;
    if (ok) {
        resp_feed(in, len, cuts, len ? len - 1 : 0, &o);
        CHECK_MSG(!o.broken && strcmp(o.text, expected) == 0,
                  "%s, byte by byte: expected '%s', got '%s'%s%s", name, expected, o.text,
                  o.broken ? ": " : "", o.broken ? o.broken : "");
    }
    resp_outcome_free(&o);
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
        struct resp_outcome o = {0};
        memset(big, 'a', sizeof(big));
        resp_feed(big, sizeof(big), NULL, 0, &o);
        CHECK_MSG(strcmp(o.text, "ERROR Protocol error: too big inline request") == 0,
                  "64 KiB without a newline: got '%s'", o.text);
        big[0] = '*';
        resp_feed(big, sizeof(big), NULL, 0, &o);
        CHECK_MSG(strcmp(o.text, "ERROR Protocol error: too big mbulk count string") == 0,
                  "a count line of 64 KiB: got '%s'", o.text);
        memcpy(big, "*1\r\n$", 5);
        resp_feed(big, sizeof(big), NULL, 0, &o);
        CHECK_MSG(strcmp(o.text, "ERROR Protocol error: too big bulk count string") == 0,
                  "a bulk length line of 64 KiB: got '%s'", o.text);
        resp_feed(big, RESP_INLINE_MAX, NULL, 0, &o);
        CHECK_MSG(strcmp(o.text, "INCOMPLETE") == 0, "just under 64 KiB waits: got '%s'", o.text);
        resp_outcome_free(&o);
        printf("%s - the 64 KiB limits on a line\n", check_failures > before ? "not ok" : "ok");
    }
    return check_failures ? 1 : 0;
}
