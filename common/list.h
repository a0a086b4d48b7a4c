/* SPDX-License-Identifier: MIT */
/* list.h: an intrusive doubly linked list, the one the course's
 * servers keep their open connections on.
 *
 * Intrusive: the element embeds a struct list_node, so linking and unlinking
 * allocate nothing, and an element leaves the list in O(1) without a search,
 * which is what a server needs to close one connection from inside its own
 * event and every connection at shutdown. list_entry() gets back from the
 * node to the element around it. (Linux's include/linux/list.h is the same
 * idea; BSD's <sys/queue.h> is not there on Windows.)
 *
 * The list is circular around a head node that belongs to no element: an
 * empty list is a head that points at itself, so linking and unlinking have
 * no special case at the ends. A head must be list_init()ed before use and
 * must not move afterwards (its neighbours point at it). An element's node
 * needs no set-up: zeroed (calloc, or `= {0}`) is "on no list", and so is a
 * node after list_remove().
 *
 *     struct conn { int fd; struct list_node link; };
 *     struct list_node conns;                 list_init(&conns);
 *     list_insert(&conns, &c->link);          at the front
 *     list_remove(&c->link);
 *     struct list_node *n, *next;
 *     list_for_each_safe(n, next, &conns)     conn_close() may unlink n
 *         conn_close(list_entry(n, struct conn, link));
 *
 * Header-only (static inline), like clock.h: chapters and the mingw-w64
 * builds use it with nothing to link.
 */
#ifndef COURSE_LIST_H
#define COURSE_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct list_node {
    struct list_node *prev, *next; /* both NULL: on no list */
};

static inline void list_init(struct list_node *head)
{
    head->prev = head->next = head;
}

static inline bool list_empty(const struct list_node *head)
{
    return head->next == head;
}

/* Link n at the front of the list, right after its head. */
static inline void list_insert(struct list_node *head, struct list_node *n)
{
    n->prev = head;
    n->next = head->next;
    head->next->prev = n;
    head->next = n;
}

/* Unlink n from whatever list holds it; a node on no list is left alone. */
static inline void list_remove(struct list_node *n)
{
    if (!n->next)
        return;
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = NULL;
}

/* The element of type `type` whose member `member` is the node `node`.
 * (clang-format would take `(node) -` for a cast and glue the minus on.) */
/* clang-format off */
#define list_entry(node, type, member) ((type *)((char *)(node) - offsetof(type, member)))
/* clang-format on */

/* The first element of a list that is not empty. */
#define list_first_entry(head, type, member) list_entry((head)->next, type, member)

/* Every node of the list, front to back. The body must not unlink `pos`. */
#define list_for_each(pos, head) for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)

/* The same, for a body that may unlink `pos` (and only `pos`): its
 * successor is read before the body runs. */
#define list_for_each_safe(pos, tmp, head)                                                         \
    for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head);                               \
         (pos) = (tmp), (tmp) = (pos)->next)

#endif
