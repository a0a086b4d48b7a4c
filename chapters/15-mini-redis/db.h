/* SPDX-License-Identifier: MIT */
/* db.h: the key space: one hash table of keys, each holding a typed value
 * and, maybe, an expire time; and what makes keys expire.
 *
 *     table ──► [bucket]─► entry "a" ─► entry "k" (a chain: same bucket)
 *               [bucket]─► entry "counter"
 *     ttl   ──► [entry "k", entry "session"...]   the keys with an expire time
 *
 * A value carries its type, as Redis's robj does (src/object.c), so that a
 * command on a key of the wrong type can say WRONGTYPE rather than read
 * bytes it does not understand. Times are Unix milliseconds (what EXPIREAT
 * and PEXPIRETIME speak), from the wall clock.
 *
 * Expiry is twofold, as in Redis (src/db.c expireIfNeeded, src/expire.c
 * activeExpireCycle): a lookup deletes the key it finds expired (lazy), and
 * db_active_expire(), run from a timer, walks the keys with a TTL and
 * deletes the expired ones nobody asks for.
 */
#ifndef CH15_DB_H
#define CH15_DB_H

#include "deque.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum db_type {
    DB_STRING, /* bytes: str[0..len) */
    DB_LIST,   /* list: never empty while it is in the key space, as in Redis */
};

struct db_value {
    enum db_type type;
    size_t len;        /* DB_STRING */
    char *str;         /* DB_STRING */
    struct deque list; /* DB_LIST */
};

struct db_entry {
    struct db_entry *next; /* in its bucket's chain */
    uint64_t hash;
    int64_t expire_ms; /* Unix time in ms; -1: none */
    size_t ttl_slot;   /* its index in db.ttl while expire_ms >= 0 */
    struct db_value val;
    size_t klen;
    char key[]; /* klen bytes, then a '\0' */
};

struct db {
    struct db_entry **table;
    size_t mask; /* buckets - 1; a power of two minus one */
    size_t count;
    struct db_entry **ttl; /* the keys with an expire time, in no order */
    size_t nttl, ttl_cap;
    size_t ttl_cursor;          /* where the active cycle goes on */
    uint64_t seed;              /* of the hash: other on each run, so no one can aim at a bucket */
    uint64_t rng;               /* xorshift64 state, for RANDOMKEY */
    unsigned long long expired; /* keys deleted because they expired */
};

void db_init(struct db *db);
void db_free(struct db *db);
/* Drop every key (FLUSHDB). */
void db_flush(struct db *db);

/* Wall-clock milliseconds, the time expire times are in. */
int64_t db_now_ms(void);

/* The key, or NULL; an expired key is deleted on the way (lazy expiry). */
struct db_entry *db_lookup(struct db *db, const char *key, size_t klen, int64_t now);
/* Set key to a string value (copied), keeping its expire time only if
 * keep_ttl (SET KEEPTTL); any value it had before is freed. */
struct db_entry *db_set_string(struct db *db, const char *key, size_t klen, const char *val,
                               size_t vlen, bool keep_ttl);
/* A new key holding an empty list, for the caller to push into at once:
 * a list with no element must not outlive the command that made it. */
struct db_entry *db_add_list(struct db *db, const char *key, size_t klen);
/* Give the key a new name, value and expire time moving along (RENAME);
 * `to` must not exist. Returns the entry under its new name. */
struct db_entry *db_rename(struct db *db, struct db_entry *e, const char *to, size_t tolen);
void db_delete(struct db *db, struct db_entry *e);

void db_set_expire(struct db *db, struct db_entry *e, int64_t when_ms);
/* Remove the expire time; false if there was none. */
bool db_persist(struct db *db, struct db_entry *e);
/* Expired once the clock has passed its time, not at it: Redis 7.0's
 * keyIsExpired() (src/db.c) is "now > when", so at the very millisecond a
 * key still answers, with a PTTL of 0. */
static inline bool db_expired(const struct db_entry *e, int64_t now)
{
    return e->expire_ms >= 0 && e->expire_ms < now;
}

/* A random key that has not expired (expired ones met are deleted), or NULL. */
struct db_entry *db_random(struct db *db, int64_t now);

/* Call fn on every key, in the table's order (expired ones included). fn
 * must not add or delete keys. */
void db_foreach(struct db *db, void (*fn)(struct db_entry *e, void *arg), void *arg);

/* One step of SCAN: call fn on every key of the bucket `cursor` names and
 * return the next cursor (0: the walk is over). A key present from the
 * first call to the last is met at least once, even if the table grows or
 * shrinks in between (see db.c). */
unsigned long db_scan(struct db *db, unsigned long cursor,
                      void (*fn)(struct db_entry *e, void *arg), void *arg);

/* The active expire cycle: delete expired keys nobody asks for, in at most
 * about budget_us microseconds. Returns how many it deleted. */
size_t db_active_expire(struct db *db, int64_t now, int64_t budget_us);

const char *db_type_name(enum db_type t);

#endif
