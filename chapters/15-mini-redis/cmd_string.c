/* SPDX-License-Identifier: MIT */
/* cmd_string.c: the string commands (cmd.h), after redis's src/t_string.c
 * at tag 7.0.15: the same checks in the same order, so that a request with
 * two mistakes gets the same one of the two errors back.
 */
#include "cmd.h"

#include "util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Options of SET and GETEX (parseExtendedStringArgumentsOrReply). */
enum {
    SET_NX = 1 << 0,
    SET_XX = 1 << 1,
    SET_EX = 1 << 2,
    SET_PX = 1 << 3,
    SET_KEEPTTL = 1 << 4,
    SET_GET = 1 << 5,
    SET_EXAT = 1 << 6,
    SET_PXAT = 1 << 7,
    SET_PERSIST = 1 << 8,
};
#define SET_ANY_TIME (SET_EX | SET_PX | SET_EXAT | SET_PXAT)

/* Each option may come once its rivals have not: "EX 10 PX 10" is a syntax
 * error, "EX 10 EX 20" is not (the last one counts), as in Redis. is_set:
 * SET's options (from word 3), else GETEX's (from word 2). */
static bool string__options(struct client *c, bool is_set, int *flags, int *expire_arg)
{
    for (int j = is_set ? 3 : 2; j < c->argc; j++) {
        const char *o = arg(c, j);
        bool next = j < c->argc - 1;
        int f = *flags;

        if (!strcasecmp(o, "NX") && !(f & SET_XX) && is_set) {
            *flags |= SET_NX;
        } else if (!strcasecmp(o, "XX") && !(f & SET_NX) && is_set) {
            *flags |= SET_XX;
        } else if (!strcasecmp(o, "GET") && is_set) {
            *flags |= SET_GET;
        } else if (!strcasecmp(o, "KEEPTTL") && !(f & (SET_PERSIST | SET_ANY_TIME)) && is_set) {
            *flags |= SET_KEEPTTL;
        } else if (!strcasecmp(o, "PERSIST") && !is_set && !(f & (SET_ANY_TIME | SET_KEEPTTL))) {
            *flags |= SET_PERSIST;
        } else if (!strcasecmp(o, "EX") &&
                   !(f & (SET_KEEPTTL | SET_PERSIST | SET_EXAT | SET_PX | SET_PXAT)) && next) {
            *flags |= SET_EX;
            *expire_arg = ++j;
        } else if (!strcasecmp(o, "PX") &&
                   !(f & (SET_KEEPTTL | SET_PERSIST | SET_EX | SET_EXAT | SET_PXAT)) && next) {
            *flags |= SET_PX;
            *expire_arg = ++j;
        } else if (!strcasecmp(o, "EXAT") &&
                   !(f & (SET_KEEPTTL | SET_PERSIST | SET_EX | SET_PX | SET_PXAT)) && next) {
            *flags |= SET_EXAT;
            *expire_arg = ++j;
        } else if (!strcasecmp(o, "PXAT") &&
                   !(f & (SET_KEEPTTL | SET_PERSIST | SET_EX | SET_EXAT | SET_PX)) && next) {
            *flags |= SET_PXAT;
            *expire_arg = ++j;
        } else {
            reply_syntax_error(c);
            return false;
        }
    }
    return true;
}

/* getExpireMillisecondsOrReply: the expire time in Unix ms, from the
 * argument's unit (EX/EXAT: seconds) and kind (EX/PX: from now). */
static bool string__expire_ms(struct client *c, int i, int flags, int64_t *when)
{
    long long v;

    if (!arg_ll_or_reply(c, i, &v))
        return false;
    if (v <= 0 || ((flags & (SET_EX | SET_EXAT)) && v > LLONG_MAX / 1000)) {
        reply_expire_time(c);
        return false;
    }
    if (flags & (SET_EX | SET_EXAT))
        v *= 1000;
    if (flags & (SET_EX | SET_PX)) {
        if (v > LLONG_MAX - c->now) { /* Redis adds, then checks <= 0 */
            reply_expire_time(c);
            return false;
        }
        v += c->now;
    }
    *when = v;
    return true;
}

/* getGenericCommand: reply the value (or nil); false after WRONGTYPE. */
static bool string__reply_get(struct client *c)
{
    struct db_entry *e;

    if (!lookup_string(c, 1, &e))
        return false;
    if (e)
        resp_add_bulk(c->out, e->val.str, e->val.len);
    else
        resp_add_null(c->out);
    return true;
}

