/* SPDX-License-Identifier: MIT */
/* cmd_keys.c: the commands on keys whatever their type (cmd.h), after
 * redis's src/db.c (DEL, EXISTS, KEYS, SCAN, RENAME...) and src/expire.c
 * (EXPIRE and its kin, TTL, PERSIST) at tag 7.0.15.
 */
#include "cmd.h"

#include "blocked.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void cmd_del(struct client *c)
{
    long long n = 0;

    for (int i = 1; i < c->argc; i++) {
        struct db_entry *e = db_lookup(&c->srv->db, arg(c, i), arg_len(c, i), c->now);
        if (e) {
            db_delete(&c->srv->db, e);
            n++;
        }
    }
    resp_add_int(c->out, n);
}

void cmd_exists(struct client *c)
{
    long long n = 0;

    for (int i = 1; i < c->argc; i++) /* a key named twice counts twice */
        n += db_lookup(&c->srv->db, arg(c, i), arg_len(c, i), c->now) != NULL;
    resp_add_int(c->out, n);
}

void cmd_type(struct client *c)
{
    struct db_entry *e = db_lookup(&c->srv->db, arg(c, 1), arg_len(c, 1), c->now);

    resp_add_simple(c->out, e ? db_type_name(e->val.type) : "none");
}

/* ---- KEYS and SCAN ---------------------------------------------------------------- */

/* The keys one pass found, before they are filtered and replied. */
struct keys_found {
    struct db_entry **v;
    size_t n, cap;
    const char *pattern; /* NULL: every key */
    size_t plen;
};

static void keys__push(struct db_entry *e, void *arg)
{
    struct keys_found *k = arg;

    if (k->pattern && !util_glob_match(k->pattern, k->plen, e->key, e->klen))
        return;
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 16;
        if (!(k->v = realloc(k->v, k->cap * sizeof(*k->v))))
            abort();
    }
    k->v[k->n++] = e;
}

static bool keys__all(const char *pattern, size_t plen)
{
    return plen == 1 && pattern[0] == '*';
}

void cmd_keys(struct client *c)
{
    struct keys_found k = {0};
    size_t live = 0;

    if (!keys__all(arg(c, 1), arg_len(c, 1))) {
        k.pattern = arg(c, 1);
        k.plen = arg_len(c, 1);
    }
    db_foreach(&c->srv->db, keys__push, &k);
    for (size_t i = 0; i < k.n; i++) /* an expired key is not shown, nor deleted, by KEYS */
        live += !db_expired(k.v[i], c->now);
    resp_add_array(c->out, (long long)live);
    for (size_t i = 0; i < k.n; i++)
        if (!db_expired(k.v[i], c->now))
            resp_add_bulk(c->out, k.v[i]->key, k.v[i]->klen);
    free(k.v);
}

/* SCAN cursor [MATCH pattern] [COUNT count] [TYPE type] (scanGenericCommand):
 * visit buckets until COUNT keys are found or ten times COUNT buckets were
 * seen, then filter by pattern, type and expiry. */
