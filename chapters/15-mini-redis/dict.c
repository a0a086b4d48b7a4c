/* SPDX-License-Identifier: MIT */
/* dict.c: byte strings to pointers, in a chained hash table (dict.h). */
#include "dict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DICT_MIN_BUCKETS 8

static void *dict__alloc(size_t size)
{
    void *p = calloc(1, size);

    if (!p) {
        fprintf(stderr, "mini-redis: out of memory (%zu bytes)\n", size);
        exit(1);
    }
    return p;
}

/* FNV-1a: these tables hold what clients subscribe and block on, a few
 * entries per client, not the key space (db.c seeds its hash). */
static uint64_t dict__hash(const char *key, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)key[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

void dict_init(struct dict *d)
{
    memset(d, 0, sizeof(*d));
}

void dict_free(struct dict *d)
{
    if (d->table)
        for (size_t i = 0; i <= d->mask; i++) {
            struct dict_entry *e = d->table[i], *next;
            for (; e; e = next) {
                next = e->next;
                free(e);
            }
        }
    free(d->table);
    dict_init(d);
}

struct dict_entry *dict_find(const struct dict *d, const char *key, size_t klen)
{
    uint64_t h = dict__hash(key, klen);

    if (!d->table)
        return NULL;
    for (struct dict_entry *e = d->table[h & d->mask]; e; e = e->next)
        if (e->hash == h && e->klen == klen && memcmp(e->key, key, klen) == 0)
            return e;
    return NULL;
}

static void dict__resize(struct dict *d, size_t buckets)
{
    struct dict_entry **t = dict__alloc(buckets * sizeof(*t));

    if (d->table)
        for (size_t i = 0; i <= d->mask; i++) {
            struct dict_entry *e = d->table[i], *next;
            for (; e; e = next) {
                next = e->next;
                e->next = t[e->hash & (buckets - 1)];
                t[e->hash & (buckets - 1)] = e;
            }
        }
    free(d->table);
    d->table = t;
    d->mask = buckets - 1;
}

struct dict_entry *dict_add(struct dict *d, const char *key, size_t klen)
{
    struct dict_entry *e = dict_find(d, key, klen);

    if (e)
        return e;
    if (!d->table)
        dict__resize(d, DICT_MIN_BUCKETS);
    else if (d->count == d->mask + 1)
        dict__resize(d, (d->mask + 1) * 2);
    e = dict__alloc(sizeof(*e) + klen + 1);
    e->hash = dict__hash(key, klen);
    e->klen = klen;
    memcpy(e->key, key, klen);
    e->next = d->table[e->hash & d->mask];
    d->table[e->hash & d->mask] = e;
    d->count++;
    return e;
}

void dict_delete(struct dict *d, struct dict_entry *e)
{
    struct dict_entry **pp = &d->table[e->hash & d->mask];

    while (*pp != e)
        pp = &(*pp)->next;
    *pp = e->next;
    free(e);
    if (--d->count == 0) /* an empty table gives its buckets back */
        dict_free(d);
}

void dict_foreach(struct dict *d, void (*fn)(struct dict_entry *e, void *arg), void *arg)
{
    if (!d->table)
        return;
    for (size_t i = 0; i <= d->mask; i++) {
        struct dict_entry *e = d->table[i], *next;
        for (; e; e = next) {
            next = e->next;
            fn(e, arg);
            if (!d->table) /* fn deleted the last entry */
                return;
        }
    }
}