/* setGenericCommand. setnx: SETNX's replies, 1 and 0, rather than +OK and nil. */
static void string__set(struct client *c, int flags, int val, int expire_arg, bool setnx)
{
    struct db_entry *e;
    int64_t when = 0;
    bool found;

    if (expire_arg && !string__expire_ms(c, expire_arg, flags, &when))
        return;
    if ((flags & SET_GET) && !string__reply_get(c))
        return;
    found = db_lookup(&c->srv->db, arg(c, 1), arg_len(c, 1), c->now) != NULL;
    if (((flags & SET_NX) && found) || ((flags & SET_XX) && !found)) {
        if (!(flags & SET_GET)) {
            if (setnx)
                resp_add_int(c->out, 0);
            else
                resp_add_null(c->out);
        }
        return;
    }
    e = db_set_string(&c->srv->db, arg(c, 1), arg_len(c, 1), arg(c, val), arg_len(c, val),
                      flags & SET_KEEPTTL);
    if (expire_arg)
        db_set_expire(&c->srv->db, e, when);
    if (!(flags & SET_GET)) {
        if (setnx)
            resp_add_int(c->out, 1);
        else
            reply_ok(c);
    }
}

void cmd_set(struct client *c)
{
    int flags = 0, expire_arg = 0;

    if (string__options(c, true, &flags, &expire_arg))
        string__set(c, flags, 2, expire_arg, false);
}

void cmd_setnx(struct client *c)
{
    string__set(c, SET_NX, 2, 0, true);
}

void cmd_setex(struct client *c)
{
    string__set(c, SET_EX, 3, 2, false);
}

void cmd_psetex(struct client *c)
{
    string__set(c, SET_PX, 3, 2, false);
}

void cmd_get(struct client *c)
{
    string__reply_get(c);
}

void cmd_getset(struct client *c)
{
    if (string__reply_get(c))
        db_set_string(&c->srv->db, arg(c, 1), arg_len(c, 1), arg(c, 2), arg_len(c, 2), false);
}

void cmd_getdel(struct client *c)
{
    struct db_entry *e;

    if (!string__reply_get(c))
        return;
    if ((e = db_lookup(&c->srv->db, arg(c, 1), arg_len(c, 1), c->now)))
        db_delete(&c->srv->db, e);
}

void cmd_getex(struct client *c)
{
    int flags = 0, expire_arg = 0;
    struct db_entry *e;
    int64_t when = 0;

    if (!string__options(c, false, &flags, &expire_arg) || !lookup_string(c, 1, &e))
        return;
    if (!e) {
        resp_add_null(c->out);
        return;
    }
    if (expire_arg && !string__expire_ms(c, expire_arg, flags, &when))
        return;
    resp_add_bulk(c->out, e->val.str, e->val.len);
    if ((flags & (SET_EXAT | SET_PXAT)) && when <= c->now)
        db_delete(&c->srv->db, e); /* a time already past: the key goes now */
    else if (expire_arg)
        db_set_expire(&c->srv->db, e, when);
    else if (flags & SET_PERSIST)
        db_persist(&c->srv->db, e);
}

void cmd_mget(struct client *c)
{
    resp_add_array(c->out, c->argc - 1);
    for (int i = 1; i < c->argc; i++) {
        struct db_entry *e = db_lookup(&c->srv->db, arg(c, i), arg_len(c, i), c->now);
        if (e && e->val.type == DB_STRING)
            resp_add_bulk(c->out, e->val.str, e->val.len);
        else
            resp_add_null(c->out); /* a key of another type too: MGET never fails */
    }
}

static void string__mset(struct client *c, bool nx)
{
    if (c->argc % 2 == 0) {
        reply_arity(c);
        return;
    }
    if (nx)
        for (int i = 1; i < c->argc; i += 2)
            if (db_lookup(&c->srv->db, arg(c, i), arg_len(c, i), c->now)) {
                resp_add_int(c->out, 0);
                return;
            }
    for (int i = 1; i < c->argc; i += 2)
        db_set_string(&c->srv->db, arg(c, i), arg_len(c, i), arg(c, i + 1), arg_len(c, i + 1),
                      false);
    if (nx)
        resp_add_int(c->out, 1);
    else
        reply_ok(c);
}

void cmd_mset(struct client *c)
{
    string__mset(c, false);
}

void cmd_msetnx(struct client *c)
{
    string__mset(c, true);
}

/* checkStringLength: the result would pass proto-max-bulk-len (512 MiB). */
static bool string__too_long(struct client *c, long long size, long long append)
{
    if ((unsigned long long)size + (unsigned long long)append > (unsigned long long)RESP_BULK_MAX) {
        resp_add_error(c->out, "string exceeds maximum allowed size (proto-max-bulk-len)");
        return true;
    }
    return false;
}

void cmd_append(struct client *c)
{
    struct db_entry *e;
    size_t len;
    char *s;

    if (!lookup_string(c, 1, &e))
        return;
    if (!e) {
        e = db_set_string(&c->srv->db, arg(c, 1), arg_len(c, 1), arg(c, 2), arg_len(c, 2), false);
    } else {
        if (string__too_long(c, (long long)e->val.len, (long long)arg_len(c, 2)))
            return;
        len = e->val.len + arg_len(c, 2);
        if (!(s = realloc(e->val.str, len + 1)))
            abort();
        memcpy(s + e->val.len, arg(c, 2), arg_len(c, 2));
        e->val.str = s;
        e->val.len = len;
    }
    resp_add_int(c->out, (long long)e->val.len);
}

