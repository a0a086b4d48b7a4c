/* SPDX-License-Identifier: MIT */
/* pubsub.c: SUBSCRIBE, PSUBSCRIBE, their UNs, PUBLISH and PUBSUB (cmd.h),
 * after redis's src/pubsub.c at tag 7.0.15.
 *
 * Two tables, as in Redis: each channel with its subscriptions, each
 * pattern with its own; and in each client the channels and patterns it
 * holds, so that it can leave them all at once. A subscription is one
 * struct sub, on the channel's queue (the order PUBLISH delivers in) and in
 * the client's table:
 *
 *     srv->channels:  "news" ──► sub(client 3) ─► sub(client 8)
 *     client 8:       sub_channels { "news" ─► that sub }
 *
 * PUBLISH appends the message to each subscriber's output and calls its
 * wake(); it never waits for a subscriber, and never sends anything
 * itself: the subscriber's own task does. What keeps a subscriber that
 * does not read from growing that output for ever is its connection's
 * output limit (mini-redis.c), which cuts it off.
 */
#include "cmd.h"
#include "list.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct sub {
    struct list_node link; /* in the channel's (or pattern's) queue */
    struct dict_entry *in; /* that queue's entry in srv->channels or srv->patterns */
    struct client *c;
};

/* The reply to each (un)subscription: kind, name (NULL: nil), and how
 * many the client holds now. */
static void pubsub__reply(struct client *c, const char *kind, const char *name, size_t len)
{
    resp_add_array(c->out, 3);
    resp_add_bulk(c->out, kind, strlen(kind));
    if (name)
        resp_add_bulk(c->out, name, len);
    else
        resp_add_null(c->out);
    resp_add_int(c->out, (long long)pubsub_count(c));
}

/* The client joins name's queue in `global`; false if it was there. */
static bool pubsub__join(struct client *c, struct dict *global, struct dict *mine, const char *name,
                         size_t len)
{
    struct dict_entry *m = dict_add(mine, name, len), *q;
    struct sub *s;

    if (m->val)
        return false;
    if (!(s = calloc(1, sizeof(*s)))) {
        fprintf(stderr, "mini-redis: out of memory for a subscription\n");
        exit(1);
    }
    q = dict_add(global, name, len);
    if (!q->val) {
        if (!(q->val = malloc(sizeof(struct list_node)))) {
            fprintf(stderr, "mini-redis: out of memory for a channel\n");
            exit(1);
        }
        list_init(q->val);
    }
    list_insert(((struct list_node *)q->val)->prev, &s->link); /* at the tail */
    s->in = q;
    s->c = c;
    m->val = s;
    return true;
}

/* The client leaves the queue of its entry m (of `mine`). */
static void pubsub__leave(struct dict *global, struct dict *mine, struct dict_entry *m)
{
    struct sub *s = m->val;
    struct dict_entry *q = s->in;

    list_remove(&s->link);
    if (list_empty(q->val)) { /* nobody left on it: the channel goes */
        free(q->val);
        dict_delete(global, q);
    }
    free(s);
    dict_delete(mine, m);
}

static void pubsub__subscribe(struct client *c, bool pattern)
{
    for (int i = 1; i < c->argc; i++) {
        pubsub__join(c, pattern ? &c->srv->patterns : &c->srv->channels,
                     pattern ? &c->sub_patterns : &c->sub_channels, arg(c, i), arg_len(c, i));
        pubsub__reply(c, pattern ? "psubscribe" : "subscribe", arg(c, i), arg_len(c, i));
    }
}

void cmd_subscribe(struct client *c)
{
    pubsub__subscribe(c, false);
}

void cmd_psubscribe(struct client *c)
{
    pubsub__subscribe(c, true);
}

/* What an UNSUBSCRIBE with no argument walks: the client's own table. */
struct pubsub_walk {
    struct client *c;
    bool pattern, reply;
};

static void pubsub__leave_one(struct dict_entry *m, void *ctx)
{
    struct pubsub_walk *w = ctx;
    struct client *c = w->c;
    const char *kind = w->pattern ? "punsubscribe" : "unsubscribe";

    if (w->reply) { /* before m goes, with the count after it has gone */
        resp_add_array(c->out, 3);
        resp_add_bulk(c->out, kind, strlen(kind));
        resp_add_bulk(c->out, m->key, m->klen);
        resp_add_int(c->out, (long long)pubsub_count(c) - 1);
    }
    pubsub__leave(w->pattern ? &c->srv->patterns : &c->srv->channels,
                  w->pattern ? &c->sub_patterns : &c->sub_channels, m);
}

/* UNSUBSCRIBE [channel ...]: every channel named, held or not; or, with
 * none named, every channel held, in the order of the client's table (Redis
 * walks its dict: the order differs, the set does not), or a nil. */
