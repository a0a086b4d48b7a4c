/* SPDX-License-Identifier: MIT */
/* deque.h: the list type of mini-redis, a double-ended queue of strings.
 *
 * A ring of pointers whose size is a power of two: the elements are
 * v[(head + i) & mask] for i in [0, len). Pushing and popping at either end
 * and reading element i are O(1); inserting or removing in the middle
 * (LINSERT, LREM) moves the elements after it, O(n), as a listpack does.
 *
 *     v:  [ c ][ - ][ - ][ a ][ b ]      head = 3, len = 3: the list a b c
 *
 * Each element is its own allocation (its length, then its bytes). Redis 7.0
 * packs many small elements into one listpack node of a quicklist instead
 * (src/quicklist.c, src/listpack.c): a byte or two of overhead per element
 * rather than a pointer, a length and an allocator header, and elements
 * that sit next to each other in memory. The README says what that costs.
 */
#ifndef CH15_DEQUE_H
#define CH15_DEQUE_H

#include <stdbool.h>
#include <stddef.h>

struct deque_item {
    size_t len;
    char data[]; /* len bytes, then a '\0' */
};

struct deque {
    struct deque_item **v;
    size_t head; /* slot of element 0 */
    size_t len;
    size_t mask; /* slots - 1 (0 while nothing is allocated) */
};

enum deque_end { DEQUE_HEAD, DEQUE_TAIL };

void deque_init(struct deque *d);
void deque_free(struct deque *d);

/* A copy of s[0..len), as an element not yet in any deque. */
struct deque_item *deque_item_new(const char *s, size_t len);

static inline struct deque_item *deque_at(const struct deque *d, size_t i)
{
    return d->v[(d->head + i) & d->mask];
}

/* The deque takes the item. */
void deque_push(struct deque *d, enum deque_end end, struct deque_item *it);
/* The caller takes the item (and frees it). The deque must not be empty. */
struct deque_item *deque_pop(struct deque *d, enum deque_end end);
/* Put `it` at index i (0..len), moving the elements from i one slot on. */
void deque_insert(struct deque *d, size_t i, struct deque_item *it);
/* Take the element at index i out (the caller frees it). */
struct deque_item *deque_remove(struct deque *d, size_t i);
/* Replace element i, freeing the one it held. */
void deque_set(struct deque *d, size_t i, struct deque_item *it);

bool deque_item_equal(const struct deque_item *it, const char *s, size_t len);

/* Remove the elements equal to s[0..len): the first `count` from the head
 * (count > 0), from the tail (count < 0), or all (0), in one pass. Returns
 * how many went. */
size_t deque_remove_equal(struct deque *d, const char *s, size_t len, long long count);

#endif