void cmd_strlen(struct client *c)
{
    struct db_entry *e;

    if (lookup_string(c, 1, &e))
        resp_add_int(c->out, e ? (long long)e->val.len : 0);
}

void cmd_getrange(struct client *c)
{
    long long start, end, len;
    struct db_entry *e;

    if (!arg_ll_or_reply(c, 2, &start) || !arg_ll_or_reply(c, 3, &end) || !lookup_string(c, 1, &e))
        return;
    if (!e) {
        resp_add_bulk(c->out, "", 0);
        return;
    }
    len = (long long)e->val.len;
    if (start < 0 && end < 0 && start > end) {
        resp_add_bulk(c->out, "", 0);
        return;
    }
    if (start < 0)
        start += len;
    if (end < 0)
        end += len;
    if (start < 0)
        start = 0;
    if (end < 0)
        end = 0;
    if (end >= len)
        end = len - 1;
    if (start > end || len == 0)
        resp_add_bulk(c->out, "", 0);
    else
        resp_add_bulk(c->out, e->val.str + start, (size_t)(end - start + 1));
}

void cmd_setrange(struct client *c)
{
    size_t vlen = arg_len(c, 3);
    struct db_entry *e;
    long long offset;
    size_t need;

    if (!arg_ll_or_reply(c, 2, &offset))
        return;
    if (offset < 0) {
        resp_add_error(c->out, "offset is out of range");
        return;
    }
    if (!lookup_string(c, 1, &e))
        return;
    if (!e && vlen == 0) {
        resp_add_int(c->out, 0);
        return;
    }
    if (e && vlen == 0) {
        resp_add_int(c->out, (long long)e->val.len);
        return;
    }
    if (string__too_long(c, offset, (long long)vlen))
        return;
    if (!e)
        e = db_set_string(&c->srv->db, arg(c, 1), arg_len(c, 1), "", 0, false);
    need = (size_t)offset + vlen;
    if (need > e->val.len) { /* the gap, if any, is zeros */
        char *s = realloc(e->val.str, need + 1);
        if (!s)
            abort();
        memset(s + e->val.len, 0, need - e->val.len);
        e->val.str = s;
        e->val.len = need;
    }
    memcpy(e->val.str + offset, arg(c, 3), vlen);
    resp_add_int(c->out, (long long)e->val.len);
}

/* incrDecrCommand */
static void string__incr(struct client *c, long long incr)
{
    long long value = 0;
    struct db_entry *e;
    char buf[32];
    int n;

    if (!lookup_string(c, 1, &e))
        return;
    if (e && !util_str_to_ll(e->val.str, e->val.len, &value)) {
        reply_not_integer(c);
        return;
    }
    if ((incr < 0 && value < 0 && incr < LLONG_MIN - value) ||
        (incr > 0 && value > 0 && incr > LLONG_MAX - value)) {
        resp_add_error(c->out, "increment or decrement would overflow");
        return;
    }
    value += incr;
    n = snprintf(buf, sizeof(buf), "%lld", value);
    db_set_string(&c->srv->db, arg(c, 1), arg_len(c, 1), buf, (size_t)n, true);
    resp_add_int(c->out, value);
}

void cmd_incr(struct client *c)
{
    string__incr(c, 1);
}

void cmd_decr(struct client *c)
{
    string__incr(c, -1);
}

void cmd_incrby(struct client *c)
{
    long long incr;

    if (arg_ll_or_reply(c, 2, &incr))
        string__incr(c, incr);
}

void cmd_decrby(struct client *c)
{
    long long incr;

    if (!arg_ll_or_reply(c, 2, &incr))
        return;
    if (incr == LLONG_MIN) { /* -incr would overflow */
        resp_add_error(c->out, "decrement would overflow");
        return;
    }
    string__incr(c, -incr);
}

void cmd_incrbyfloat(struct client *c)
{
    long double value = 0, incr;
    struct db_entry *e;
    char buf[5 * 1024];
    size_t n;

    if (!lookup_string(c, 1, &e))
        return;
    if ((e && !util_str_to_ld(e->val.str, e->val.len, &value)) ||
        !util_str_to_ld(arg(c, 2), arg_len(c, 2), &incr)) {
        resp_add_error(c->out, "value is not a valid float");
        return;
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        resp_add_error(c->out, "increment would produce NaN or Infinity");
        return;
    }
    n = util_ld_to_str(buf, sizeof(buf), value);
    db_set_string(&c->srv->db, arg(c, 1), arg_len(c, 1), buf, n, true);
    resp_add_bulk(c->out, buf, n);
}
