/* SPDX-License-Identifier: MIT */
/* timer.c: timers in a binary min-heap, and rt_delay (Task.Delay).
 *
 * The heap is an array where slot i's children are 2i+1 and 2i+2 and no
 * child is due before its parent, so the soonest deadline is always
 * heap[0]: finding it is O(1), adding or removing a timer O(log n). libuv
 * keeps its timers the same way. (A timing wheel, as the Linux kernel and
 * Netty use, makes add and remove O(1) by rounding deadlines into buckets;
 * for a few thousand timers the heap is simpler and exact.)
 *
 * Each timer remembers its slot, so a cancelled timer leaves the heap at
 * once, wherever it is, instead of lingering until its deadline: a server
 * that arms a 30 s idle timeout per request and cancels it 1 ms later
 * would otherwise hold millions of dead timers.
 */
#include "todo.h"
#include "rt_impl.h"

#include "clock.h"

#include <errno.h>
#include <stdlib.h>

static bool timer__before(const struct rt_timer *a, const struct rt_timer *b)
{
    return a->deadline_ms < b->deadline_ms || (a->deadline_ms == b->deadline_ms && a->seq < b->seq);
}

static void timer__place(struct rt *rt, size_t i, struct rt_timer *t)
{
    rt->heap[i] = t;
    t->slot = i;
}

/* Move the timer at slot i towards the root while it is due before its parent. */
static void timer__sift_up(struct rt *rt, size_t i)
{
    struct rt_timer *t = rt->heap[i];

    while (i > 0 && timer__before(t, rt->heap[(i - 1) / 2])) {
        timer__place(rt, i, rt->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    timer__place(rt, i, t);
}

/* Move the timer at slot i down while a child is due before it. */
static void timer__sift_down(struct rt *rt, size_t i)
{
    struct rt_timer *t = rt->heap[i];

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= rt->nheap)
            break;
        if (c + 1 < rt->nheap && timer__before(rt->heap[c + 1], rt->heap[c]))
            c++;
        if (!timer__before(rt->heap[c], t))
            break;
        timer__place(rt, i, rt->heap[c]);
        i = c;
    }
    timer__place(rt, i, t);
}

void rt__timer_add(struct rt *rt, struct rt_timer *t, unsigned ms)
{
    if (rt->nheap == rt->heap_cap) {
        size_t cap = rt->heap_cap ? 2 * rt->heap_cap : 64;
        struct rt_timer **grown = realloc(rt->heap, cap * sizeof(*grown));
        if (!grown) {
            perror("rt: realloc(timer heap)");
            exit(1);
        }
        rt->heap = grown;
        rt->heap_cap = cap;
    }
    t->deadline_ms = clock_now_ms() + ms;
    t->seq = rt->timer_seq++;
    timer__place(rt, rt->nheap++, t);
    timer__sift_up(rt, t->slot);
}

/* Take a pending timer out of the heap. False if it is not in it (it fired,
 * or was removed before). */
bool rt__timer_remove(struct rt *rt, struct rt_timer *t)
{
    TODO("take t out: fill its slot with the last timer, sift that one");
}

int rt__timer_wait_ms(struct rt *rt)
{
    int64_t left;

    if (rt->nheap == 0)
        return -1;
    left = rt->heap[0]->deadline_ms - clock_now_ms();
    return left < 0 ? 0 : left > 1000000 ? 1000000 : (int)left;
}

void rt__timers_expire(struct rt *rt)
{
    int64_t now = clock_now_ms();

    while (rt->nheap > 0 && rt->heap[0]->deadline_ms <= now) {
        struct rt_timer *t = rt->heap[0]; /* the root leaves; the last timer sinks from there */

        t->slot = RT_TIMER_IDLE;
        if (--rt->nheap > 0) {
            timer__place(rt, 0, rt->heap[rt->nheap]);
            timer__sift_down(rt, 0);
        }
        t->fire(t); /* may add timers: the heap is consistent again */
    }
}

/* ---- rt_delay ---------------------------------------------------------------- */

struct rt_delay {
    struct rt_future f;
    struct rt_timer timer;
    struct rt_reg reg; /* in the token: cancelling it removes the timer */
};

static void delay__free(struct rt_future *f)
{
    free(RT_CONTAINER(f, struct rt_delay, f));
}

static void delay__fire(struct rt_timer *t)
{
    struct rt_delay *d = RT_CONTAINER(t, struct rt_delay, timer);

    rt__token_unregister(&d->reg);
    rt__future_complete(&d->f, 0);
    rt_future_release(&d->f); /* the timer's reference */
}

static void delay__cancel(struct rt_reg *r)
{
    struct rt_delay *d = RT_CONTAINER(r, struct rt_delay, reg);

    if (rt__timer_remove(d->f.rt, &d->timer)) {
        rt__future_complete(&d->f, -ECANCELED);
        rt_future_release(&d->f);
    }
}

struct rt_future *rt_delay(struct rt *rt, unsigned ms, struct rt_token *tok)
{
    struct rt_delay *d = rt__alloc(sizeof(*d));

    rt__future_init(&d->f, rt, "delay", 2, delay__free);
    d->timer.slot = RT_TIMER_IDLE;
    d->timer.fire = delay__fire;
    if (tok && !rt__token_register(tok, &d->reg, delay__cancel)) {
        rt__future_complete(&d->f, -ECANCELED);
        rt_future_release(&d->f);
        return &d->f;
    }
    rt__timer_add(rt, &d->timer, ms);
    return &d->f;
}
