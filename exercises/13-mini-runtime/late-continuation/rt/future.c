/* SPDX-License-Identifier: MIT */
/* future.c: futures, the runtime's Task without the code.
 *
 * A future is a result that is not there yet, plus the continuations that
 * wait for it. Completing one never runs them: it moves them to the run
 * queue (rt__post), and the loop runs them later, each from the loop's own
 * stack frame. So a chain of a million futures, each completed by the
 * continuation of the one before, costs a million turns of a loop, not a
 * million nested calls: the trampoline (tests: rt-test chain).
 *
 * Futures are counted references, like .NET's garbage-collected Task
 * objects are reachable or not: the caller holds one, the producer one
 * while it works, a combinator one per child it watches.
 */
#include "rt_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

void *rt__alloc(size_t size)
{
    void *p = calloc(1, size);

    if (!p) {
        fprintf(stderr, "rt: calloc(%zu): out of memory\n", size);
        exit(1);
    }
    return p;
}

void rt__future_init(struct rt_future *f, struct rt *rt, const char *name, unsigned refs,
                     void (*free_fn)(struct rt_future *))
{
    f->rt = rt;
    f->refs = refs;
    f->name = name;
    f->free = free_fn;
    rt->nfutures++;
}

void rt__future_complete(struct rt_future *f, long res)
{
    struct rt_cont *c = f->conts, *next;

    if (f->done) {
        fprintf(stderr, "rt: %s completed twice (%ld, then %ld)\n", f->name, f->res, res);
        abort();
    }
    f->done = true;
    f->res = res;
    f->conts = NULL;
    for (; c; c = next) { /* queued, not called: the trampoline */
        next = c->next;
        rt__post(f->rt, c);
    }
}

void rt__future_on_done(struct rt_future *f, struct rt_cont *c)
{
    c->next = f->conts;
    f->conts = c;
}

long rt_future_result(struct rt_future *f)
{
    f->observed = true;
    return f->res;
}

struct rt_future *rt_future_ref(struct rt_future *f)
{
    f->refs++;
    return f;
}

void rt_future_release(struct rt_future *f)
{
    if (!f)
        return;
    if (f->refs == 0) {
        fprintf(stderr, "rt: %s released once too often\n", f->name);
        abort();
    }
    if (--f->refs == 0) {
        f->rt->nfutures--;
        f->free(f);
    }
}

long rt_future_take(struct rt_future *f)
{
    long res = rt_future_result(f);

    rt_future_release(f);
    return res;
}

/* ---- promises: futures completed by hand (TaskCompletionSource) ---------- */

static void future__free(struct rt_future *f)
{
    free(f);
}

struct rt_future *rt_promise(struct rt *rt, const char *name)
{
    struct rt_future *f = rt__alloc(sizeof(*f));

    rt__future_init(f, rt, name, 2, future__free);
    return f;
}

/* Completes it and drops the completer's reference. */
void rt_promise_complete(struct rt_future *f, long res)
{
    rt__future_complete(f, res);
    rt_future_release(f);
}
