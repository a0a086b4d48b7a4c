/* SPDX-License-Identifier: MIT */
/* cancel.c: cancellation tokens (.NET's CancellationTokenSource).
 *
 * A token keeps a list of registrations: each operation in flight under it
 * (an I/O op, a delay, a blocking job), and each child token. Cancelling it
 * takes the whole list and calls every registration's cancel function once:
 * an I/O op asks its backend to stop (io_uring: IORING_OP_ASYNC_CANCEL;
 * epoll and kqueue: the op leaves the adapter's queue and the fd's interest
 * is dropped), a delay leaves the timer heap, a child token cancels its own
 * list. Every cancelled operation then completes with -ECANCELED (or with
 * its own result, if it finished first), and the task awaiting it goes on
 * from there: cancellation is a request, never a jump.
 *
 *     root (SIGINT, SIGTERM)
 *      ├── conn 1 ── recv in flight, request token ── cancel_after(5000)
 *      └── conn 2 ── send in flight
 */
#include "todo.h"
#include "rt_impl.h"

#include <stdio.h>
#include <stdlib.h>

bool rt__token_register(struct rt_token *tok, struct rt_reg *r, void (*cancel)(struct rt_reg *))
{
    if (tok->cancelled)
        return false;
    r->cancel = cancel;
    r->tok = tok;
    r->prev = NULL;
    r->next = tok->regs;
    if (tok->regs)
        tok->regs->prev = r;
    tok->regs = r;
    return true;
}

void rt__token_unregister(struct rt_reg *r)
{
    struct rt_token *tok = r->tok;

    if (!tok)
        return;
    if (r->prev)
        r->prev->next = r->next;
    else
        tok->regs = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->tok = NULL;
}

void rt_token_cancel(struct rt_token *tok)
{
    TODO("cancel once: the flag, the deadline, each registration");
}

static void token__parent_cancelled(struct rt_reg *r)
{
    rt_token_cancel(RT_CONTAINER(r, struct rt_token, link));
}

static void token__deadline(struct rt_timer *t)
{
    rt_token_cancel(RT_CONTAINER(t, struct rt_token, deadline));
}

struct rt_token *rt_token_new(struct rt *rt, struct rt_token *parent)
{
    struct rt_token *tok = rt__alloc(sizeof(*tok));

    tok->rt = rt;
    tok->parent = parent;
    tok->deadline.slot = RT_TIMER_IDLE;
    tok->deadline.fire = token__deadline;
    /* A child of a cancelled parent is born cancelled. */
    if (parent && !rt__token_register(parent, &tok->link, token__parent_cancelled))
        tok->cancelled = true;
    return tok;
}

void rt_token_cancel_after(struct rt_token *tok, unsigned ms)
{
    TODO("arm the deadline, or move the one already armed");
}

bool rt_token_cancelled(const struct rt_token *tok)
{
    return tok && tok->cancelled;
}

struct rt_token *rt_root_token(struct rt *rt)
{
    return rt->root;
}

void rt_token_free(struct rt_token *tok)
{
    if (!tok)
        return;
    if (tok->deadline.slot != RT_TIMER_IDLE)
        rt__timer_remove(tok->rt, &tok->deadline);
    rt__token_unregister(&tok->link);
    while (tok->regs) {
        struct rt_reg *r = tok->regs;
        if (r->cancel != token__parent_cancelled) {
            /* An operation still in flight would later unlink itself from
             * freed memory: a bug in the caller, not something to hide. */
            fprintf(stderr, "rt: rt_token_free: a token with operations still in flight\n");
            abort();
        }
        rt__token_unregister(r); /* a child: it lives on, unlinked */
    }
    free(tok);
}
