/* SPDX-License-Identifier: MIT */
/* db.c: the key space of mini-redis (db.h).
 *
 * A chained hash table whose size is a power of two, doubled when it holds
 * as many keys as buckets and halved when it is less than a tenth full, all
 * at once. Redis rehashes incrementally instead, a few buckets per command,
 * so that a table of millions of keys never stops the loop for the whole
 * copy (src/dict.c, _dictRehashStep); at the sizes of this chapter's tests
 * the whole copy takes well under a millisecond.
 *
 * The hash is FNV-1a over the key, mixed with a seed drawn at start. Redis
 * uses SipHash with a random key (src/siphash.c), which also resists a
 * client that crafts keys to land in one bucket; FNV-1a with a seed only
 * makes that harder, and is far shorter to read.
 */
#include "db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "clock.h"

#define DB_MIN_BUCKETS 16
/* src/expire.c at 7.0.15: ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP and _ACCEPTABLE_STALE */
#define EXPIRE_KEYS_PER_LOOP    20
#define EXPIRE_ACCEPTABLE_STALE 10 /* percent */

static void *db__alloc(size_t size)
{
    void *p = calloc(1, size);

    if (!p) {
        fprintf(stderr, "mini-redis: out of memory (%zu bytes)\n", size);
        exit(1);
    }
    return p;
}

int64_t db_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t db__hash(const struct db *db, const char *key, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ db->seed;

    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)key[i];
        h *= 0x100000001b3ULL;
    }
    return h ^ (h >> 29);
}

static uint64_t db__random(struct db *db)
{
    db->rng ^= db->rng << 13;
    db->rng ^= db->rng >> 7;
    db->rng ^= db->rng << 17;
    return db->rng;
}

void db_init(struct db *db)
{
    uint64_t seed[2];

    memset(db, 0, sizeof(*db));
    if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed)) {
        seed[0] = (uint64_t)clock_now_ns();
        seed[1] = seed[0] * 0x9e3779b97f4a7c15ULL;
    }
    db->seed = seed[0];
    db->rng = seed[1] | 1; /* xorshift must not start at 0 */
    db->mask = DB_MIN_BUCKETS - 1;
    db->table = db__alloc(DB_MIN_BUCKETS * sizeof(*db->table));
}

static void db__free_value(struct db_value *v)
{
    free(v->str);
    v->str = NULL;
    deque_free(&v->list);
}

static void db__free_entry(struct db_entry *e)
{
    db__free_value(&e->val);
    free(e);
}

void db_flush(struct db *db)
{
    for (size_t i = 0; i <= db->mask; i++) {
        struct db_entry *e = db->table[i], *next;
        for (; e; e = next) {
            next = e->next;
            db__free_entry(e);
        }
    }
    free(db->table);
    free(db->ttl);
    db->ttl = NULL;
    db->nttl = db->ttl_cap = db->ttl_cursor = 0;
    db->count = 0;
    db->mask = DB_MIN_BUCKETS - 1;
    db->table = db__alloc(DB_MIN_BUCKETS * sizeof(*db->table));
}

void db_free(struct db *db)
{
    db_flush(db);
    free(db->table);
    db->table = NULL;
}

/* Move every entry to a table of `buckets` buckets. */
static void db__resize(struct db *db, size_t buckets)
{
    struct db_entry **t = db__alloc(buckets * sizeof(*t));

    for (size_t i = 0; i <= db->mask; i++) {
        struct db_entry *e = db->table[i], *next;
        for (; e; e = next) {
            next = e->next;
            e->next = t[e->hash & (buckets - 1)];
            t[e->hash & (buckets - 1)] = e;
        }
    }
    free(db->table);
    db->table = t;
    db->mask = buckets - 1;
}

static struct db_entry *db__find(struct db *db, const char *key, size_t klen, uint64_t h)
{
    struct db_entry *e = db->table[h & db->mask];

    for (; e; e = e->next)
        if (e->hash == h && e->klen == klen && memcmp(e->key, key, klen) == 0)
            return e;
    return NULL;
}

struct db_entry *db_lookup(struct db *db, const char *key, size_t klen, int64_t now)
{
    struct db_entry *e = db__find(db, key, klen, db__hash(db, key, klen));

    if (e && db_expired(e, now)) {
        db_delete(db, e);
        db->expired++;
        return NULL;
    }
    return e;
}

static struct db_entry *db__add(struct db *db, const char *key, size_t klen, uint64_t h)
{
    struct db_entry *e = db__alloc(sizeof(*e) + klen + 1);

    memcpy(e->key, key, klen);
    e->klen = klen;
    e->hash = h;
    e->expire_ms = -1;
    e->next = db->table[h & db->mask];
    db->table[h & db->mask] = e;
    if (++db->count > db->mask + 1)
        db__resize(db, (db->mask + 1) * 2);
    return e;
}

static char *db__dup(const char *s, size_t len)
{
    char *p = db__alloc(len + 1); /* + 1: a value of 0 bytes is still a pointer */

    memcpy(p, s, len);
    return p;
}

struct db_entry *db_set_string(struct db *db, const char *key, size_t klen, const char *val,
                               size_t vlen, bool keep_ttl)
{
    uint64_t h = db__hash(db, key, klen);
    struct db_entry *e = db__find(db, key, klen, h);

    if (!e)
        e = db__add(db, key, klen, h);
    else if (!keep_ttl)
        db_persist(db, e);
    db__free_value(&e->val); /* SET replaces a value of any type */
    e->val = (struct db_value){.type = DB_STRING, .len = vlen, .str = db__dup(val, vlen)};
    return e;
}

struct db_entry *db_add_list(struct db *db, const char *key, size_t klen)
{
    struct db_entry *e = db__add(db, key, klen, db__hash(db, key, klen));

