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
 *                   commands (PING ECHO QUIT SELECT HELLO COMMAND DBSIZE ...)
 *     cmd_string.c  strings: GET SET INCR APPEND ... (Redis: src/t_string.c)
 *     cmd_keys.c    keys: DEL EXISTS KEYS SCAN RENAME EXPIRE TTL ...
 *                   (Redis: src/db.c and src/expire.c)
 */
#ifndef CH15_CMD_H
#define CH15_CMD_H

#include "buf.h"
#include "db.h"
#include "resp.h"

#include <stdbool.h>
#include <stddef.h>

/* What every connection shares: the one database, the server's counters. */
struct server_state {
    struct db db;
    long long next_client_id;
};

/* One connection, as the commands see it. */
struct client {
    struct server_state *srv;
    long long id;
    struct buf *out; /* replies, sent by the connection's task */
    char *req;       /* the request being run: its arguments point into it */
    const struct resp_arg *argv;
    int argc;
    bool close_after_reply; /* QUIT, a protocol error */
    char name[64];          /* HELLO SETNAME */
    const struct cmd *cmd;  /* the command running: its name is in some errors */
    int64_t now;            /* ms, read once per command */
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
};

/* Run the request in c->argv, replying into c->out. */
void cmd_execute(struct client *c);

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

#endif
