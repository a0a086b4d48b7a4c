/* SPDX-License-Identifier: MIT */
/* when.c: combinators, Task.WhenAll and Task.WhenAny.
 *
 * A combinator is a future that watches others: it hangs one continuation
 * (an arm) on each child, and holds a reference to each until it completes.
 * The arms run from the run queue like any continuation. The combinator
 * keeps itself alive until its last arm has run, even after it completed:
 * when_any completes at the first child, and the others still finish later.
 */
#include "rt_impl.h"

#include <errno.h>
#include <stdlib.h>

struct when;

struct when_arm {
    struct rt_cont cont; /* queued when the child completes */
    struct when *w;
    struct rt_future *child;
    size_t index;
};

struct when {
    struct rt_future f;
    bool any;    /* when_any: complete with the first arm's index */
    size_t left; /* arms that have not run yet */
    long error;  /* when_all: the first error seen */
    struct when_arm arms[];
};

static void when__free(struct rt_future *f)
{
    free(RT_CONTAINER(f, struct when, f));
}

/* snippet: arm */
static void when__arm_done(struct rt_cont *c)
{
    struct when_arm *arm = RT_CONTAINER(c, struct when_arm, cont);
    struct when *w = arm->w;
    long res = arm->child->res;

    /* EXERCISE BEGIN when-any: count the arm in, complete w as any or all wants, release */
    w->left--;
    if (w->any) {
        if (!w->f.done)
            rt__future_complete(&w->f, (long)arm->index);
    } else {
        arm->child->observed = true; /* its error travels on in w */
        if (res < 0 && w->error == 0)
            w->error = res;
        if (w->left == 0)
            rt__future_complete(&w->f, w->error);
    }
    rt_future_release(arm->child);
    if (w->left == 0)
        rt_future_release(&w->f); /* the arms' reference */
    /* EXERCISE END */
}
/* end snippet */

static struct rt_future *when__new(struct rt *rt, struct rt_future **fs, size_t n, bool any)
{
    struct when *w = rt__alloc(sizeof(*w) + n * sizeof(w->arms[0]));

    rt__future_init(&w->f, rt, any ? "when_any" : "when_all", 2, when__free);
    w->any = any;
    w->left = n;
    if (n == 0) { /* all of nothing is done; the first of nothing never comes */
        rt__future_complete(&w->f, any ? -EINVAL : 0);
        rt_future_release(&w->f);
        return &w->f;
    }
    for (size_t i = 0; i < n; i++) {
        struct when_arm *arm = &w->arms[i];
        arm->cont.run = when__arm_done;
        arm->w = w;
        arm->child = rt_future_ref(fs[i]);
        arm->index = i;
        rt__future_on_done(fs[i], &arm->cont);
    }
    return &w->f;
}

struct rt_future *rt_when_all(struct rt *rt, struct rt_future **fs, size_t n)
{
    return when__new(rt, fs, n, false);
}

struct rt_future *rt_when_any(struct rt *rt, struct rt_future **fs, size_t n)
{
    return when__new(rt, fs, n, true);
}
