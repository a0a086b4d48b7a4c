/* SPDX-License-Identifier: MIT */
/* cmd.c: the command table, cmd_execute(), and the connection and server
 * commands (see cmd.h).
 *
 * The table is sorted by name and searched by bisection, without regard to
 * case, as Redis looks a name up in its dictionary of commands
 * (src/server.c lookupCommand): one table, no chain of comparisons, and a
 * command is added by adding a line. The checks before a command runs, and
 * their messages, are those of processCommand (src/server.c at 7.0.15).
 */
#include "cmd.h"

#include "blocked.h"
#include "rdb.h"
#include "util.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define REDIS_VERSION "7.0.15" /* the Redis whose replies mini-redis gives */

/* ---- replies several commands share (src/server.c createSharedObjects) ---------- */

void reply_ok(struct client *c)
{
    resp_add_simple(c->out, "OK");
}

void reply_syntax_error(struct client *c)
{
    resp_add_error(c->out, "syntax error");
}

void reply_not_integer(struct client *c)
{
    resp_add_error(c->out, "value is not an integer or out of range");
}

void reply_wrongtype(struct client *c)
{
    resp_add_error(c->out, "WRONGTYPE Operation against a key holding the wrong kind of value");
}

bool arg_ll_or_reply(struct client *c, int i, long long *out)
{
    if (util_str_to_ll(arg(c, i), arg_len(c, i), out))
        return true;
    reply_not_integer(c);
    return false;
}

bool lookup_string(struct client *c, int i, struct db_entry **e)
{
    *e = db_lookup(&c->srv->db, arg(c, i), arg_len(c, i), c->now);
    if (*e && (*e)->val.type != DB_STRING) {
        reply_wrongtype(c);
        return false;
    }
    return true;
}

/* ---- connection and server commands ---------------------------------------------- */

/* A subscriber's PING answers in the shape of a message, since its client
 * reads everything as messages (pingCommand). */
static void cmd_ping(struct client *c)
{
    if (c->argc > 2) {
        reply_arity(c);
    } else if (pubsub_count(c) > 0) {
        resp_add_array(c->out, 2);
        resp_add_bulk(c->out, "pong", 4);
        resp_add_bulk(c->out, c->argc == 2 ? arg(c, 1) : "", c->argc == 2 ? arg_len(c, 1) : 0);
    } else if (c->argc == 1)
        resp_add_simple(c->out, "PONG");
    else
        resp_add_bulk(c->out, arg(c, 1), arg_len(c, 1));
}

static void cmd_echo(struct client *c)
{
    resp_add_bulk(c->out, arg(c, 1), arg_len(c, 1));
}

static void cmd_quit(struct client *c)
{
    reply_ok(c);
    c->close_after_reply = true;
}

/* One database: SELECT 0 is all there is, as in a Redis started with
 * `databases 1`. */
static void cmd_select(struct client *c)
{
    long long id;

    if (!util_str_to_ll(arg(c, 1), arg_len(c, 1), &id))
        reply_not_integer(c);
    else if (id < -2147483648LL || id > 2147483647LL) /* getIntFromObjectOrReply's words */
        resp_add_error(c->out, "value is out of range, value must between -2147483648 and "
                               "2147483647");
    else if (id != 0)
        resp_add_error(c->out, "DB index is out of range");
    else
        reply_ok(c);
}

/* clientSetNameOrReply (src/networking.c): printable, no spaces; an empty
 * name removes the name. */
static bool client__set_name(struct client *c, int i)
{
    const char *p = arg(c, i);
    size_t len = arg_len(c, i);

    for (size_t j = 0; j < len; j++)
        if (p[j] < '!' || p[j] > '~') {
            resp_add_error(c->out, "Client names cannot contain spaces, newlines or special "
                                   "characters.");
            return false;
        }
    free(c->name);
    c->name = NULL;
    if (len > 0) {
        if (!(c->name = malloc(len + 1))) {
            fprintf(stderr, "mini-redis: out of memory for a client name\n");
            exit(1);
        }
        memcpy(c->name, p, len + 1);
    }
    return true;
}

/* RESP2 only: HELLO and HELLO 2 answer as Redis does; HELLO 3, which asks
 * for RESP3, gets the error Redis gives for a version it does not know. */