static void pubsub__unsubscribe(struct client *c, bool pattern)
{
    struct dict *mine = pattern ? &c->sub_patterns : &c->sub_channels;
    const char *kind = pattern ? "punsubscribe" : "unsubscribe";

    if (c->argc == 1) {
        struct pubsub_walk w = {c, pattern, true};
        if (mine->count == 0)
            pubsub__reply(c, kind, NULL, 0);
        else
            dict_foreach(mine, pubsub__leave_one, &w);
        return;
    }
    for (int i = 1; i < c->argc; i++) {
        struct dict_entry *m = dict_find(mine, arg(c, i), arg_len(c, i));
        if (m)
            pubsub__leave(pattern ? &c->srv->patterns : &c->srv->channels, mine, m);
        pubsub__reply(c, kind, arg(c, i), arg_len(c, i));
    }
}

void cmd_unsubscribe(struct client *c)
{
    pubsub__unsubscribe(c, false);
}

void cmd_punsubscribe(struct client *c)
{
    pubsub__unsubscribe(c, true);
}

void pubsub_forget(struct client *c)
{
    struct pubsub_walk w = {c, false, false};

    dict_foreach(&c->sub_channels, pubsub__leave_one, &w);
    w.pattern = true;
    dict_foreach(&c->sub_patterns, pubsub__leave_one, &w);
}

/* ---- PUBLISH ------------------------------------------------------------------------ */

/* snippet: publish */
/* One message into a subscriber's output, then its wake(), which also
 * applies the output limit. A client already cut off gets nothing more,
 * but counts as a receiver, as in Redis. */
static void pubsub__deliver(struct client *s, const char *pattern, size_t plen, struct client *c)
{
    if (s->killed)
        return;
    resp_add_array(s->out, pattern ? 4 : 3);
    if (pattern) {
        resp_add_bulk(s->out, "pmessage", 8);
        resp_add_bulk(s->out, pattern, plen);
    } else {
        resp_add_bulk(s->out, "message", 7);
    }
    resp_add_bulk(s->out, arg(c, 1), arg_len(c, 1));
    resp_add_bulk(s->out, arg(c, 2), arg_len(c, 2));
    s->wake(s);
}

struct pubsub_publish {
    struct client *c;
    long long receivers;
};

static void pubsub__match(struct dict_entry *q, void *ctx)
{
    struct pubsub_publish *p = ctx;
    struct list_node *n;

    if (!util_glob_match(q->key, q->klen, arg(p->c, 1), arg_len(p->c, 1)))
        return;
    list_for_each(n, (struct list_node *)q->val) {
        pubsub__deliver(list_entry(n, struct sub, link)->c, q->key, q->klen, p->c);
        p->receivers++;
    }
}

/* pubsubPublishMessage: the channel's subscribers in the order they came,
 * then every pattern that matches, each with its subscribers. */
void cmd_publish(struct client *c)
{
    struct dict_entry *q = dict_find(&c->srv->channels, arg(c, 1), arg_len(c, 1));
    struct pubsub_publish p = {c, 0};
    struct list_node *n;

    if (q)
        list_for_each(n, (struct list_node *)q->val) {
            pubsub__deliver(list_entry(n, struct sub, link)->c, NULL, 0, c);
            p.receivers++;
        }
    dict_foreach(&c->srv->patterns, pubsub__match, &p);
    resp_add_int(c->out, p.receivers);
}
/* end snippet */

/* ---- PUBSUB ------------------------------------------------------------------------- */

struct pubsub_channels {
    struct client *c;
    const char *pattern; /* NULL: every channel */
    size_t plen;
    struct buf names;
    long long n;
};

static void pubsub__channel(struct dict_entry *q, void *ctx)
{
    struct pubsub_channels *w = ctx;

    if (w->pattern && !util_glob_match(w->pattern, w->plen, q->key, q->klen))
        return;
    resp_add_bulk(&w->names, q->key, q->klen);
    w->n++;
}

/* PUBSUB CHANNELS [pattern]: the channels with a subscriber (not the
 * patterns). */
void cmd_pubsub_channels(struct client *c)
{
    struct pubsub_channels w = {.c = c, .names = BUF_INIT};

    if (c->argc > 3) { /* addReplySubcommandSyntaxError */
        resp_add_error(c->out, "unknown subcommand or wrong number of arguments for 'channels'. "
                               "Try PUBSUB HELP.");
        return;
    }
    if (c->argc == 3) {
        w.pattern = arg(c, 2);
        w.plen = arg_len(c, 2);
    }
    dict_foreach(&c->srv->channels, pubsub__channel, &w);
    resp_add_array(c->out, w.n);
    buf_append(c->out, buf_peek(&w.names), buf_len(&w.names));
    buf_free(&w.names);
}

void cmd_pubsub_numsub(struct client *c)
{
    resp_add_array(c->out, 2LL * (c->argc - 2));
    for (int i = 2; i < c->argc; i++) {
        struct dict_entry *q = dict_find(&c->srv->channels, arg(c, i), arg_len(c, i));
        long long n = 0;
        struct list_node *node;

        if (q)
            list_for_each(node, (struct list_node *)q->val)
                n++;
        resp_add_bulk(c->out, arg(c, i), arg_len(c, i));
        resp_add_int(c->out, n);
    }
}

/* The patterns with a subscriber, each counted once (Redis 7.0 counts
 * its dict of patterns). */
void cmd_pubsub_numpat(struct client *c)
{
    resp_add_int(c->out, (long long)c->srv->patterns.count);
}
