/* SPDX-License-Identifier: MIT */
/* cmd_list.c: the list commands (cmd.h), after redis's src/t_list.c at tag
 * 7.0.15: the same checks in the same order (an option before the key's
 * type, or after, as there), so that a request with two mistakes gets the
 * same one of the two errors back. A list is a deque (deque.h); a list
 * left with no element is deleted at once, so that no command ever finds
 * an empty one: EXISTS, TYPE and the blocking pops can rely on it.
 */
#include "blocked.h"
#include "cmd.h"
#include "util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool lookup_list(struct client *c, int i, struct db_entry **e)
{
    *e = db_lookup(&c->srv->db, arg(c, i), arg_len(c, i), c->now);
    if (*e && (*e)->val.type != DB_LIST) {
        reply_wrongtype(c);
        return false;
    }
    return true;
}

struct db_entry *list_create(struct server_state *srv, const char *key, size_t klen)
{
    blocked_signal(srv, key, klen); /* dbAdd's signalKeyAsReady */
    return db_add_list(&srv->db, key, klen);
}

static void list__delete_if_empty(struct client *c, struct db_entry *e)
{
    if (e->val.list.len == 0)
        db_delete(&c->srv->db, e);
}

static void list__reply_item(struct client *c, const struct deque_item *it)
{
    resp_add_bulk(c->out, it->data, it->len);
}

void list_pop_reply(struct client *c, struct db_entry *e, enum deque_end from, long long count)
{
    struct deque *d = &e->val.list;

    if (count >= 0) {
        long long n = count < (long long)d->len ? count : (long long)d->len;
        resp_add_array(c->out, n);
        while (n-- > 0) {
            struct deque_item *it = deque_pop(d, from);
            list__reply_item(c, it);
            free(it);
        }
    } else {
        struct deque_item *it = deque_pop(d, from);
        list__reply_item(c, it);
        free(it);
    }
    list__delete_if_empty(c, e);
}

void list_move_push(struct client *c, struct db_entry *d, const char *dst, size_t dst_len,
                    struct deque_item *it, enum deque_end to)
{
    if (!d)
        d = list_create(c->srv, dst, dst_len);
    list__reply_item(c, it);
    deque_push(&d->val.list, to, it);
}

/* LEFT or RIGHT (getListPositionFromObjectOrReply). */
static bool list__end(struct client *c, int i, enum deque_end *end)
{
    if (!strcasecmp(arg(c, i), "left"))
        *end = DEQUE_HEAD;
    else if (!strcasecmp(arg(c, i), "right"))
        *end = DEQUE_TAIL;
    else {
        reply_syntax_error(c);
        return false;
    }
    return true;
}

/* getRangeLongFromObjectOrReply(c, o, 1 or 0, LONG_MAX, msg): msg for a
 * number below min and for anything that is not a number. */
static bool list__at_least(struct client *c, int i, long long min, const char *msg, long long *out)
{
    if (!util_str_to_ll(arg(c, i), arg_len(c, i), out) || *out < min) {
        resp_add_error(c->out, "%s", msg);
        return false;
    }
    return true;
}

/* ---- push and pop ----------------------------------------------------------------- */

/* pushGenericCommand (xx: pushxGenericCommand, for a list that exists). */
static void list__push(struct client *c, enum deque_end end, bool xx)
{
    struct db_entry *e;

    if (!lookup_list(c, 1, &e))
        return;
    if (!e && xx) {
        resp_add_int(c->out, 0);
        return;
    }
    if (!e)
        e = list_create(c->srv, arg(c, 1), arg_len(c, 1));
    for (int j = 2; j < c->argc; j++)
        deque_push(&e->val.list, end, deque_item_new(arg(c, j), arg_len(c, j)));
    resp_add_int(c->out, (long long)e->val.list.len);
}

void cmd_lpush(struct client *c)
{
    list__push(c, DEQUE_HEAD, false);
}

void cmd_rpush(struct client *c)
{
    list__push(c, DEQUE_TAIL, false);
}

