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

#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

static void cmd_ping(struct client *c)
{
    if (c->argc > 2)
        reply_arity(c);
    else if (c->argc == 1)
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

/* clientSetNameOrReply (src/networking.c): printable, no spaces. */
static bool hello__set_name(struct client *c, int i)
{
    const char *p = arg(c, i);
    size_t len = arg_len(c, i);

    for (size_t j = 0; j < len; j++)
        if (p[j] < '!' || p[j] > '~') {
            resp_add_error(c->out, "Client names cannot contain spaces, newlines or special "
                                   "characters.");
            return false;
        }
    snprintf(c->name, sizeof(c->name), "%.*s", (int)(len < sizeof(c->name) ? len : 0), p);
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
            if (!hello__set_name(c, ++j))
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

/* ---- the table ----------------------------------------------------------------------- */

static void cmd_command(struct client *c);
static void cmd_command_count(struct client *c);
static void cmd_command_help(struct client *c);

/* snippet: table */
/* Sorted by name (cmd__find bisects it). arity: N exactly N words, -N at
 * least N, the name included. */
static const struct cmd cmd_table[] = {
    {"append", 3, cmd_append, 1, 1, 1},
    {"command", -1, cmd_command, 0, 0, 0},
    {"dbsize", 1, cmd_dbsize, 0, 0, 0},
    {"decr", 2, cmd_decr, 1, 1, 1},
    {"decrby", 3, cmd_decrby, 1, 1, 1},
    {"del", -2, cmd_del, 1, -1, 1},
    {"echo", 2, cmd_echo, 0, 0, 0},
    {"exists", -2, cmd_exists, 1, -1, 1},
    {"expire", -3, cmd_expire, 1, 1, 1},
    {"expireat", -3, cmd_expireat, 1, 1, 1},
    {"expiretime", 2, cmd_expiretime, 1, 1, 1},
    {"flushall", -1, cmd_flushdb, 0, 0, 0},
    {"flushdb", -1, cmd_flushdb, 0, 0, 0},
    {"get", 2, cmd_get, 1, 1, 1},
    {"getdel", 2, cmd_getdel, 1, 1, 1},
    {"getex", -2, cmd_getex, 1, 1, 1},
    {"getrange", 4, cmd_getrange, 1, 1, 1},
    {"getset", 3, cmd_getset, 1, 1, 1},
    {"hello", -1, cmd_hello, 0, 0, 0},
    {"incr", 2, cmd_incr, 1, 1, 1},
    {"incrby", 3, cmd_incrby, 1, 1, 1},
    {"incrbyfloat", 3, cmd_incrbyfloat, 1, 1, 1},
    {"keys", 2, cmd_keys, 0, 0, 0},
    {"mget", -2, cmd_mget, 1, -1, 1},
    {"mset", -3, cmd_mset, 1, -1, 2},
    {"msetnx", -3, cmd_msetnx, 1, -1, 2},
    {"persist", 2, cmd_persist, 1, 1, 1},
    {"pexpire", -3, cmd_pexpire, 1, 1, 1},
    {"pexpireat", -3, cmd_pexpireat, 1, 1, 1},
    {"pexpiretime", 2, cmd_pexpiretime, 1, 1, 1},
    {"ping", -1, cmd_ping, 0, 0, 0},
    {"psetex", 4, cmd_psetex, 1, 1, 1},
    {"pttl", 2, cmd_pttl, 1, 1, 1},
    {"quit", -1, cmd_quit, 0, 0, 0},
    {"randomkey", 1, cmd_randomkey, 0, 0, 0},
    {"rename", 3, cmd_rename, 1, 2, 1},
    {"renamenx", 3, cmd_renamenx, 1, 2, 1},
    {"scan", -2, cmd_scan, 0, 0, 0},
    {"select", 2, cmd_select, 0, 0, 0},
    {"set", -3, cmd_set, 1, 1, 1},
    {"setex", 4, cmd_setex, 1, 1, 1},
    {"setnx", 3, cmd_setnx, 1, 1, 1},
    {"setrange", 4, cmd_setrange, 1, 1, 1},
    {"strlen", 2, cmd_strlen, 1, 1, 1},
    {"ttl", 2, cmd_ttl, 1, 1, 1},
    {"type", 2, cmd_type, 1, 1, 1},
};

/* A command whose first argument names what it does (Redis 7's "container
 * commands"): COMMAND COUNT is the command "command|count". There is no
 * COMMAND DOCS, as in Redis 6: redis-cli, which asks for it as it starts,
 * then takes the help it shows from its own copy (redis-cli.c cliInitHelp). */
static const struct cmd command_subcommands[] = {
    {"command|count", 2, cmd_command_count, 0, 0, 0},
    {"command|help", 2, cmd_command_help, 0, 0, 0},
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

static const struct cmd *cmd__find_sub(const char *sub)
{
    for (size_t i = 0; i < COUNT_OF(command_subcommands); i++)
        if (!strcasecmp(sub, strchr(command_subcommands[i].name, '|') + 1))
            return &command_subcommands[i];
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

/* snippet: execute */
void cmd_execute(struct client *c)
{
    const struct cmd *cmd = cmd__find(arg(c, 0));

    if (cmd && cmd->proc == cmd_command && c->argc >= 2) {
        const struct cmd *sub = cmd__find_sub(arg(c, 1));
        if (!sub) {
            char upper[16];
            snprintf(upper, sizeof(upper), "%s", arg(c, 0));
            for (char *p = upper; *p; p++)
                *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
            resp_add_error(c->out, "unknown subcommand '%.128s'. Try %s HELP.", arg(c, 1), upper);
            return;
        }
        cmd = sub;
    }
    if (!cmd) {
        cmd__unknown(c);
        return;
    }
    c->cmd = cmd;
    if ((cmd->arity > 0 && cmd->arity != c->argc) || c->argc < -cmd->arity) {
        reply_arity(c);
        return;
    }
    c->now = db_now_ms();
    cmd->proc(c);
}
/* end snippet */

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
