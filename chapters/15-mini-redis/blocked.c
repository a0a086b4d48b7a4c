/* SPDX-License-Identifier: MIT */
/* blocked.c: clients blocked on keys, and serving them (blocked.h), after
 * redis's src/blocked.c at tag 7.0.15 (blockForKeys, unblockClient,
 * handleClientsBlockedOnKeys, serveClientsBlockedOnListKey).
 */
#include "blocked.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *blocked__alloc(size_t size)
{
    void *p = calloc(1, size);

    if (!p) {
        fprintf(stderr, "mini-redis: out of memory (%zu bytes)\n", size);
        exit(1);
    }
    return p;
}

struct block *blocked_new(struct client *c, int first, int nkeys, enum block_op op)
{
    struct block *b = blocked__alloc(sizeof(*b) + (size_t)nkeys * sizeof(b->keys[0]));

    b->op = op;
    b->nkeys = nkeys;
    for (int i = 0; i < nkeys; i++) {
        struct dict_entry *q =
            dict_add(&c->srv->blocking, arg(c, first + i), arg_len(c, first + i));
        if (!q->val) {
            q->val = blocked__alloc(sizeof(struct list_node));
            list_init(q->val);
        }
        b->keys[i].in = q;
        b->keys[i].c = c;
    }
    return b;
}

void blocked_add(struct client *c, struct block *b)
{
    /* At the tail of each queue: the first client blocked is served first.
     * A key named twice (BLPOP k k 0) is queued once, as Redis does. */
    for (int i = 0; i < b->nkeys; i++) {
        struct list_node *q = b->keys[i].in->val;
        bool twice = false;
        for (int j = 0; j < i; j++)
            twice |= b->keys[j].in == b->keys[i].in;
        if (!twice)
            list_insert(q->prev, &b->keys[i].link);
    }
    c->blocked = b;
    c->srv->blocked++;
}

void blocked_remove(struct client *c)
{
    struct block *b = c->blocked;

    if (!b)
        return;
    for (int i = 0; i < b->nkeys; i++) {
        struct dict_entry *q = b->keys[i].in;

        if (!q) /* a key named twice, whose queue went with the first */
            continue;
        list_remove(&b->keys[i].link);
        if (list_empty(q->val)) { /* its last waiter: the queue goes */
            free(q->val);
            dict_delete(&c->srv->blocking, q);
            for (int j = i + 1; j < b->nkeys; j++)
                if (b->keys[j].in == q)
                    b->keys[j].in = NULL;
        }
    }
    free(b->dst);
    free(b);
    c->blocked = NULL;
    c->srv->blocked--;
}

/* replyToBlockedClientTimedOut: a null array, whatever the command (BLMOVE's
 * own "nothing" would be a null bulk, but a timeout is not that). */
void blocked_timeout(struct client *c)
{
    resp_add_array(c->out, -1);
    blocked_remove(c);
}

void blocked_signal(struct server_state *srv, const char *key, size_t klen)
{
    if (!dict_find(&srv->blocking, key, klen))
        return; /* nobody waits for it: the common case costs one lookup */
    for (size_t i = 0; i < srv->nready; i++)
        if (srv->ready_len[i] == klen && memcmp(srv->ready[i], key, klen) == 0)
            return;
    if (srv->nready == srv->ready_cap) {
        size_t cap = srv->ready_cap ? srv->ready_cap * 2 : 8;
        char **r = realloc(srv->ready, cap * sizeof(*r));
        size_t *l = r ? realloc(srv->ready_len, cap * sizeof(*l)) : NULL;
        if (!r || !l) {
            fprintf(stderr, "mini-redis: out of memory for %zu ready keys\n", cap);
            exit(1);
        }
        srv->ready = r;
        srv->ready_len = l;
        srv->ready_cap = cap;
    }
    srv->ready[srv->nready] = blocked__alloc(klen + 1);
    memcpy(srv->ready[srv->nready], key, klen);
    srv->ready_len[srv->nready++] = klen;
}

/* Hand the list at e to one waiter, as its command would have had it found
 * the element at once. false: it could not be served (BLMOVE onto a key of
 * another type: Redis puts the element back and tells the client). */
static bool blocked__serve_one(struct client *w, struct db_entry *e, const char *key, size_t klen)
{
    struct block *b = w->blocked;
    struct db *db = &w->srv->db;
    int64_t now = db_now_ms();

    if (b->op == BLOCK_MOVE) {
        struct db_entry *d = db_lookup(db, b->dst, b->dst_len, now);
        if (d && d->val.type != DB_LIST) {
            reply_wrongtype(w);
            return false;
        }
        list_move_push(w, d, b->dst, b->dst_len, deque_pop(&e->val.list, b->from), b->to);
        if (e->val.list.len == 0) /* after the push: src may be dst */
            db_delete(db, e);
        return true;
    }
    resp_add_array(w->out, 2);
    resp_add_bulk(w->out, key, klen);
    list_pop_reply(w, e, b->from, b->op == BLOCK_MPOP ? b->count : -1);
    return true;
}

/* handleClientsBlockedOnKeys: every ready key, in the order they became
 * ready; a BLMOVE served may make another key ready, and the loop goes on
 * until none is. */
void blocked_serve(struct server_state *srv)
{
    while (srv->nready > 0) {
        char *key = srv->ready[0];
        size_t klen = srv->ready_len[0];
        struct dict_entry *q;

        memmove(srv->ready, srv->ready + 1, (srv->nready - 1) * sizeof(*srv->ready));
        memmove(srv->ready_len, srv->ready_len + 1, (srv->nready - 1) * sizeof(*srv->ready_len));
        srv->nready--;
        while ((q = dict_find(&srv->blocking, key, klen))) {
            struct list_node *first = ((struct list_node *)q->val)->next;
            struct block_key *bk = list_entry(first, struct block_key, link);
            struct client *w = bk->c;
            struct db_entry *e = db_lookup(&srv->db, key, klen, db_now_ms());

            if (!e || e->val.type != DB_LIST)
                break; /* emptied (or replaced) by the waiters served before */
            blocked__serve_one(w, e, key, klen);
            blocked_remove(w); /* leaves every queue: served once */
            w->wake(w);
        }
        free(key);
    }
}

void blocked_free(struct server_state *srv)
{
    for (size_t i = 0; i < srv->nready; i++)
        free(srv->ready[i]);
    free(srv->ready);
    free(srv->ready_len);
    srv->ready = NULL;
    srv->ready_len = NULL;
    srv->nready = srv->ready_cap = 0;
    dict_free(&srv->blocking);
}
