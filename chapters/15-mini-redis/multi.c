/* SPDX-License-Identifier: MIT */
/* multi.c: MULTI, EXEC and DISCARD (cmd.h), after redis's src/multi.c at
 * tag 7.0.15. There is no WATCH: a transaction here is a batch that runs
 * whole, with no other client's command in between, never a conditional one.
 *
 * After MULTI, cmd_execute() checks each command as it would run it (a
 * name it knows, the right number of words) and, instead of running it,
 * copies it into the client's queue and answers +QUEUED. A command refused
 * then marks the transaction, and EXEC answers -EXECABORT and runs nothing.
 * EXEC runs the queue one command after another, each replying as it would
 * alone, inside one array: an error at run time (WRONGTYPE) is that
 * command's reply, and the others still run.
 */
#include "cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A command of the queue: its own copy of the request (the query buffer
 * moves on), laid out as the parser lays it out, each argument followed by
 * a '\0', so that arg() reads it the same way. */
struct queued {
    const struct cmd *cmd;
    char *req;
    struct resp_arg *argv;
    int argc;
};

static void *multi__alloc(size_t size)
{
    void *p = malloc(size);

    if (!p) {
        fprintf(stderr, "mini-redis: out of memory (%zu bytes) for MULTI\n", size);
        exit(1);
    }
    return p;
}

void multi_queue(struct client *c)
{
    struct queued *q;
    size_t len = 0, off = 0;

    if (c->nqueued == c->queue_cap) {
        int cap = c->queue_cap ? c->queue_cap * 2 : 8;
        struct queued *grown = realloc(c->queue, (size_t)cap * sizeof(*grown));
        if (!grown) {
            fprintf(stderr, "mini-redis: out of memory for %d queued commands\n", cap);
            exit(1);
        }
        c->queue = grown;
        c->queue_cap = cap;
    }
    q = &c->queue[c->nqueued++];
    for (int i = 0; i < c->argc; i++)
        len += arg_len(c, i) + 1;
    q->cmd = c->cmd;
    q->argc = c->argc;
    q->req = multi__alloc(len);
    q->argv = multi__alloc((size_t)c->argc * sizeof(*q->argv));
    for (int i = 0; i < c->argc; i++) {
        memcpy(q->req + off, arg(c, i), arg_len(c, i) + 1);
        q->argv[i] = (struct resp_arg){off, arg_len(c, i)};
        off += arg_len(c, i) + 1;
    }
    resp_add_simple(c->out, "QUEUED");
}

void multi_discard(struct client *c)
{
    for (int i = 0; i < c->nqueued; i++) {
        free(c->queue[i].req);
        free(c->queue[i].argv);
    }
    free(c->queue);
    c->queue = NULL;
    c->nqueued = c->queue_cap = 0;
    c->in_multi = c->multi_dirty = false;
}

void cmd_multi(struct client *c)
{
    if (c->in_multi) { /* refused, but the transaction goes on */
        resp_add_error(c->out, "MULTI calls can not be nested");
        return;
    }
    c->in_multi = true;
    reply_ok(c);
}

void cmd_discard(struct client *c)
{
    if (!c->in_multi) {
        resp_add_error(c->out, "DISCARD without MULTI");
        return;
    }
    multi_discard(c);
    reply_ok(c);
}

/* snippet: exec */
void cmd_exec(struct client *c)
{
    struct queued *queue = c->queue;
    int n = c->nqueued;

    if (!c->in_multi) {
        resp_add_error(c->out, "EXEC without MULTI");
        return;
    }
    if (c->multi_dirty) {
        resp_add_error(c->out, "EXECABORT Transaction discarded because of previous errors.");
        multi_discard(c);
        return;
    }
    /* The queue leaves the client before its commands run: they run as a
     * client in no transaction would. */
    c->queue = NULL;
    c->nqueued = c->queue_cap = 0;
    c->in_multi = false;
    resp_add_array(c->out, n);
    c->deny_blocking = true; /* a blocking pop answers as if it timed out */
    for (int i = 0; i < n; i++) {
        c->req = queue[i].req;
        c->argv = queue[i].argv;
        c->argc = queue[i].argc;
        c->cmd = queue[i].cmd;
        cmd_call(c);
        free(queue[i].req);
        free(queue[i].argv);
    }
    free(queue);
    c->deny_blocking = false;
}
/* end snippet */