void cmd_lpushx(struct client *c)
{
    list__push(c, DEQUE_HEAD, true);
}

void cmd_rpushx(struct client *c)
{
    list__push(c, DEQUE_TAIL, true);
}

/* popGenericCommand: LPOP key [count]. With a count the reply is an array
 * (a null one for a missing key), without it one bulk string. */
static void list__pop(struct client *c, enum deque_end end)
{
    long long count = -1;
    struct db_entry *e;

    if (c->argc > 3) {
        reply_arity(c);
        return;
    }
    if (c->argc == 3 && !list__at_least(c, 2, 0, "value is out of range, must be positive", &count))
        return;
    if (!lookup_list(c, 1, &e))
        return;
    if (!e) {
        if (count >= 0)
            resp_add_array(c->out, -1);
        else
            resp_add_null(c->out);
        return;
    }
    if (count == 0) {
        resp_add_array(c->out, 0);
        return;
    }
    list_pop_reply(c, e, end, count);
}

void cmd_lpop(struct client *c)
{
    list__pop(c, DEQUE_HEAD);
}

void cmd_rpop(struct client *c)
{
    list__pop(c, DEQUE_TAIL);
}

/* ---- reading and changing a list in place --------------------------------------------- */

void cmd_llen(struct client *c)
{
    struct db_entry *e;

    if (lookup_list(c, 1, &e))
        resp_add_int(c->out, e ? (long long)e->val.list.len : 0);
}

/* LRANGE's and LTRIM's indexes: negative ones count from the end; the
 * range [start, end] clamped to the list, or empty (start > end). */
static bool list__range(long long len, long long *start, long long *end)
{
    if (*start < 0)
        *start += len;
    if (*end < 0)
        *end += len;
    if (*start < 0)
        *start = 0;
    if (*start > *end || *start >= len)
        return false;
    if (*end >= len)
        *end = len - 1;
    return true;
}

void cmd_lrange(struct client *c)
{
    long long start, end;
    struct db_entry *e;

    if (!arg_ll_or_reply(c, 2, &start) || !arg_ll_or_reply(c, 3, &end) || !lookup_list(c, 1, &e))
        return;
    if (!e || !list__range((long long)e->val.list.len, &start, &end)) {
        resp_add_array(c->out, 0);
        return;
    }
    resp_add_array(c->out, end - start + 1);
    for (long long i = start; i <= end; i++)
        list__reply_item(c, deque_at(&e->val.list, (size_t)i));
}

void cmd_ltrim(struct client *c)
{
    long long start, end, len;
    struct db_entry *e;

    if (!arg_ll_or_reply(c, 2, &start) || !arg_ll_or_reply(c, 3, &end) || !lookup_list(c, 1, &e))
        return;
    if (e) {
        len = (long long)e->val.list.len;
        if (!list__range(len, &start, &end)) /* out of range: nothing is kept */
            start = len, end = len - 1;
        for (long long i = 0; i < start; i++)
            free(deque_pop(&e->val.list, DEQUE_HEAD));
        for (long long i = end + 1; i < len; i++)
            free(deque_pop(&e->val.list, DEQUE_TAIL));
        list__delete_if_empty(c, e);
    }
    reply_ok(c);
}

/* An index of LINDEX or LSET: negative counts from the end. */
static bool list__index(const struct deque *d, long long index, size_t *at)
{
    if (index < 0)
        index += (long long)d->len;
    if (index < 0 || index >= (long long)d->len)
        return false;
    *at = (size_t)index;
    return true;
}

void cmd_lindex(struct client *c)
{
    long long index;
    struct db_entry *e;
    size_t at;

    if (!lookup_list(c, 1, &e))
        return;
    if (!e) {
        resp_add_null(c->out);
        return;
    }
    if (!arg_ll_or_reply(c, 2, &index))
        return;
    if (list__index(&e->val.list, index, &at))
        list__reply_item(c, deque_at(&e->val.list, at));
    else
        resp_add_null(c->out);
}