static void cmd_hello(struct client *c)
{
    long long ver = 0;
    int j = 1;

    if (c->argc >= 2) {
        if (!util_str_to_ll(arg(c, 1), arg_len(c, 1), &ver)) {
            resp_add_error(c->out, "Protocol version is not an integer or out of range");
            return;
        }
        j++;
        if (ver != 2) {
            resp_add_error(c->out, "NOPROTO unsupported protocol version");
            return;
        }
    }
    for (; j < c->argc; j++) {
        if (!strcasecmp(arg(c, j), "SETNAME") && c->argc - 1 - j >= 1) {
            if (!client__set_name(c, ++j))
                return;
        } else {
            resp_add_error(c->out, "Syntax error in HELLO option '%s'", arg(c, j));
            return;
        }
    }
    resp_add_array(c->out, 14); /* a map of 7 in RESP3; pairs in an array in RESP2 */
    resp_add_bulk(c->out, "server", 6);
    resp_add_bulk(c->out, "mini-redis", 10);
    resp_add_bulk(c->out, "version", 7);
    resp_add_bulk(c->out, REDIS_VERSION, strlen(REDIS_VERSION));
    resp_add_bulk(c->out, "proto", 5);
    resp_add_int(c->out, 2);
    resp_add_bulk(c->out, "id", 2);
    resp_add_int(c->out, c->id);
    resp_add_bulk(c->out, "mode", 4);
    resp_add_bulk(c->out, "standalone", 10);
    resp_add_bulk(c->out, "role", 4);
    resp_add_bulk(c->out, "master", 6);
    resp_add_bulk(c->out, "modules", 7);
    resp_add_array(c->out, 0);
}

/* CLIENT ID, CLIENT GETNAME, CLIENT SETNAME (clientCommand). */
static void cmd_client_id(struct client *c)
{
    resp_add_int(c->out, c->id);
}

static void cmd_client_getname(struct client *c)
{
    if (c->name)
        resp_add_bulk(c->out, c->name, strlen(c->name));
    else
        resp_add_null(c->out);
}

static void cmd_client_setname(struct client *c)
{
    if (client__set_name(c, 2))
        reply_ok(c);
}

/* RESET (resetCommand): out of MULTI, out of every channel and pattern,
 * no name; the connection as it was when it came. */
static void cmd_reset(struct client *c)
{
    multi_discard(c);
    pubsub_forget(c);
    free(c->name);
    c->name = NULL;
    resp_add_simple(c->out, "RESET");
}

static void cmd_time(struct client *c)
{
    struct timespec ts;
    char sec[32], usec[16];
    int ns, nu;

    if (clock_gettime(CLOCK_REALTIME, &ts) < 0) {
        resp_add_error(c->out, "clock_gettime failed");
        return;
    }
    ns = snprintf(sec, sizeof(sec), "%lld", (long long)ts.tv_sec);
    nu = snprintf(usec, sizeof(usec), "%ld", ts.tv_nsec / 1000);
    resp_add_array(c->out, 2);
    resp_add_bulk(c->out, sec, (size_t)ns);
    resp_add_bulk(c->out, usec, (size_t)nu);
}

/* SAVE: the file written on the loop, which stops meanwhile; BGSAVE: in a
 * child (rdb.c), the loop going on. Their replies are saveCommand's and
 * bgsaveCommand's (src/rdb.c at 7.0.15); BGSAVE SCHEDULE is not there: it
 * gets the syntax error of any other argument. */
static void cmd_save(struct client *c)
{
    struct server_state *srv = c->srv;
    char why[PATH_MAX + 64];

    if (srv->save_child) {
        resp_add_error(c->out, "Background save already in progress");
    } else if (rdb_save(&srv->db, srv->rdb_dir, srv->rdb_name, db_now_ms(), why, sizeof(why)) < 0) {
        fprintf(stderr, "mini-redis: SAVE: %s\n", why);
        buf_append(c->out, "-ERR\r\n", 6); /* shared.err: no message */
    } else {
        srv->lastsave = time(NULL);
        reply_ok(c);
    }
}

static void cmd_bgsave(struct client *c)
{
    struct server_state *srv = c->srv;
    pid_t pid;

    if (c->argc > 1) {
        reply_syntax_error(c);
    } else if (srv->save_child) {
        resp_add_error(c->out, "Background save already in progress");
    } else if ((pid = rdb_save_child(&srv->db, srv->rdb_dir, srv->rdb_name)) < 0) {
        fprintf(stderr, "mini-redis: BGSAVE: fork: %s\n", strerror((int)-pid));
        buf_append(c->out, "-ERR\r\n", 6);
    } else {
        fprintf(stderr, "mini-redis: background saving started by pid %d\n", (int)pid);
        srv->save_child = pid;
        srv->child_started(srv);
        resp_add_simple(c->out, "Background saving started");
    }
}