void cmd_scan(struct client *c)
{
    struct keys_found k = {0};
    unsigned long cursor;
    long long count = 10, iterations;
    const char *type = NULL;
    char *end, tmp[32];
    size_t live = 0;
    int n;

    errno = 0;
    cursor = strtoul(arg(c, 1), &end, 10);
    if (arg(c, 1)[0] == ' ' || (arg(c, 1)[0] >= '\t' && arg(c, 1)[0] <= '\r') || *end != '\0' ||
        errno == ERANGE) {
        resp_add_error(c->out, "invalid cursor");
        return;
    }
    for (int i = 2; i < c->argc; i += 2) {
        const char *o = arg(c, i);
        if (!strcasecmp(o, "count") && c->argc - i >= 2) {
            if (!arg_ll_or_reply(c, i + 1, &count))
                return;
            if (count < 1) {
                reply_syntax_error(c);
                return;
            }
        } else if (!strcasecmp(o, "match") && c->argc - i >= 2) {
            k.pattern = arg(c, i + 1);
            k.plen = arg_len(c, i + 1);
            if (keys__all(k.pattern, k.plen))
                k.pattern = NULL;
        } else if (!strcasecmp(o, "type") && c->argc - i >= 2) {
            type = arg(c, i + 1);
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    iterations = count * 10;
    do
        cursor = db_scan(&c->srv->db, cursor, keys__push, &k);
    while (cursor && iterations-- && k.n < (size_t)count);
    for (size_t i = 0; i < k.n; i++) {
        struct db_entry *e = k.v[i];
        if (type && strcasecmp(type, db_type_name(e->val.type)) != 0)
            k.v[i] = NULL;
        else if (db_expired(e, c->now)) { /* SCAN, unlike KEYS, deletes what it finds expired */
            db_delete(&c->srv->db, e);
            c->srv->db.expired++;
            k.v[i] = NULL;
        } else
            live++;
    }
    n = snprintf(tmp, sizeof(tmp), "%lu", cursor);
    resp_add_array(c->out, 2);
    resp_add_bulk(c->out, tmp, (size_t)n);
    resp_add_array(c->out, (long long)live);
    for (size_t i = 0; i < k.n; i++)
        if (k.v[i])
            resp_add_bulk(c->out, k.v[i]->key, k.v[i]->klen);
    free(k.v);
}

/* ---- RENAME ---------------------------------------------------------------------- */

static void keys__rename(struct client *c, bool nx)
{
    struct db *db = &c->srv->db;
    struct db_entry *e, *to;

    if (!(e = db_lookup(db, arg(c, 1), arg_len(c, 1), c->now))) {
        resp_add_error(c->out, "no such key");
        return;
    }
    if (arg_len(c, 1) == arg_len(c, 2) && memcmp(arg(c, 1), arg(c, 2), arg_len(c, 1)) == 0) {
        if (nx)
            resp_add_int(c->out, 0);
        else
            reply_ok(c);
        return;
    }
    if ((to = db_lookup(db, arg(c, 2), arg_len(c, 2), c->now))) {
        if (nx) {
            resp_add_int(c->out, 0);
            return;
        }
        db_delete(db, to);
    }
    if (db_rename(db, e, arg(c, 2), arg_len(c, 2))->val.type == DB_LIST)
        blocked_signal(c->srv, arg(c, 2), arg_len(c, 2)); /* a list arrives: serve its waiters */
    if (nx)
        resp_add_int(c->out, 1);
    else
        reply_ok(c);
}

void cmd_rename(struct client *c)
{
    keys__rename(c, false);
}

void cmd_renamenx(struct client *c)
{
    keys__rename(c, true);
}

/* ---- expire times ------------------------------------------------------------------- */

enum { EXP_NX = 1, EXP_XX = 2, EXP_GT = 4, EXP_LT = 8 };

/* expireGenericCommand: the time is relative to `base` (now, or 0 for the
 * *AT forms), in seconds or milliseconds. NX XX GT LT came in Redis 7.0. */
static void keys__expire(struct client *c, int64_t base, bool seconds)
{
    struct db *db = &c->srv->db;
    long long when, current;
    struct db_entry *e;
    int flags = 0;

    for (int j = 3; j < c->argc; j++) {
        const char *o = arg(c, j);
        if (!strcasecmp(o, "nx"))
            flags |= EXP_NX;
        else if (!strcasecmp(o, "xx"))
            flags |= EXP_XX;
        else if (!strcasecmp(o, "gt"))
            flags |= EXP_GT;
        else if (!strcasecmp(o, "lt"))
            flags |= EXP_LT;
        else {
            resp_add_error(c->out, "Unsupported option %s", o);
            return;
        }
    }
    if ((flags & EXP_NX) && (flags & (EXP_XX | EXP_GT | EXP_LT))) {
        resp_add_error(c->out, "NX and XX, GT or LT options at the same time are not compatible");
        return;
    }
    if ((flags & EXP_GT) && (flags & EXP_LT)) {
        resp_add_error(c->out, "GT and LT options at the same time are not compatible");
        return;
    }
    if (!arg_ll_or_reply(c, 2, &when))
        return;
    /* Negative times are allowed (the key goes at once); overflow is not. */
    if (seconds && (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000)) {
        reply_expire_time(c);
        return;
    }
    if (seconds)
        when *= 1000;
    if (when > LLONG_MAX - base) {
        reply_expire_time(c);
        return;
    }
    when += base;
    if (!(e = db_lookup(db, arg(c, 1), arg_len(c, 1), c->now))) {
        resp_add_int(c->out, 0);
        return;
    }
    current = e->expire_ms;
    if (((flags & EXP_NX) && current != -1) || ((flags & EXP_XX) && current == -1) ||
        ((flags & EXP_GT) && (current == -1 || when <= current)) || /* no TTL: infinite */
        ((flags & EXP_LT) && current != -1 && when >= current)) {
        resp_add_int(c->out, 0);
        return;
    }
    if (when <= c->now)
        db_delete(db, e); /* already in the past: deleted now, as Redis does */
    else
        db_set_expire(db, e, when);
    resp_add_int(c->out, 1);
}

void cmd_expire(struct client *c)
{
    keys__expire(c, c->now, true);
}

void cmd_pexpire(struct client *c)
{
    keys__expire(c, c->now, false);
}

void cmd_expireat(struct client *c)
{
    keys__expire(c, 0, true);
}

void cmd_pexpireat(struct client *c)
{
    keys__expire(c, 0, false);
}

/* ttlGenericCommand: -2 no key, -1 no expire time; else what is left (ms),
 * or when (absolute); seconds are rounded to the nearest. */
static void keys__ttl(struct client *c, bool ms, bool absolute)
{
    struct db_entry *e = db_lookup(&c->srv->db, arg(c, 1), arg_len(c, 1), c->now);
    long long t;

    if (!e) {
        resp_add_int(c->out, -2);
        return;
    }
    if (e->expire_ms < 0) {
        resp_add_int(c->out, -1);
        return;
    }
    t = absolute ? e->expire_ms : e->expire_ms - c->now;
    if (t < 0)
        t = 0;
    resp_add_int(c->out, ms ? t : (t + 500) / 1000);
}

void cmd_ttl(struct client *c)
{
    keys__ttl(c, false, false);
}

void cmd_pttl(struct client *c)
{
    keys__ttl(c, true, false);
}

void cmd_expiretime(struct client *c)
{
    keys__ttl(c, false, true);
}

void cmd_pexpiretime(struct client *c)
{
    keys__ttl(c, true, true);
}

void cmd_persist(struct client *c)
{
    struct db_entry *e = db_lookup(&c->srv->db, arg(c, 1), arg_len(c, 1), c->now);

    resp_add_int(c->out, e && db_persist(&c->srv->db, e));
}

/* ---- the whole key space ------------------------------------------------------------- */

void cmd_randomkey(struct client *c)
{
    struct db_entry *e = db_random(&c->srv->db, c->now);

    if (e)
        resp_add_bulk(c->out, e->key, e->klen);
    else
        resp_add_null(c->out);
}

void cmd_dbsize(struct client *c)
{
    resp_add_int(c->out, (long long)c->srv->db.count); /* expired keys not yet deleted count */
}

/* FLUSHDB and FLUSHALL [ASYNC|SYNC]: one database, so the same thing; the
 * memory is freed at once either way. */
void cmd_flushdb(struct client *c)
{
    if (c->argc > 2 ||
        (c->argc == 2 && strcasecmp(arg(c, 1), "sync") && strcasecmp(arg(c, 1), "async"))) {
        reply_syntax_error(c);
        return;
    }
    db_flush(&c->srv->db);
    reply_ok(c);
}