void cmd_lset(struct client *c)
{
    long long index;
    struct db_entry *e;
    size_t at;

    if (!lookup_list(c, 1, &e))
        return;
    if (!e) {
        resp_add_error(c->out, "no such key");
        return;
    }
    if (!arg_ll_or_reply(c, 2, &index))
        return;
    if (!list__index(&e->val.list, index, &at)) {
        resp_add_error(c->out, "index out of range");
        return;
    }
    deque_set(&e->val.list, at, deque_item_new(arg(c, 3), arg_len(c, 3)));
    reply_ok(c);
}

void cmd_linsert(struct client *c)
{
    struct db_entry *e;
    bool after;

    if (!strcasecmp(arg(c, 2), "after"))
        after = true;
    else if (!strcasecmp(arg(c, 2), "before"))
        after = false;
    else {
        reply_syntax_error(c);
        return;
    }
    if (!lookup_list(c, 1, &e))
        return;
    if (!e) {
        resp_add_int(c->out, 0);
        return;
    }
    for (size_t i = 0; i < e->val.list.len; i++)
        if (deque_item_equal(deque_at(&e->val.list, i), arg(c, 3), arg_len(c, 3))) {
            deque_insert(&e->val.list, i + after, deque_item_new(arg(c, 4), arg_len(c, 4)));
            resp_add_int(c->out, (long long)e->val.list.len);
            return;
        }
    resp_add_int(c->out, -1); /* no pivot */
}

void cmd_lrem(struct client *c)
{
    long long count;
    struct db_entry *e;
    size_t removed;

    if (!arg_ll_or_reply(c, 2, &count) || !lookup_list(c, 1, &e))
        return;
    if (!e) {
        resp_add_int(c->out, 0);
        return;
    }
    removed = deque_remove_equal(&e->val.list, arg(c, 3), arg_len(c, 3), count);
    list__delete_if_empty(c, e);
    resp_add_int(c->out, (long long)removed);
}

/* LPOS key element [RANK rank] [COUNT num] [MAXLEN len] (lposCommand). A
 * negative rank searches from the tail; RANK -9223372036854775808 stays
 * negative when Redis negates it, and so matches the first element found
 * from the tail: the same wrap is kept here. */