static void cmd_lastsave(struct client *c)
{
    resp_add_int(c->out, c->srv->lastsave);
}

/* INFO [section ...]: the sections server, clients and keyspace, with
 * Redis's field names (genRedisInfoString) and mini-redis's values.
 * "default", "all" and "everything" are the three; a section mini-redis
 * does not have is an empty one, as an unknown section is in Redis. */
static bool info__wants(struct client *c, const char *section)
{
    if (c->argc == 1)
        return true;
    for (int i = 1; i < c->argc; i++)
        if (!strcasecmp(arg(c, i), section) || !strcasecmp(arg(c, i), "default") ||
            !strcasecmp(arg(c, i), "all") || !strcasecmp(arg(c, i), "everything"))
            return true;
    return false;
}

static void info__line(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void info__line(struct buf *b, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n > 0)
        buf_append(b, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
    buf_append(b, "\r\n", 2);
}

static void cmd_info(struct client *c)
{
    struct server_state *srv = c->srv;
    struct buf b = BUF_INIT;
    int64_t up = (c->now - srv->started_ms) / 1000;
    struct utsname u;

    if (info__wants(c, "server")) {
        if (uname(&u) < 0)
            strcpy(u.sysname, "unknown"), u.release[0] = u.machine[0] = '\0';
        info__line(&b, "# Server");
        info__line(&b, "redis_version:%s", REDIS_VERSION);
        info__line(&b, "redis_mode:standalone");
        info__line(&b, "os:%s %s %s", u.sysname, u.release, u.machine);
        info__line(&b, "arch_bits:%zu", sizeof(void *) * 8);
        info__line(&b, "multiplexing_api:%s", srv->backend);
        info__line(&b, "process_id:%ld", (long)getpid());
        info__line(&b, "tcp_port:%d", srv->port);
        info__line(&b, "server_time_usec:%lld", (long long)c->now * 1000);
        info__line(&b, "uptime_in_seconds:%lld", (long long)up);
        info__line(&b, "uptime_in_days:%lld", (long long)up / 86400);
        info__line(&b, "hz:10");
    }
    if (info__wants(c, "clients")) {
        if (buf_len(&b))
            buf_append(&b, "\r\n", 2);
        info__line(&b, "# Clients");
        info__line(&b, "connected_clients:%lld", srv->connected);
        info__line(&b, "blocked_clients:%lld", srv->blocked);
        info__line(&b, "pubsub_channels:%zu", srv->channels.count);
        info__line(&b, "pubsub_patterns:%zu", srv->patterns.count);
    }
    if (info__wants(c, "keyspace")) {
        if (buf_len(&b))
            buf_append(&b, "\r\n", 2);
        info__line(&b, "# Keyspace");
        if (srv->db.count > 0)
            info__line(&b, "db0:keys=%zu,expires=%zu,avg_ttl=0", srv->db.count, srv->db.nttl);
    }
    resp_add_bulk(c->out, buf_len(&b) ? buf_peek(&b) : "", buf_len(&b));
    buf_free(&b);
}

/* ---- the table ----------------------------------------------------------------------- */

static void cmd_command(struct client *c);
static void cmd_command_count(struct client *c);
static void cmd_command_help(struct client *c);

/* A command whose first argument names what it does (Redis 7's "container
 * commands"): COMMAND COUNT is the command "command|count", with its own
 * arity. There is no COMMAND DOCS, as in Redis 6: redis-cli, which asks for
 * it as it starts, then takes the help it shows from its own copy
 * (redis-cli.c cliInitHelp). Each list ends with an empty line. */
static const struct cmd client_subcommands[] = {
    {"client|getname", 2, cmd_client_getname, 0, 0, 0, NULL},
    {"client|id", 2, cmd_client_id, 0, 0, 0, NULL},
    {"client|setname", 3, cmd_client_setname, 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static const struct cmd command_subcommands[] = {
    {"command|count", 2, cmd_command_count, 0, 0, 0, NULL},
    {"command|help", 2, cmd_command_help, 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static const struct cmd pubsub_subcommands[] = {
    {"pubsub|channels", -2, cmd_pubsub_channels, 0, 0, 0, NULL},
    {"pubsub|numpat", 2, cmd_pubsub_numpat, 0, 0, 0, NULL},
    {"pubsub|numsub", -2, cmd_pubsub_numsub, 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

/* snippet: table */
/* Sorted by name (cmd__find bisects it). arity: N exactly N words, -N at
 * least N, the name included. */
static const struct cmd cmd_table[] = {
    {"append", 3, cmd_append, 1, 1, 1, NULL},
    {"bgsave", -1, cmd_bgsave, 0, 0, 0, NULL},
    {"blmove", 6, cmd_blmove, 1, 2, 1, NULL},
    {"blmpop", -5, cmd_blmpop, 0, 0, 0, NULL},
    {"blpop", -3, cmd_blpop, 1, -2, 1, NULL},
    {"brpop", -3, cmd_brpop, 1, -2, 1, NULL},
    {"brpoplpush", 4, cmd_brpoplpush, 1, 2, 1, NULL},
    {"client", -2, NULL, 0, 0, 0, client_subcommands},
    {"command", -1, cmd_command, 0, 0, 0, command_subcommands},
    {"dbsize", 1, cmd_dbsize, 0, 0, 0, NULL},
    {"decr", 2, cmd_decr, 1, 1, 1, NULL},
    {"decrby", 3, cmd_decrby, 1, 1, 1, NULL},
    {"del", -2, cmd_del, 1, -1, 1, NULL},
    {"discard", 1, cmd_discard, 0, 0, 0, NULL},
    {"echo", 2, cmd_echo, 0, 0, 0, NULL},
    {"exec", 1, cmd_exec, 0, 0, 0, NULL},
    {"exists", -2, cmd_exists, 1, -1, 1, NULL},
    {"expire", -3, cmd_expire, 1, 1, 1, NULL},
    {"expireat", -3, cmd_expireat, 1, 1, 1, NULL},
    {"expiretime", 2, cmd_expiretime, 1, 1, 1, NULL},
    {"flushall", -1, cmd_flushdb, 0, 0, 0, NULL},
    {"flushdb", -1, cmd_flushdb, 0, 0, 0, NULL},
    {"get", 2, cmd_get, 1, 1, 1, NULL},
    {"getdel", 2, cmd_getdel, 1, 1, 1, NULL},
    {"getex", -2, cmd_getex, 1, 1, 1, NULL},
    {"getrange", 4, cmd_getrange, 1, 1, 1, NULL},
    {"getset", 3, cmd_getset, 1, 1, 1, NULL},
    {"hello", -1, cmd_hello, 0, 0, 0, NULL},
    {"incr", 2, cmd_incr, 1, 1, 1, NULL},
    {"incrby", 3, cmd_incrby, 1, 1, 1, NULL},
    {"incrbyfloat", 3, cmd_incrbyfloat, 1, 1, 1, NULL},
    {"info", -1, cmd_info, 0, 0, 0, NULL},
    {"keys", 2, cmd_keys, 0, 0, 0, NULL},
    {"lastsave", 1, cmd_lastsave, 0, 0, 0, NULL},
    {"lindex", 3, cmd_lindex, 1, 1, 1, NULL},
    {"linsert", 5, cmd_linsert, 1, 1, 1, NULL},
    {"llen", 2, cmd_llen, 1, 1, 1, NULL},
    {"lmove", 5, cmd_lmove, 1, 2, 1, NULL},
    {"lmpop", -4, cmd_lmpop, 0, 0, 0, NULL},
    {"lpop", -2, cmd_lpop, 1, 1, 1, NULL},
    {"lpos", -3, cmd_lpos, 1, 1, 1, NULL},
    {"lpush", -3, cmd_lpush, 1, 1, 1, NULL},
    {"lpushx", -3, cmd_lpushx, 1, 1, 1, NULL},
    {"lrange", 4, cmd_lrange, 1, 1, 1, NULL},
    {"lrem", 4, cmd_lrem, 1, 1, 1, NULL},
    {"lset", 4, cmd_lset, 1, 1, 1, NULL},
    {"ltrim", 4, cmd_ltrim, 1, 1, 1, NULL},
    {"mget", -2, cmd_mget, 1, -1, 1, NULL},
    {"mset", -3, cmd_mset, 1, -1, 2, NULL},
    {"msetnx", -3, cmd_msetnx, 1, -1, 2, NULL},
    {"multi", 1, cmd_multi, 0, 0, 0, NULL},
    {"persist", 2, cmd_persist, 1, 1, 1, NULL},
    {"pexpire", -3, cmd_pexpire, 1, 1, 1, NULL},
    {"pexpireat", -3, cmd_pexpireat, 1, 1, 1, NULL},
    {"pexpiretime", 2, cmd_pexpiretime, 1, 1, 1, NULL},
    {"ping", -1, cmd_ping, 0, 0, 0, NULL},
    {"psetex", 4, cmd_psetex, 1, 1, 1, NULL},
    {"psubscribe", -2, cmd_psubscribe, 0, 0, 0, NULL},
    {"pttl", 2, cmd_pttl, 1, 1, 1, NULL},
    {"publish", 3, cmd_publish, 0, 0, 0, NULL},
    {"pubsub", -2, NULL, 0, 0, 0, pubsub_subcommands},
    {"punsubscribe", -1, cmd_punsubscribe, 0, 0, 0, NULL},
    {"quit", -1, cmd_quit, 0, 0, 0, NULL},
    {"randomkey", 1, cmd_randomkey, 0, 0, 0, NULL},
    {"rename", 3, cmd_rename, 1, 2, 1, NULL},
    {"renamenx", 3, cmd_renamenx, 1, 2, 1, NULL},
    {"reset", 1, cmd_reset, 0, 0, 0, NULL},
    {"rpop", -2, cmd_rpop, 1, 1, 1, NULL},
    {"rpoplpush", 3, cmd_rpoplpush, 1, 2, 1, NULL},
    {"rpush", -3, cmd_rpush, 1, 1, 1, NULL},
    {"rpushx", -3, cmd_rpushx, 1, 1, 1, NULL},
    {"save", 1, cmd_save, 0, 0, 0, NULL},
    {"scan", -2, cmd_scan, 0, 0, 0, NULL},
    {"select", 2, cmd_select, 0, 0, 0, NULL},
    {"set", -3, cmd_set, 1, 1, 1, NULL},
    {"setex", 4, cmd_setex, 1, 1, 1, NULL},
    {"setnx", 3, cmd_setnx, 1, 1, 1, NULL},
    {"setrange", 4, cmd_setrange, 1, 1, 1, NULL},
    {"strlen", 2, cmd_strlen, 1, 1, 1, NULL},
    {"subscribe", -2, cmd_subscribe, 0, 0, 0, NULL},
    {"time", 1, cmd_time, 0, 0, 0, NULL},
    {"ttl", 2, cmd_ttl, 1, 1, 1, NULL},
    {"type", 2, cmd_type, 1, 1, 1, NULL},
    {"unsubscribe", -1, cmd_unsubscribe, 0, 0, 0, NULL},
};
/* end snippet */

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static const struct cmd *cmd__find(const char *name)
{
    size_t lo = 0, hi = COUNT_OF(cmd_table);

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int d = strcasecmp(name, cmd_table[mid].name);
        if (d == 0)
            return &cmd_table[mid];
        if (d < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

static const struct cmd *cmd__find_sub(const struct cmd *container, const char *sub)
{
    for (const struct cmd *k = container->subs; k->name; k++)
        if (!strcasecmp(sub, strchr(k->name, '|') + 1))
            return k;
    return NULL;
}

void reply_arity(struct client *c)
{
    resp_add_error(c->out, "wrong number of arguments for '%s' command", c->cmd->name);
}

void reply_expire_time(struct client *c)
{
    resp_add_error(c->out, "invalid expire time in '%s' command", c->cmd->name);
}

/* "unknown command 'foo', with args beginning with: 'a' 'b' ": the
 * arguments, quoted, until 128 bytes of them are written. */
static void cmd__unknown(struct client *c)
{
    char args[160] = "";
    size_t len = 0;

    for (int i = 1; i < c->argc && len < 128; i++) {
        int n = snprintf(args + len, sizeof(args) - len, "'%.*s' ", 128 - (int)len, arg(c, i));
        len += (size_t)n < sizeof(args) - len ? (size_t)n : sizeof(args) - len - 1;
    }
    resp_add_error(c->out, "unknown command '%.128s', with args beginning with: %s", arg(c, 0),
                   args);
}

/* The commands a RESP2 subscriber may send: its client reads every reply
 * as a message (processCommand). */
static bool cmd__allowed_subscribed(const struct cmd *cmd)
{
    return cmd->proc == cmd_ping || cmd->proc == cmd_subscribe || cmd->proc == cmd_psubscribe ||
           cmd->proc == cmd_unsubscribe || cmd->proc == cmd_punsubscribe || cmd->proc == cmd_quit ||
           cmd->proc == cmd_reset;
}

/* The commands MULTI runs rather than queues. */
static bool cmd__runs_in_multi(const struct cmd *cmd)
{
    return cmd->proc == cmd_exec || cmd->proc == cmd_discard || cmd->proc == cmd_multi ||
           cmd->proc == cmd_quit || cmd->proc == cmd_reset;
}

/* A command refused before it runs, inside MULTI, dooms the transaction
 * (flagTransaction). */
static void cmd__rejected(struct client *c)
{
    if (c->in_multi)
        c->multi_dirty = true;
}

/* snippet: execute */
void cmd_execute(struct client *c)
{
    const struct cmd *cmd = cmd__find(arg(c, 0));

    if (cmd && cmd->subs && c->argc >= 2) {
        const struct cmd *sub = cmd__find_sub(cmd, arg(c, 1));
        if (!sub) {
            char upper[16];
            snprintf(upper, sizeof(upper), "%s", arg(c, 0));
            for (char *p = upper; *p; p++)
                *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
            resp_add_error(c->out, "unknown subcommand '%.128s'. Try %s HELP.", arg(c, 1), upper);
            cmd__rejected(c);
            return;
        }
        cmd = sub;
    }
    if (!cmd) {
        cmd__unknown(c);
        cmd__rejected(c);
        return;
    }
    c->cmd = cmd;
    if ((cmd->arity > 0 && cmd->arity != c->argc) || c->argc < -cmd->arity) {
        if (c->in_multi && cmd->proc == cmd_exec) { /* execCommandAbort: the end of it */
            resp_add_error(c->out, "EXECABORT Transaction discarded because of: wrong number of "
                                   "arguments for 'exec' command");
            multi_discard(c);
            return;
        }
        reply_arity(c);
        cmd__rejected(c);
        return;
    }
    if (pubsub_count(c) > 0 && !cmd__allowed_subscribed(cmd)) {
        resp_add_error(c->out,
                       "Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / "
                       "PING / QUIT / RESET are allowed in this context",
                       cmd->name);
        cmd__rejected(c);
        return;
    }
    if (c->in_multi && !cmd__runs_in_multi(cmd)) {
        multi_queue(c);
        return;
    }
    cmd_call(c);
    /* A push (or an EXEC of pushes) may have given a list to keys that
     * clients are blocked on: they are served now, before the next
     * command, as Redis does after each one (handleClientsBlockedOnKeys). */
    blocked_serve(c->srv);
}
/* end snippet */

void cmd_call(struct client *c)
{
    c->now = db_now_ms();
    c->cmd->proc(c);
}

void cmd_client_free(struct client *c)
{
    blocked_remove(c);
    multi_discard(c);
    pubsub_forget(c);
    dict_free(&c->sub_channels);
    dict_free(&c->sub_patterns);
    free(c->name);
    c->name = NULL;
}

/* COMMAND: what Redis 6 answered, the first six fields of Redis 7's: name,
 * arity, flags (none here), first key, last key, step between keys. */
static void cmd_command(struct client *c)
{
    resp_add_array(c->out, (long long)COUNT_OF(cmd_table));
    for (size_t i = 0; i < COUNT_OF(cmd_table); i++) {
        const struct cmd *k = &cmd_table[i];
        resp_add_array(c->out, 6);
        resp_add_bulk(c->out, k->name, strlen(k->name));
        resp_add_int(c->out, k->arity);
        resp_add_array(c->out, 0);
        resp_add_int(c->out, k->first_key);
        resp_add_int(c->out, k->last_key);
        resp_add_int(c->out, k->key_step);
    }
}

static void cmd_command_count(struct client *c)
{
    resp_add_int(c->out, (long long)COUNT_OF(cmd_table));
}

static void cmd_command_help(struct client *c)
{
    static const char *const lines[] = {
        "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "(no subcommand)",
        "    Return the name, arity and key positions of every command of mini-redis.",
        "COUNT",
        "    Return the number of commands of mini-redis.",
        "HELP",
        "    Print this help.",
    };

    resp_add_array(c->out, (long long)COUNT_OF(lines));
    for (size_t i = 0; i < COUNT_OF(lines); i++)
        resp_add_simple(c->out, lines[i]);
}
