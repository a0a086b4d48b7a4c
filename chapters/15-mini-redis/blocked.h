/* SPDX-License-Identifier: MIT */
/* blocked.h: clients blocked on keys by BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP
 * (redis's src/blocked.c at tag 7.0.15).
 *
 * A blocking pop that finds every key empty copies what it waits for into a
 * struct block, and joins the queue of waiters of each of its keys:
 *
 *     srv->blocking:  "jobs" ──► client 7 ─► client 9      (first blocked first)
 *                     "mail" ──► client 9
 *
 * A command that gives one of those keys a list (a push to a key that did
 * not exist, LMOVE, RENAME) marks it ready (blocked_signal); once that
 * command is over, blocked_serve() hands its elements to the waiters in
 * order, until the list is empty again, exactly as Redis's
 * handleClientsBlockedOnKeys does after each command. A served client has its
 * reply in its output and its wake() called: its task, awaiting, goes on.
 */
#ifndef CH15_BLOCKED_H
#define CH15_BLOCKED_H

#include "cmd.h"
#include "deque.h"
#include "list.h"

enum block_op {
    BLOCK_POP,  /* BLPOP BRPOP: *2 key element */
    BLOCK_MPOP, /* BLMPOP: *2 key *N elements */
    BLOCK_MOVE, /* BLMOVE BRPOPLPUSH: the element, pushed onto dst */
};

/* One of a blocked client's keys: its place in that key's queue. */
struct block_key {
    struct list_node link; /* in the queue, a struct list_node * in srv->blocking */
    struct dict_entry *in; /* the queue's entry in srv->blocking */
    struct client *c;
};

/* What a blocked client waits for: copied from its request, which the
 * query buffer does not keep while the client waits. */
struct block {
    enum block_op op;
    enum deque_end from, to;
    long long count;    /* BLMPOP */
    int64_t timeout_ms; /* 0: for ever */
    char *dst;          /* BLMOVE */
    size_t dst_len;
    int nkeys;
    struct block_key keys[];
};

/* Block c on its argv[first..first + nkeys): b comes from blocked_new(). */
struct block *blocked_new(struct client *c, int first, int nkeys, enum block_op op);
void blocked_add(struct client *c, struct block *b);
/* Take c out of every queue it waits in; it is no longer blocked. */
void blocked_remove(struct client *c);
/* Its time is up: the reply Redis gives a blocked pop that timed out. */
void blocked_timeout(struct client *c);

/* A key got a list: serve its waiters after the command. */
void blocked_signal(struct server_state *srv, const char *key, size_t klen);
void blocked_serve(struct server_state *srv);
void blocked_free(struct server_state *srv);

#endif
