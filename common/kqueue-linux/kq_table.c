/* SPDX-License-Identifier: MIT */
/* kq_table.c: finding knotes (see kq.h).
 *
 * READ and WRITE knotes hang off a slot indexed by their fd, as epoll's
 * reports come back with an fd. Timer, signal and user knotes have idents
 * that are not fds (a timer's ident is any number the program likes), so
 * they are also kept in a hash table keyed by (filter, ident); their helper
 * fd has a slot too, which is how a report finds them.
 */
#include "kq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The slot of fd, growing the array when `create`; NULL if absent or no memory. */
struct kq_slot *kq_slot_get(struct kq *kq, int fd, bool create)
{
    if (fd < 0)
        return NULL;
    if (fd >= kq->nslots) {
        if (!create)
            return NULL;
        int n = kq->nslots ? kq->nslots : 64;
        while (n <= fd)
            n *= 2;
        struct kq_slot *slots = realloc(kq->slots, (size_t)n * sizeof(*slots));
        if (!slots)
            return NULL;
        memset(slots + kq->nslots, 0, (size_t)(n - kq->nslots) * sizeof(*slots));
        kq->slots = slots;
        kq->nslots = n;
    }
    return &kq->slots[fd];
}

static size_t kq_table__bucket(const struct kq *kq, short filter, uintptr_t ident)
{
    uint64_t h = ((uint64_t)ident ^ ((uint64_t)(uint16_t)filter << 48)) * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 32) & (kq->nbuckets - 1);
}

struct kq_knote *kq_table_find(struct kq *kq, short filter, uintptr_t ident)
{
    if (kq->nbuckets == 0)
        return NULL;
    for (struct kq_knote *kn = kq->buckets[kq_table__bucket(kq, filter, ident)]; kn; kn = kn->next)
        if (kn->kev.filter == filter && kn->kev.ident == ident)
            return kn;
    return NULL;
}

/* Double the buckets (a power of two) and rehash. */
static int kq_table__grow(struct kq *kq)
{
    size_t old = kq->nbuckets, n = old ? old * 2 : 64;
    struct kq_knote **oldb = kq->buckets, **b = calloc(n, sizeof(*b));

    if (!b)
        return ENOMEM;
    kq->buckets = b;
    kq->nbuckets = n;
    for (size_t i = 0; i < old; i++) {
        struct kq_knote *kn = oldb[i], *next;
        for (; kn; kn = next) {
            size_t j = kq_table__bucket(kq, kn->kev.filter, kn->kev.ident);
            next = kn->next;
            kn->next = b[j];
            b[j] = kn;
        }
    }
    free(oldb);
    return 0;
}

int kq_table_insert(struct kq *kq, struct kq_knote *kn)
{
    if (kq->nknotes >= kq->nbuckets) {
        int err = kq_table__grow(kq);
        if (err)
            return err;
    }
    size_t i = kq_table__bucket(kq, kn->kev.filter, kn->kev.ident);
    kn->next = kq->buckets[i];
    kq->buckets[i] = kn;
    kq->nknotes++;
    return 0;
}

void kq_table_remove(struct kq *kq, struct kq_knote *kn)
{
    struct kq_knote **p = &kq->buckets[kq_table__bucket(kq, kn->kev.filter, kn->kev.ident)];

    for (; *p; p = &(*p)->next) {
        if (*p == kn) {
            *p = kn->next;
            kq->nknotes--;
            return;
        }
    }
}

void kq_table_free(struct kq *kq)
{
    free(kq->buckets);
    free(kq->slots);
    kq->buckets = NULL;
    kq->slots = NULL;
    kq->nbuckets = kq->nknotes = 0;
    kq->nslots = 0;
}
