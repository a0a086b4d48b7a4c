/* SPDX-License-Identifier: MIT */
/* dict.h: a small hash table from byte strings to pointers, for what the
 * server keeps beside the key space: the keys clients are blocked on, the
 * channels and the patterns of pub/sub (Redis keeps each in a dict too:
 * db->blocking_keys, server.pubsub_channels, server.pubsub_patterns).
 *
 * Chains in a power-of-two number of buckets, doubled when it holds as many
 * entries as buckets; the key is copied into the entry. Unlike the key
 * space (db.c) these tables stay small, so they never shrink below what
 * they grew to, until they are empty.
 */
#ifndef CH15_DICT_H
#define CH15_DICT_H

#include <stddef.h>
#include <stdint.h>

struct dict_entry {
    struct dict_entry *next;
    uint64_t hash;
    void *val;
    size_t klen;
    char key[]; /* klen bytes, then a '\0' */
};

struct dict {
    struct dict_entry **table;
    size_t mask;
    size_t count;
};

void dict_init(struct dict *d);
/* Free the table and its entries (not what their values point to). */
void dict_free(struct dict *d);
struct dict_entry *dict_find(const struct dict *d, const char *key, size_t klen);
/* The entry for key, added with a NULL value if it was not there. */
struct dict_entry *dict_add(struct dict *d, const char *key, size_t klen);
void dict_delete(struct dict *d, struct dict_entry *e);
/* Call fn on every entry; fn may delete the entry it is given. */
void dict_foreach(struct dict *d, void (*fn)(struct dict_entry *e, void *arg), void *arg);

#endif
