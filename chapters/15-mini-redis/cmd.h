/* SPDX-License-Identifier: MIT */
/* cmd.h: the commands of mini-redis, and what they run against.
 *
 * As in Redis (src/server.c's command table, src/commands.c), a command is
 * a line of a table: its name, its arity (N: exactly N words, the name
 * included; -N: at least N) and the function that runs it. cmd_execute()
 * finds the line, checks the arity, and calls the function, which reads
 * its arguments from the client and appends its reply to c->out. No
 * command does I/O: the connection's task sends what they wrote.
 *
 *     cmd.c         the table, cmd_execute(), and the connection and server
 *                   commands (PING ECHO QUIT SELECT HELLO COMMAND CLIENT INFO ...),
 *                   and SAVE BGSAVE LASTSAVE on rdb.c (Redis: src/rdb.c)
 *     cmd_string.c  strings: GET SET INCR APPEND ... (Redis: src/t_string.c)
 *     cmd_keys.c    keys: DEL EXISTS KEYS SCAN RENAME EXPIRE TTL ...
 *                   (Redis: src/db.c and src/expire.c)
 *     cmd_list.c    lists: LPUSH LPOP LRANGE LMOVE ... and the blocking
 *                   BLPOP BLMOVE ... (Redis: src/t_list.c)
 *     blocked.c     the clients blocked on keys, and serving them (src/blocked.c)
 *     multi.c       MULTI EXEC DISCARD (src/multi.c)
 *     pubsub.c      SUBSCRIBE PUBLISH PUBSUB ... (src/pubsub.c)
 *
 * A command never waits: a blocking pop that finds nothing registers the
 * client as a waiter (blocked.c) and returns; the connection's task does
 * the waiting. Another client's command may write into a client's output
 * (a push that serves it, a PUBLISH), and then calls its wake().
 */
#ifndef CH15_CMD_H
#define CH15_CMD_H

#include "buf.h"
#include "db.h"
#include "dict.h"
#include "resp.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* What every connection shares: the one database, the keys clients are
 * blocked on, the channels and patterns, the server's counters. */
struct server_state {
    struct db db;
    long long next_client_id;
    struct dict blocking; /* key -> struct list_node *: its waiters, first blocked first */
    char **ready;         /* keys given a new list while clients wait on them (blocked.c) */
    size_t *ready_len, nready, ready_cap;
    struct dict channels; /* channel -> struct list_node *: its subscriptions */
    struct dict patterns; /* pattern -> struct list_node * */
    /* INFO's */
    const char *backend; /* multiplexing_api */
    int port;
    int64_t started_ms;
    long long connected, blocked; /* connected_clients, blocked_clients */
    /* persistence (rdb.c): SAVE, BGSAVE, LASTSAVE */
    const char *rdb_dir, *rdb_name; /* -d, -f: where the file is */
    long long lastsave;             /* unix time of the last save that worked (or of the start) */
    pid_t save_child;               /* BGSAVE's child while it runs; 0: none */
    /* mini-redis.c: a child was forked, reap it without blocking the loop */
    void (*child_started)(struct server_state *srv);
    void *host; /* what child_started needs (the runtime) */
};

struct block;
struct queued;

/* One connection, as the commands see it. */
struct client {
    struct server_state *srv;
    long long id;
    struct buf *out; /* replies, sent by the connection's task */
    /* Another client wrote into out, or served this one: the connection's
     * task must look (see mini-redis.c). */
    void (*wake)(struct client *c);
    char *req; /* the request being run: its arguments point into it */
    const struct resp_arg *argv;
    int argc;
    bool close_after_reply; /* QUIT, a protocol error */
    char *name;             /* CLIENT SETNAME, HELLO SETNAME; NULL: none */
    const struct cmd *cmd;  /* the command running: its name is in some errors */
    int64_t now;            /* ms, read once per command */
    /* blocking pops (blocked.c) */
    struct block *blocked; /* what it waits for; NULL: it is not blocked */
    bool deny_blocking;    /* inside EXEC: a blocking pop times out at once */
    /* MULTI (multi.c) */
    bool in_multi, multi_dirty;
    struct queued *queue;
    int nqueued, queue_cap;
    /* pub/sub (pubsub.c) */
    struct dict sub_channels, sub_patterns; /* name -> struct sub * */
    bool killed; /* cut off (output limit): no more output is written to it */
};

/* Argument i: its bytes (followed by a '\0') and their count. */
static inline const char *arg(const struct client *c, int i)
{
    return c->req + c->argv[i].off;
}
static inline size_t arg_len(const struct client *c, int i)
{
    return c->argv[i].len;
}

struct cmd {
    const char *name; /* lower case, as Redis names it in its messages */
    int arity;
    void (*proc)(struct client *c);
    int first_key, last_key, key_step; /* where the keys are (-1: the last word) */
    const struct cmd *subs;            /* a container (CLIENT, PUBSUB): its subcommands */
};

/* Run the request in c->argv, replying into c->out; then serve the clients
 * blocked on keys the command gave a list to. */