void cmd_lpos(struct client *c)
{
    long long rank = 1, count = -1, maxlen = 0, matches = 0, found = 0, len;
    bool from_tail = false;
    struct buf hits = BUF_INIT; /* the positions, before their count is known */
    struct db_entry *e;

    for (int j = 3; j < c->argc; j++) {
        const char *o = arg(c, j);
        bool more = j < c->argc - 1;

        if (!strcasecmp(o, "rank") && more) {
            if (!arg_ll_or_reply(c, ++j, &rank))
                return;
            if (rank == 0) {
                resp_add_error(c->out, "RANK can't be zero: use 1 to start from the first match, "
                                       "2 from the second ... or use negative to start from the "
                                       "end of the list");
                return;
            }
        } else if (!strcasecmp(o, "count") && more) {
            if (!list__at_least(c, ++j, 0, "COUNT can't be negative", &count))
                return;
        } else if (!strcasecmp(o, "maxlen") && more) {
            if (!list__at_least(c, ++j, 0, "MAXLEN can't be negative", &maxlen))
                return;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    if (rank < 0) {
        rank = (long long)(0 - (unsigned long long)rank);
        from_tail = true;
    }
    if (!lookup_list(c, 1, &e))
        return;
    if (!e) {
        if (count >= 0)
            resp_add_array(c->out, 0);
        else
            resp_add_null(c->out);
        return;
    }
    len = (long long)e->val.list.len;
    for (long long i = 0; i < len && (maxlen == 0 || i < maxlen); i++) {
        long long at = from_tail ? len - 1 - i : i;
        if (!deque_item_equal(deque_at(&e->val.list, (size_t)at), arg(c, 2), arg_len(c, 2)))
            continue;
        if (++matches < rank)
            continue;
        if (count < 0) {
            resp_add_int(c->out, at);
            return;
        }
        resp_add_int(&hits, at);
        found++;
        if (count && matches - rank + 1 >= count)
            break;
    }
    if (count < 0) {
        resp_add_null(c->out);
        return;
    }
    resp_add_array(c->out, found);
    buf_append(c->out, buf_peek(&hits), buf_len(&hits));
    buf_free(&hits);
}

/* ---- moving between lists ------------------------------------------------------------ */

/* lmoveGenericCommand: the source's type is checked, then the
 * destination's, before anything moves. */
static void list__move(struct client *c, enum deque_end from, enum deque_end to)
{
    struct db_entry *s, *d;

    if (!lookup_list(c, 1, &s))
        return;
    if (!s) {
        resp_add_null(c->out);
        return;
    }
    if (!lookup_list(c, 2, &d))
        return;
    list_move_push(c, d, arg(c, 2), arg_len(c, 2), deque_pop(&s->val.list, from), to);
    list__delete_if_empty(c, s); /* after the push: the source may be the destination */
}

void cmd_lmove(struct client *c)
{
    enum deque_end from, to;

    if (list__end(c, 3, &from) && list__end(c, 4, &to))
        list__move(c, from, to);
}

void cmd_rpoplpush(struct client *c)
{
    list__move(c, DEQUE_TAIL, DEQUE_HEAD);
}

/* LMPOP and BLMPOP's arguments: numkeys key... LEFT|RIGHT [COUNT count],
 * from word `first` (lmpopGenericCommand). */
static bool list__mpop_args(struct client *c, int first, long long *numkeys, enum deque_end *end,
                            long long *count)
{
    long long where;

    *count = -1;
    if (!list__at_least(c, first, 1, "numkeys should be greater than 0", numkeys))
        return false;
    where = first + *numkeys + 1;
    if (where >= c->argc) {
        reply_syntax_error(c);
        return false;
    }
    if (!list__end(c, (int)where, end))
        return false;
    for (int j = (int)where + 1; j < c->argc; j++) {
        if (*count == -1 && !strcasecmp(arg(c, j), "count") && j < c->argc - 1) {
            if (!list__at_least(c, ++j, 1, "count should be greater than 0", count))
                return false;
        } else {
            reply_syntax_error(c);
            return false;
        }
    }
    if (*count == -1)
        *count = 1;
    return true;
}

/* The first of keys [first, first + n) that holds a list: *e is it, or NULL.
 * false after WRONGTYPE (a key of another type before any list). */
static bool list__first_list(struct client *c, int first, long long n, struct db_entry **e, int *at)
{
    *e = NULL;
    *at = first;
    for (int i = first; i < first + n; i++) {
        if (!lookup_list(c, i, e))
            return false;
        if (*e) {
            *at = i;
            return true;
        }
    }
    return true;
}

void cmd_lmpop(struct client *c)
{
    long long numkeys, count;
    enum deque_end end;
    struct db_entry *e;
    int at;

    if (!list__mpop_args(c, 1, &numkeys, &end, &count) || !list__first_list(c, 2, numkeys, &e, &at))
        return;
    if (!e) {
        resp_add_array(c->out, -1);
        return;
    }
    resp_add_array(c->out, 2);
    resp_add_bulk(c->out, arg(c, at), arg_len(c, at));
    list_pop_reply(c, e, end, count);
}

/* ---- blocking pops ---------------------------------------------------------------- */

/* getTimeoutFromObjectOrReply (src/timeout.c) in seconds: a long double,
 * times 1000, rounded up (1e-10 waits 1 ms; -0.0001 rounds to 0, for ever)
 * and converted to a long long. A product too large for that (1e100, inf)
 * becomes LLONG_MIN on x86-64, as the conversion there gives, so Redis
 * answers "timeout is negative"; so does mini-redis. Redis 7.0 has no upper
 * bound: a deadline past the end of time waits for ever, here as there. */
static bool list__timeout(struct client *c, int i, int64_t *ms)
{
    long double secs, prod;
    long long t;

    if (!util_str_to_ld(arg(c, i), arg_len(c, i), &secs)) {
        resp_add_error(c->out, "timeout is not a float or out of range");
        return false;
    }
    prod = ceill(secs * 1000.0L);
    t = prod > -9223372036854775808.0L && prod < 9223372036854775808.0L ? (long long)prod
                                                                        : LLONG_MIN;
    if (t < 0) {
        resp_add_error(c->out, "timeout is negative");
        return false;
    }
    *ms = t > LLONG_MAX - c->now ? 0 : t;
    return true;
}

/* Nothing to pop: block on the keys, or, inside EXEC, where nothing may
 * wait, answer as a timeout does (a null array) at once. */
static struct block *list__block(struct client *c, int first, int nkeys, enum block_op op,
                                 int64_t ms)
{
    struct block *b;

    if (c->deny_blocking) {
        resp_add_array(c->out, -1);
        return NULL;
    }
    b = blocked_new(c, first, nkeys, op);
    b->timeout_ms = ms;
    blocked_add(c, b);
    return b;
}

/* blockingPopGenericCommand: BLPOP/BRPOP key [key ...] timeout. */
static void list__bpop(struct client *c, enum deque_end from)
{
    struct db_entry *e;
    struct block *b;
    int64_t ms;
    int at;

    if (!list__timeout(c, c->argc - 1, &ms) || !list__first_list(c, 1, c->argc - 2, &e, &at))
        return;
    if (e) {
        resp_add_array(c->out, 2);
        resp_add_bulk(c->out, arg(c, at), arg_len(c, at));
        list_pop_reply(c, e, from, -1);
        return;
    }
    if ((b = list__block(c, 1, c->argc - 2, BLOCK_POP, ms)))
        b->from = from;
}

void cmd_blpop(struct client *c)
{
    list__bpop(c, DEQUE_HEAD);
}

void cmd_brpop(struct client *c)
{
    list__bpop(c, DEQUE_TAIL);
}

/* blmoveGenericCommand: with nothing in the source, a null bulk inside
 * EXEC (not the null array of a timeout: Redis's own difference). */
static void list__bmove(struct client *c, enum deque_end from, enum deque_end to, int timeout)
{
    struct db_entry *s;
    struct block *b;
    int64_t ms;

    if (!list__timeout(c, timeout, &ms) || !lookup_list(c, 1, &s))
        return;
    if (s) {
        list__move(c, from, to);
        return;
    }
    if (c->deny_blocking) {
        resp_add_null(c->out);
        return;
    }
    b = list__block(c, 1, 1, BLOCK_MOVE, ms);
    b->from = from;
    b->to = to;
    b->dst_len = arg_len(c, 2);
    if (!(b->dst = malloc(b->dst_len + 1))) {
        fprintf(stderr, "mini-redis: out of memory for a BLMOVE\n");
        exit(1);
    }
    memcpy(b->dst, arg(c, 2), b->dst_len + 1);
}

void cmd_blmove(struct client *c)
{
    enum deque_end from, to;

    if (list__end(c, 3, &from) && list__end(c, 4, &to))
        list__bmove(c, from, to, 5);
}

void cmd_brpoplpush(struct client *c)
{
    list__bmove(c, DEQUE_TAIL, DEQUE_HEAD, 3);
}

/* BLMPOP timeout numkeys key... LEFT|RIGHT [COUNT count]: the arguments
 * are read before the timeout, as Redis does. */
void cmd_blmpop(struct client *c)
{
    long long numkeys, count;
    enum deque_end end;
    struct db_entry *e;
    struct block *b;
    int64_t ms;
    int at;

    if (!list__mpop_args(c, 2, &numkeys, &end, &count) || !list__timeout(c, 1, &ms) ||
        !list__first_list(c, 3, numkeys, &e, &at))
        return;
    if (e) {
        resp_add_array(c->out, 2);
        resp_add_bulk(c->out, arg(c, at), arg_len(c, at));
        list_pop_reply(c, e, end, count);
        return;
    }
    if ((b = list__block(c, 3, (int)numkeys, BLOCK_MPOP, ms))) {
        b->from = end;
        b->count = count;
    }
}
