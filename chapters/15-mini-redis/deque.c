/* SPDX-License-Identifier: MIT */
/* deque.c: a double-ended queue of strings in a ring of pointers (deque.h).
 *
 * The ring doubles when it is full and halves when it is an eighth full,
 * keeping at least DEQUE_MIN slots: a list that was long once and is short
 * now gives its memory back, as a quicklist frees its emptied nodes.
 */
#include "deque.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEQUE_MIN 8

static void *deque__alloc(size_t size)
{
    void *p = malloc(size);

    if (!p) {
        fprintf(stderr, "mini-redis: out of memory (%zu bytes)\n", size);
        exit(1);
    }
    return p;
}

void deque_init(struct deque *d)
{
    memset(d, 0, sizeof(*d));
}

void deque_free(struct deque *d)
{
    for (size_t i = 0; i < d->len; i++)
        free(deque_at(d, i));
    free(d->v);
    deque_init(d);
}

struct deque_item *deque_item_new(const char *s, size_t len)
{
    struct deque_item *it = deque__alloc(sizeof(*it) + len + 1);

    it->len = len;
    memcpy(it->data, s, len);
    it->data[len] = '\0';
    return it;
}

bool deque_item_equal(const struct deque_item *it, const char *s, size_t len)
{
    return it->len == len && memcmp(it->data, s, len) == 0;
}

/* Copy the elements, in order, into a ring of `slots` slots from slot 0. */
static void deque__resize(struct deque *d, size_t slots)
{
    struct deque_item **v = deque__alloc(slots * sizeof(*v));

    for (size_t i = 0; i < d->len; i++)
        v[i] = deque_at(d, i);
    free(d->v);
    d->v = v;
    d->head = 0;
    d->mask = slots - 1;
}

static void deque__grow(struct deque *d)
{
    if (!d->v)
        deque__resize(d, DEQUE_MIN);
    else if (d->len == d->mask + 1)
        deque__resize(d, (d->mask + 1) * 2);
}

static void deque__shrink(struct deque *d)
{
    if (d->mask + 1 > DEQUE_MIN && d->len * 8 < d->mask + 1)
        deque__resize(d, (d->mask + 1) / 2);
}

void deque_push(struct deque *d, enum deque_end end, struct deque_item *it)
{
    deque__grow(d);
    if (end == DEQUE_HEAD) {
        d->head = (d->head - 1) & d->mask;
        d->v[d->head] = it;
    } else {
        d->v[(d->head + d->len) & d->mask] = it;
    }
    d->len++;
}

struct deque_item *deque_pop(struct deque *d, enum deque_end end)
{
    struct deque_item *it;

    if (end == DEQUE_HEAD) {
        it = d->v[d->head];
        d->head = (d->head + 1) & d->mask;
    } else {
        it = deque_at(d, d->len - 1);
    }
    d->len--;
    deque__shrink(d);
    return it;
}

void deque_insert(struct deque *d, size_t i, struct deque_item *it)
{
    deque__grow(d);
    d->len++;
    for (size_t j = d->len - 1; j > i; j--) /* the ones after i, one slot on */
        d->v[(d->head + j) & d->mask] = deque_at(d, j - 1);
    d->v[(d->head + i) & d->mask] = it;
}

struct deque_item *deque_remove(struct deque *d, size_t i)
{
    struct deque_item *it = deque_at(d, i);

    for (size_t j = i; j + 1 < d->len; j++)
        d->v[(d->head + j) & d->mask] = deque_at(d, j + 1);
    d->len--;
    deque__shrink(d);
    return it;
}

void deque_set(struct deque *d, size_t i, struct deque_item *it)
{
    free(deque_at(d, i));
    d->v[(d->head + i) & d->mask] = it;
}

size_t deque_remove_equal(struct deque *d, const char *s, size_t len, long long count)
{
    bool from_tail = count < 0;
    unsigned long long limit = count == 0  ? ~0ULL
                               : from_tail ? -(unsigned long long)count
                                           : (unsigned long long)count;
    size_t removed = 0, kept = 0;

    /* One pass: the elements that stay slide down over the ones that go.
     * From the tail, the same pass runs mirrored (index len - 1 - i). */
    for (size_t i = 0; i < d->len; i++) {
        size_t from = from_tail ? d->len - 1 - i : i;
        struct deque_item *it = deque_at(d, from);

        if (removed < limit && deque_item_equal(it, s, len)) {
            free(it);
            removed++;
            continue;
        }
        d->v[(d->head + (from_tail ? d->len - 1 - kept : kept)) & d->mask] = it;
        kept++;
    }
    if (from_tail) /* the kept ones sit at the end of the old range */
        d->head = (d->head + removed) & d->mask;
    d->len = kept;
    deque__shrink(d);
    return removed;
}
