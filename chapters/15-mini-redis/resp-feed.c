/* SPDX-License-Identifier: MIT */
/* resp-feed.c: the parser driven as mini-redis drives it (resp-feed.h). */
#include "resp-feed.h"

#include "resp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void outcome__add(struct resp_outcome *o, const char *s, size_t n)
{
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        char *t;

        while (o->len + n + 1 > cap)
            cap *= 2;
        if (!(t = realloc(o->text, cap))) {
            fprintf(stderr, "resp-feed: out of memory\n");
            exit(1);
        }
        o->text = t;
        o->cap = cap;
    }
    memcpy(o->text + o->len, s, n);
    o->len += n;
    o->text[o->len] = '\0';
}

/* A whole request: its arguments, each inside the request and followed by
 * the '\0' that resp.h promises. */
static void outcome__request(struct resp_outcome *o, const struct resp_parser *p, const char *req,
                             size_t left)
{
    char tmp[32];

    if (p->used == 0 || p->used > left)
        o->broken = "a request's length is 0, or past the bytes there are";
    for (int i = 0; i < p->argc && !o->broken; i++) {
        const struct resp_arg *a = &p->argv[i];

        if (a->off > p->used || a->len > p->used - a->off) {
            o->broken = "an argument lies outside its request";
        } else if (req[a->off + a->len] != '\0') {
            o->broken = "an argument is not followed by a NUL";
        } else {
            int n = snprintf(tmp, sizeof(tmp), "%zu:", a->len);
            outcome__add(o, tmp, (size_t)n);
            outcome__add(o, req + a->off, a->len);
            outcome__add(o, " ", 1);
        }
    }
    outcome__add(o, "|", 1);
}

void resp_feed(const char *in, size_t len, const size_t *cuts, size_t ncuts, struct resp_outcome *o)
{
    char *buf = malloc(len + 1);
    struct resp_parser p;
    size_t have = 0, pos = 0;

    if (!buf) {
        fprintf(stderr, "resp-feed: out of memory\n");
        exit(1);
    }
    resp_parser_init(&p);
    o->len = 0;
    o->broken = NULL;
    outcome__add(o, "", 0);
    for (size_t k = 0; k <= ncuts; k++) {
        size_t upto = k < ncuts ? cuts[k] : len;

        memcpy(buf + have, in + have, upto - have);
        have = upto;
        for (;;) {
            enum resp_status st = resp_parse(&p, buf + pos, have - pos);

            if (st == RESP_NEED_MORE)
                break;
            if (st == RESP_ERROR) {
                outcome__add(o, "ERROR ", 6);
                outcome__add(o, p.error, strlen(p.error));
                if (!p.error[0])
                    o->broken = "an error with no message";
                goto out;
            }
            outcome__request(o, &p, buf + pos, have - pos);
            if (o->broken)
                goto out;
            pos += p.used;
        }
    }
    if (pos < have)
        outcome__add(o, "INCOMPLETE", 10);
out:
    resp_parser_free(&p);
    free(buf);
}

void resp_outcome_free(struct resp_outcome *o)
{
    free(o->text);
    o->text = NULL;
    o->len = o->cap = 0;
}