void cmd_execute(struct client *c);
/* Run one command already checked (EXEC's queue): no queueing, no serving. */
void cmd_call(struct client *c);
/* What a client holds that the commands gave it (subscriptions, a queued
 * transaction, a blocked pop, its name), released when it leaves. */
void cmd_client_free(struct client *c);

/* Replies that several files give. */
void reply_ok(struct client *c);
void reply_syntax_error(struct client *c);
void reply_not_integer(struct client *c);
void reply_arity(struct client *c);
void reply_wrongtype(struct client *c);
void reply_expire_time(struct client *c);
/* Argument i as a long long, or reply "not an integer" and return false. */
bool arg_ll_or_reply(struct client *c, int i, long long *out);

/* The string at key i: *e is NULL if there is none; false (and WRONGTYPE
 * replied) if the key holds another type. */
bool lookup_string(struct client *c, int i, struct db_entry **e);
/* The same for a list. */
bool lookup_list(struct client *c, int i, struct db_entry **e);

/* Lists, which blocked.c serves from too (cmd_list.c). */
/* A new, empty list at key, for the caller to push into at once; clients
 * blocked on the key are served once the command is over. */
struct db_entry *list_create(struct server_state *srv, const char *key, size_t klen);
/* Pop from the list at e and reply: count < 0, *2 key element (BLPOP);
 * count >= 1, *2 key *N elements (LMPOP). An emptied list is deleted. */
void list_pop_reply(struct client *c, struct db_entry *e, enum deque_end from, long long count);
/* LMOVE's second half: push the popped element onto dst (d: its entry, or
 * NULL to create it), reply it, and free it. */
void list_move_push(struct client *c, struct db_entry *d, const char *dst, size_t dst_len,
                    struct deque_item *it, enum deque_end to);

/* Transactions (multi.c): queue the command in c->argv (+QUEUED); drop
 * the queue and leave MULTI. */
void multi_queue(struct client *c);
void multi_discard(struct client *c);

/* Pub/sub (pubsub.c): leave every channel and pattern, replying nothing. */
void pubsub_forget(struct client *c);
static inline size_t pubsub_count(const struct client *c)
{
    return c->sub_channels.count + c->sub_patterns.count;
}

/* The commands of each file. */
void cmd_get(struct client *c);
void cmd_set(struct client *c);
void cmd_setnx(struct client *c);
void cmd_setex(struct client *c);
void cmd_psetex(struct client *c);
void cmd_getset(struct client *c);
void cmd_getdel(struct client *c);
void cmd_getex(struct client *c);
void cmd_mget(struct client *c);
void cmd_mset(struct client *c);
void cmd_msetnx(struct client *c);
void cmd_append(struct client *c);
void cmd_strlen(struct client *c);
void cmd_getrange(struct client *c);
void cmd_setrange(struct client *c);
void cmd_incr(struct client *c);
void cmd_decr(struct client *c);
void cmd_incrby(struct client *c);
void cmd_decrby(struct client *c);
void cmd_incrbyfloat(struct client *c);

void cmd_del(struct client *c);
void cmd_exists(struct client *c);
void cmd_type(struct client *c);
void cmd_keys(struct client *c);
void cmd_scan(struct client *c);
void cmd_rename(struct client *c);
void cmd_renamenx(struct client *c);
void cmd_expire(struct client *c);
void cmd_pexpire(struct client *c);
void cmd_expireat(struct client *c);
void cmd_pexpireat(struct client *c);
void cmd_ttl(struct client *c);
void cmd_pttl(struct client *c);
void cmd_expiretime(struct client *c);
void cmd_pexpiretime(struct client *c);
void cmd_persist(struct client *c);
void cmd_randomkey(struct client *c);
void cmd_dbsize(struct client *c);
void cmd_flushdb(struct client *c);

void cmd_lpush(struct client *c);
void cmd_rpush(struct client *c);
void cmd_lpushx(struct client *c);
void cmd_rpushx(struct client *c);
void cmd_lpop(struct client *c);
void cmd_rpop(struct client *c);
void cmd_llen(struct client *c);
void cmd_lrange(struct client *c);
void cmd_lindex(struct client *c);
void cmd_lset(struct client *c);
void cmd_linsert(struct client *c);
void cmd_lrem(struct client *c);
void cmd_ltrim(struct client *c);
void cmd_lpos(struct client *c);
void cmd_lmove(struct client *c);
void cmd_rpoplpush(struct client *c);
void cmd_lmpop(struct client *c);
void cmd_blpop(struct client *c);
void cmd_brpop(struct client *c);
void cmd_blmove(struct client *c);
void cmd_brpoplpush(struct client *c);
void cmd_blmpop(struct client *c);

void cmd_multi(struct client *c);
void cmd_exec(struct client *c);
void cmd_discard(struct client *c);

void cmd_subscribe(struct client *c);
void cmd_unsubscribe(struct client *c);
void cmd_psubscribe(struct client *c);
void cmd_punsubscribe(struct client *c);
void cmd_publish(struct client *c);
void cmd_pubsub_channels(struct client *c);
void cmd_pubsub_numsub(struct client *c);
void cmd_pubsub_numpat(struct client *c);

#endif