    e->val.type = DB_LIST;
    deque_init(&e->val.list);
    return e;
}

/* ---- expire times: the ttl array ---------------------------------------------- */

void db_set_expire(struct db *db, struct db_entry *e, int64_t when_ms)
{
    if (e->expire_ms < 0) {
        if (db->nttl == db->ttl_cap) {
            size_t cap = db->ttl_cap ? db->ttl_cap * 2 : 64;
            struct db_entry **t = realloc(db->ttl, cap * sizeof(*t));
            if (!t) {
                fprintf(stderr, "mini-redis: out of memory for %zu expire times\n", cap);
                exit(1);
            }
            db->ttl = t;
            db->ttl_cap = cap;
        }
        e->ttl_slot = db->nttl;
        db->ttl[db->nttl++] = e;
    }
    e->expire_ms = when_ms;
}

bool db_persist(struct db *db, struct db_entry *e)
{
    struct db_entry *last;

    if (e->expire_ms < 0)
        return false;
    /* The last one takes its place: O(1), and the order means nothing. */
    last = db->ttl[--db->nttl];
    db->ttl[e->ttl_slot] = last;
    last->ttl_slot = e->ttl_slot;
    e->expire_ms = -1;
    return true;
}

void db_delete(struct db *db, struct db_entry *e)
{
    struct db_entry **pp = &db->table[e->hash & db->mask];

    while (*pp != e)
        pp = &(*pp)->next;
    *pp = e->next;
    db_persist(db, e);
    db__free_entry(e);
    db->count--;
    if (db->mask + 1 > DB_MIN_BUCKETS && db->count * 10 < db->mask + 1)
        db__resize(db, (db->mask + 1) / 2);
}

struct db_entry *db_rename(struct db *db, struct db_entry *e, const char *to, size_t tolen)
{
    uint64_t h = db__hash(db, to, tolen);
    struct db_entry *n = db__add(db, to, tolen, h);

    n->val = e->val;
    e->val.str = NULL;
    deque_init(&e->val.list); /* the elements are n's now */
    if (e->expire_ms >= 0)
        db_set_expire(db, n, e->expire_ms);
    db_delete(db, e);
    return n;
}

/* ---- walking the key space ----------------------------------------------------- */

struct db_entry *db_random(struct db *db, int64_t now)
{
    for (;;) {
        struct db_entry *e;
        size_t len = 0, pick;

        if (db->count == 0)
            return NULL;
        /* A random bucket that is not empty, then a random entry of its
         * chain: Redis's dictGetRandomKey does the same. */
        do
            e = db->table[db__random(db) & db->mask];
        while (!e);
        for (struct db_entry *x = e; x; x = x->next)
            len++;
        for (pick = db__random(db) % len; pick > 0; pick--)
            e = e->next;
        if (!db_expired(e, now))
            return e;
        db_delete(db, e);
        db->expired++;
    }
}

void db_foreach(struct db *db, void (*fn)(struct db_entry *e, void *arg), void *arg)
{
    for (size_t i = 0; i <= db->mask; i++)
        for (struct db_entry *e = db->table[i]; e; e = e->next)
            fn(e, arg);
}

static unsigned long db__rev(unsigned long v)
{
    unsigned long r = 0;

    for (unsigned i = 0; i < sizeof(v) * 8; i++, v >>= 1)
        r = (r << 1) | (v & 1);
    return r;
}

/* The cursor counts through the buckets with its bits reversed (Redis's
 * dictScan, src/dict.c). Counting from the high bit, every bucket of a
 * table of 2^n visited so far stands for the same set of buckets in a table
 * of 2^(n+1) or 2^(n-1): a resize between two calls makes the walk meet
 * some keys twice, never miss one. */
unsigned long db_scan(struct db *db, unsigned long cursor,
                      void (*fn)(struct db_entry *e, void *arg), void *arg)
{
    for (struct db_entry *e = db->table[cursor & db->mask]; e; e = e->next)
        fn(e, arg);
    cursor |= ~(unsigned long)db->mask;
    cursor = db__rev(cursor);
    cursor++;
    return db__rev(cursor);
}

/* snippet: active-expire */
/* activeExpireCycle (src/expire.c at 7.0.15), for one database: look at 20
 * keys with a TTL, delete the expired ones, and go again while more than 10%
 * of those looked at had expired; stop when the time budget is spent. The
 * walk resumes where the last one stopped (ttl_cursor), so every key with a
 * TTL is looked at in turn, and a key deleted for good is never met again. */
size_t db_active_expire(struct db *db, int64_t now, int64_t budget_us)
{
    int64_t start = clock_now_us();
    size_t total = 0;
    unsigned iteration = 0;
    bool repeat;

    do {
        size_t sampled = 0, expired = 0;

        for (; sampled < EXPIRE_KEYS_PER_LOOP && db->nttl > 0; sampled++) {
            struct db_entry *e;

            if (db->ttl_cursor >= db->nttl)
                db->ttl_cursor = 0;
            e = db->ttl[db->ttl_cursor];
            if (db_expired(e, now)) {
                db_delete(db, e); /* the last key moves into this slot: look at it next */
                db->expired++;
                expired++;
            } else {
                db->ttl_cursor++;
            }
        }
        total += expired;
        /* The clock is read once every 16 rounds: reading it costs too. */
        if ((++iteration & 0xf) == 0 && clock_now_us() - start > budget_us)
            break;
        repeat = sampled > 0 && expired * 100 / sampled > EXPIRE_ACCEPTABLE_STALE;
    } while (repeat);
    return total;
}
/* end snippet */

const char *db_type_name(enum db_type t)
{
    switch (t) {
    case DB_STRING:
        return "string";
    case DB_LIST:
        return "list";
    }
    return "unknown";
}
