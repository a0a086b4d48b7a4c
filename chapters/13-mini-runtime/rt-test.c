/* SPDX-License-Identifier: MIT */
/* rt-test.c: the runtime's unit tests, one group per argument.
 *
 *     make -C chapters/13-mini-runtime
 *     build/chapters/13-mini-runtime/rt-test timers
 *     RT_BACKEND=epoll build/chapters/13-mini-runtime/rt-test cancel-io
 *
 * Groups: probe timers timer-cancel heap-remove heap-order when-all when-any
 * when-lifetimes continuations tokens (token-tree and cancel-after)
 * cancel-walk cancel-refuses cancel-io pooled errors unobserved chain N
 * block-on-inside deadlock shutdown offload. Each ends by checking that
 * every future it made was freed (rt->nfutures).
 * Exit 0 when every check passed ("all checks passed"), 77 when the backend
 * cannot run here (io_uring forbidden), 1 on a failed check, 2 on bad usage.
 * Times are checked with bounds a loaded machine keeps (order, "within 1 s").
 */
#include "check.h"
#include "clock.h"
#include "net.h"
#include "rt_impl.h" /* the tests look inside: the heap's size, pending counts */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct rt *test_rt(void)
{
    char why[256];
    int err;
    struct rt *rt = rt_create(&err, why, sizeof(why));

    if (!rt) {
        fprintf(stderr, "rt-test: %s\n", why);
        exit(err == -EINVAL ? 2 : CHECK_SKIP);
    }
    printf("backend %s\n", rt_backend_name(rt));
    return rt;
}

/* The end of a group: every future it made has been freed (a reference
 * never released is a leak the counter sees in any build, with or without
 * valgrind), then the runtime goes. */
static void test_end(struct rt *rt)
{
    /* One more turn (the arms still queued run), and more while an operation
     * is in flight (a pool job that outlived the tasks): it holds its future. */
    rt_block_on(rt, rt_delay(rt, 0, NULL));
    for (int i = 0; i < 500 && rt->pending > 0; i++)
        rt_block_on(rt, rt_delay(rt, 10, NULL));
    CHECK_MSG(rt->nfutures == 0, "%u futures never released (a leak)", rt->nfutures);
    if (rt->nfutures == 0)
        printf("no future left unreleased\n");
    rt_destroy(rt);
}

/* ---- a task that sleeps and records when it woke --------------------------- */

static int order[64], norder;

struct sleeper {
    struct rt_task task;
    int id;
    unsigned ms;
    struct rt_token *tok;
    long res;
};

static void sleeper_step(void *frame)
{
    struct sleeper *co = frame;

    RT_BEGIN(co);
    RT_AWAIT(co, rt_delay(co->task.f.rt, co->ms, co->tok), co->res);
    order[norder++] = co->id;
    RT_RETURN(co, co->res < 0 ? co->res : co->id);
    ASYNC_END(&co->task);
}

static struct rt_future *sleep_task(struct rt *rt, int id, unsigned ms, struct rt_token *tok)
{
    struct sleeper *s = RT_TASK_NEW(rt, struct sleeper, sleeper_step);

    s->id = id;
    s->ms = ms;
    s->tok = tok;
    return rt_task_start(&s->task, tok);
}

static void test_timers(void)
{
    struct rt *rt = test_rt();
    unsigned ms[] = {300, 100, 200, 50};
    struct rt_future *f[4];
    int64_t t0 = clock_now_ms();

    norder = 0;
    for (int i = 0; i < 4; i++)
        f[i] = sleep_task(rt, (int)ms[i], ms[i], NULL);
    for (int i = 0; i < 4; i++) {
        long r = rt_block_on(rt, f[i]);
        CHECK_MSG(r == (long)ms[i], "task %d returned %ld", i, r);
    }
    int64_t took = clock_now_ms() - t0;
    CHECK_MSG(norder == 4 && order[0] == 50 && order[1] == 100 && order[2] == 200 &&
                  order[3] == 300,
              "woke in order %d %d %d %d", order[0], order[1], order[2], order[3]);
    CHECK_MSG(took >= 300 && took < 1300, "300 ms of timers took %lld ms", (long long)took);
    printf("timers of 300, 100, 200, 50 ms woke in order 50 100 200 300 after %lld ms\n",
           (long long)took);

    /* Equal deadlines: the one armed first fires first. */
    norder = 0;
    for (int i = 0; i < 8; i++)
        rt_future_release(sleep_task(rt, i, 100, NULL));
    CHECK_MSG(rt_run(rt) == 0, "rt_run");
    for (int i = 0; i < 8; i++)
        CHECK_MSG(order[i] == i, "equal deadlines: position %d woke task %d", i, order[i]);
    printf("8 timers of 100 ms woke in the order they were armed\n");
    test_end(rt);
}

/* No timer in the heap is due before its parent. */
static bool heap_ok(struct rt *rt)
{
    for (size_t i = 1; i < rt->nheap; i++)
        if (rt->heap[i]->deadline_ms < rt->heap[(i - 1) / 2]->deadline_ms || rt->heap[i]->slot != i)
            return false;
    return rt->nheap == 0 || rt->heap[0]->slot == 0;
}

/* 300 delays with scattered deadlines, 150 cancelled in a scrambled order:
 * after every removal the heap must still be a heap; then the rest go. */
static void test_heap_order(struct rt *rt)
{
    enum { N = 300 };
    static struct rt_token *tok[N];
    static struct rt_future *f[N];
    size_t bad = 0;

    for (int i = 0; i < N; i++) {
        tok[i] = rt_token_new(rt, NULL);
        f[i] = rt_delay(rt, 10000 + (unsigned)((i * 7919) % 5000), tok[i]);
    }
    CHECK_MSG(rt->nheap == N && heap_ok(rt), "%d delays armed: heap of %zu", N, rt->nheap);
    for (int k = 0; k < N; k++) {
        int i = (k * 97) % N; /* 97 and 300 are coprime: every index once */
        rt_token_cancel(tok[i]);
        if (!heap_ok(rt) && !bad++)
            fprintf(stderr, "the heap is out of order after cancelling timer %d (%zu left)\n", i,
                    rt->nheap);
        CHECK_MSG(f[i]->done && f[i]->res == -ECANCELED, "delay %d not cancelled", i);
        CHECK_MSG(rt->nheap == (size_t)(N - k - 1), "after %d cancels the heap holds %zu", k + 1,
                  rt->nheap);
    }
    CHECK_MSG(bad == 0, "the heap was out of order after %zu of %d cancels", bad, N);
    for (int i = 0; i < N; i++) {
        rt_future_release(f[i]);
        rt_token_free(tok[i]);
    }
    printf("%d timers cancelled in a scrambled order: the heap stayed ordered and ended empty\n",
           N);
}

static void test_timer_cancel(void)
{
    struct rt *rt = test_rt();
    struct rt_token *toks[10];
    struct rt_future *f[10];

    /* Cancelled before firing: out of the heap at once, -ECANCELED. */
    norder = 0;
    for (int i = 0; i < 10; i++) {
        toks[i] = rt_token_new(rt, NULL);
        f[i] = sleep_task(rt, i, 50 + 30 * (unsigned)((i * 7) % 10), toks[i]);
    }
    rt_block_on(rt, rt_delay(rt, 0, NULL)); /* the tasks armed their timers */
    CHECK_MSG(rt->nheap == 10, "heap holds %zu timers, expected 10", rt->nheap);
    for (int i = 1; i < 10; i += 2)
        rt_token_cancel(toks[i]); /* from the middle of the heap */
    CHECK_MSG(rt->nheap == 5, "after 5 cancels the heap holds %zu timers, expected 5", rt->nheap);
    for (int i = 0; i < 10; i++) {
        long r = rt_block_on(rt, f[i]);
        CHECK_MSG(i % 2 ? r == -ECANCELED : r == i, "task %d: %ld", i, r);
    }
    for (int i = 0, last = -1; i < norder; i++) {
        int ms = 50 + 30 * ((order[i] * 7) % 10);
        if (order[i] % 2 == 0) {
            CHECK_MSG(ms >= last, "timer of %d ms fired after one of %d ms", ms, last);
            last = ms;
        }
    }
    printf("5 timers cancelled from the middle of the heap: -ECANCELED at once, the other 5 "
           "fired in deadline order\n");

    /* Cancelled after firing: nothing happens, the result stays 0. */
    struct rt_future *d = rt_delay(rt, 10, toks[0]);
    rt_future_ref(d);
    CHECK_MSG(rt_block_on(rt, d) == 0, "a fired delay");
    rt_token_cancel(toks[0]);
    CHECK_MSG(d->res == 0 && rt->nheap == 0, "cancel after firing changed res to %ld", d->res);
    rt_future_release(d);
    printf("a token cancelled after its timer fired changes nothing\n");
    for (int i = 0; i < 10; i++)
        rt_token_free(toks[i]);
    test_end(rt);
}

static void heap_fire_nothing(struct rt_timer *t)
{
    (void)t;
}

/* Empty the heap by hand, whatever state a wrong removal left it in. */
static void heap_clear(struct rt *rt)
{
    for (size_t i = 0; i < rt->nheap; i++)
        rt->heap[i]->slot = RT_TIMER_IDLE;
    rt->nheap = 0;
}

/* rt__timer_remove() on bare timers: what it must do in and out of the heap. */
static void test_heap_remove(void)
{
    struct rt *rt = test_rt();
    enum { N = 15 };
    static struct rt_timer t[N], never;
    const char *bad = NULL;

    never = (struct rt_timer){.slot = RT_TIMER_IDLE, .fire = heap_fire_nothing};
    CHECK_MSG(!rt__timer_remove(rt, &never), "a timer never armed: removed");

    /* Slots 0..6 due after 10 100 20 110 120 30 40 ms: taking out slot 3
     * (110) moves the last timer (40), from the other branch, under slot 1
     * (100), where it is due too early: it must rise, not only sink. */
    static const unsigned up[] = {10, 100, 20, 110, 120, 30, 40};
    for (int i = 0; i < 7; i++) {
        t[i] = (struct rt_timer){.slot = RT_TIMER_IDLE, .fire = heap_fire_nothing};
        rt__timer_add(rt, &t[i], up[i]);
    }
    CHECK_MSG(t[3].slot == 3 && t[6].slot == 6, "the heap was not built as planned");
    CHECK_MSG(rt__timer_remove(rt, &t[3]) && heap_ok(rt) && t[6].slot == 1,
              "slot 3 removed, the last timer (40 ms) moved into it: it should have risen to "
              "slot 1, above the timer of 100 ms; it is at slot %zu, heap %s",
              t[6].slot, heap_ok(rt) ? "ordered" : "out of order");
    heap_clear(rt);
    printf("rt__timer_remove: the last timer moved into a hole under a later parent rises\n");
    /* Each timer in turn is taken out of a full heap: the root, the middle,
     * a leaf, the last slot. Deadlines 100 + 37i mod 500: no two equal. */
    for (int victim = 0; victim < N; victim++) {
        for (int i = 0; i < N; i++) {
            t[i] = (struct rt_timer){.slot = RT_TIMER_IDLE, .fire = heap_fire_nothing};
            rt__timer_add(rt, &t[i], 100 + (unsigned)((i * 37) % 500));
        }
        struct rt_timer *last = rt->heap[rt->nheap - 1];
        struct rt_timer *v = victim == N - 1 ? last : &t[victim];
        size_t was = v->slot;
        if (!rt__timer_remove(rt, v))
            bad = bad ? bad : "a timer in the heap was not removed";
        else if (v->slot != RT_TIMER_IDLE)
            bad = bad ? bad : "a removed timer still names a slot (not RT_TIMER_IDLE)";
        else if (rt->nheap != N - 1 || !heap_ok(rt))
            bad = bad ? bad : "after one removal the heap is out of order, or its size wrong";
        for (size_t i = 0; i < rt->nheap && !bad; i++)
            if (rt->heap[i] == v)
                bad = "the removed timer is still in the heap";
        if (!bad && rt__timer_remove(rt, v))
            bad = "a timer removed twice: the second removal said true";
        /* its old slot now holds another timer: a stale slot removes nothing */
        if (!bad && was < rt->nheap) {
            struct rt_timer *other = rt->heap[was];
            v->slot = was;
            if (rt__timer_remove(rt, v) || rt->heap[was] != other || rt->nheap != N - 1)
                bad = "a timer not in the heap, whose stale slot holds another, took that one out";
            v->slot = RT_TIMER_IDLE;
        }
        heap_clear(rt);
        CHECK_MSG(!bad, "removing timer %d of %d: %s", victim, N, bad ? bad : "");
        if (bad)
            break;
    }
    if (!bad)
        printf("rt__timer_remove: each of %d timers taken out of a full heap (the root, the "
               "middle, the last slot): out at once, the heap ordered; a timer not in the heap is "
               "left alone\n",
               N);
    test_end(rt);
}

static void test_heap_order_group(void)
{
    struct rt *rt = test_rt();

    test_heap_order(rt);
    test_end(rt);
}

/* ---- combinators ---------------------------------------------------------------- */

static void test_when_all(void)
{
    struct rt *rt = test_rt();
    struct rt_future *f[3];
    unsigned ms[] = {200, 150, 180};
    int64_t t0 = clock_now_ms();

    for (int i = 0; i < 3; i++)
        f[i] = sleep_task(rt, i, ms[i], NULL);
    long r = rt_block_on(rt, rt_when_all(rt, f, 3));
    int64_t took = clock_now_ms() - t0;
    CHECK_MSG(r == 0, "when_all: %ld", r);
    for (int i = 0; i < 3; i++)
        CHECK_MSG(f[i]->done && rt_future_take(f[i]) == i, "child %d", i);
    CHECK_MSG(took >= 200 && took < 450, "when_all of 200, 150, 180 ms took %lld ms",
              (long long)took);
    printf("when_all of 200, 150, 180 ms: 0 after %lld ms, not their sum\n", (long long)took);

    /* One child fails: when_all waits for all, then says the error. */
    struct rt_token *tok = rt_token_new(rt, NULL);
    f[0] = sleep_task(rt, 0, 100, NULL);
    f[1] = sleep_task(rt, 1, 5000, tok);
    f[2] = sleep_task(rt, 2, 150, NULL);
    rt_token_cancel_after(tok, 50);
    r = rt_block_on(rt, rt_when_all(rt, f, 3));
    CHECK_MSG(r == -ECANCELED, "when_all with a cancelled child: %ld", r);
    CHECK_MSG(f[0]->done && f[2]->done, "when_all completed before every child");
    for (int i = 0; i < 3; i++)
        rt_future_release(f[i]);
    rt_token_free(tok);
    printf("when_all with a child cancelled after 50 ms: -ECANCELED, once all three are done\n");

    /* Children that finished before when_all hung its arms on them. */
    struct rt_future *p[2] = {rt_promise(rt, "p0"), rt_promise(rt, "p1")};
    rt_promise_complete(p[0], 4);
    rt_promise_complete(p[1], 5);
    t0 = clock_now_ms();
    r = rt_block_on(rt, rt_when_all(rt, p, 2));
    took = clock_now_ms() - t0;
    CHECK_MSG(r == 0 && took < 1000, "when_all of two finished promises: %ld after %lld ms", r,
              (long long)took);
    CHECK_MSG(rt_future_take(p[0]) == 4 && rt_future_take(p[1]) == 5, "their results");
    printf("when_all of two promises already finished: %ld after %lld ms\n", r, (long long)took);

    CHECK_MSG(rt_block_on(rt, rt_when_all(rt, NULL, 0)) == 0, "when_all of nothing");
    test_end(rt);
}

static void test_when_any(void)
{
    struct rt *rt = test_rt();
    struct rt_future *f[3];
    unsigned ms[] = {300, 50, 200};
    int64_t t0 = clock_now_ms();

    norder = 0;
    for (int i = 0; i < 3; i++)
        f[i] = sleep_task(rt, i, ms[i], NULL);
    long r = rt_block_on(rt, rt_when_any(rt, f, 3));
    int64_t took = clock_now_ms() - t0;
    CHECK_MSG(r == 1, "when_any of 300, 50, 200 ms: index %ld, expected 1", r);
    CHECK_MSG(took >= 50 && took < 250, "when_any took %lld ms", (long long)took);
    CHECK_MSG(!f[0]->done && !f[2]->done, "the others should still run");
    printf("when_any of 300, 50, 200 ms: index %ld after %lld ms\n", r, (long long)took);
    for (int i = 0; i < 3; i++)
        rt_future_release(f[i]);
    CHECK_MSG(rt_run(rt) == 0, "rt_run");
    CHECK_MSG(norder == 3, "the other two finished too (%d woke)", norder);
    printf("the two others finished afterwards; nothing leaked\n");

    /* Already completed children: the first in the array wins. */
    struct rt_future *p[2] = {rt_promise(rt, "p0"), rt_promise(rt, "p1")};
    rt_promise_complete(p[1], 7);
    r = rt_block_on(rt, rt_when_any(rt, p, 2));
    CHECK_MSG(r == 1, "when_any with p1 complete: %ld", r);
    printf("when_any of two promises, only the second already finished: index %ld\n", r);
    rt_promise_complete(p[0], 3);
    rt_future_release(p[0]);
    rt_future_release(p[1]);
    CHECK_MSG(rt_block_on(rt, rt_when_any(rt, NULL, 0)) == -EINVAL, "when_any of nothing");
    test_end(rt);
}

/* ---- tokens ------------------------------------------------------------------------ */

/* A parent's cancel reaches its descendants, and nothing else. */
static void test_token_tree(struct rt *rt)
{
    struct rt_token *parent = rt_token_new(rt, NULL);
    struct rt_token *child = rt_token_new(rt, parent);
    struct rt_token *grandchild = rt_token_new(rt, child);
    struct rt_token *other = rt_token_new(rt, NULL);

    struct rt_future *a = rt_delay(rt, 10000, grandchild), *b = rt_delay(rt, 30, other);
    rt_token_cancel(parent);
    CHECK_MSG(rt_token_cancelled(child) && rt_token_cancelled(grandchild),
              "children not cancelled");
    CHECK_MSG(a->done && a->res == -ECANCELED, "the grandchild's delay: done %d res %ld", a->done,
              a->res);
    CHECK_MSG(rt_block_on(rt, b) == 0, "a delay on an unrelated token was cancelled");
    rt_future_release(a);
    printf("cancelling a parent cancels its grandchild's delay at once, not another token's\n");

    struct rt_token *late = rt_token_new(rt, parent);
    CHECK_MSG(rt_token_cancelled(late), "a child of a cancelled token is born cancelled");
    a = rt_delay(rt, 10, late);
    CHECK_MSG(a->done && a->res == -ECANCELED, "an op under a cancelled token never starts");
    rt_future_release(a);
    printf("a child of a cancelled token is born cancelled; a delay under it never starts\n");

    /* Freeing a child unlinks it: the parent's cancel no longer reaches it. */
    struct rt_token *kept = rt_token_new(rt, other);
    rt_token_free(kept);
    rt_token_cancel(other);
    rt_token_free(grandchild);
    rt_token_free(child);
    rt_token_free(late);
    rt_token_free(parent);
    rt_token_free(other);
}

/* cancel_after arms one deadline per token, moves it, and leaves the heap
 * when the token is cancelled or freed. */
static void test_cancel_after(struct rt *rt)
{
    /* cancel_after: a 10 s delay ends after about 100 ms. */
    struct rt_token *timeout = rt_token_new(rt, NULL);
    int64_t t0 = clock_now_ms();
    rt_token_cancel_after(timeout, 100);
    long r = rt_block_on(rt, rt_delay(rt, 10000, timeout));
    int64_t took = clock_now_ms() - t0;
    CHECK_MSG(r == -ECANCELED && took >= 100 && took < 1100, "cancel_after(100): %ld after %lld ms",
              r, (long long)took);
    CHECK_MSG(rt->nheap == 0, "timers left in the heap after the deadline fired: %zu", rt->nheap);
    printf("cancel_after(100) ended a 10 s delay with -ECANCELED after %lld ms\n", (long long)took);
    rt_token_free(timeout);

    /* cancel_after again moves the deadline: one timer per token, the last call wins. */
    struct rt_token *moved = rt_token_new(rt, NULL);
    rt_token_cancel_after(moved, 10000);
    rt_token_cancel_after(moved, 50);
    CHECK_MSG(rt->nheap == 1, "cancel_after twice on one token: %zu timers in the heap, expected 1",
              rt->nheap);
    t0 = clock_now_ms();
    r = rt_block_on(rt, rt_delay(rt, 10000, moved));
    took = clock_now_ms() - t0;
    CHECK_MSG(r == -ECANCELED && took >= 40 && took < 1000,
              "cancel_after(10000), then (50): %ld after %lld ms", r, (long long)took);
    CHECK_MSG(rt->nheap == 0, "timers left in the heap after the moved deadline fired: %zu",
              rt->nheap);
    rt_token_free(moved);
    printf(
        "cancel_after(10000) then cancel_after(50): one deadline, the delay ended after %lld ms\n",
        (long long)took);

    /* Cancelled by hand before its deadline: the deadline leaves the heap at
     * once, and a cancel_after on a cancelled token arms nothing. */
    struct rt_token *by_hand = rt_token_new(rt, NULL);
    rt_token_cancel_after(by_hand, 10000);
    rt_token_cancel(by_hand);
    CHECK_MSG(rt->nheap == 0, "cancelled by hand, its deadline is still in the heap (%zu timers)",
              rt->nheap);
    rt_token_cancel_after(by_hand, 10);
    CHECK_MSG(rt->nheap == 0, "cancel_after on a cancelled token armed a timer (%zu)", rt->nheap);
    rt_token_free(by_hand);
    printf("a token cancelled by hand takes its deadline out of the heap; cancel_after then arms "
           "nothing\n");

    /* A token freed with its deadline pending takes it out of the heap. */
    struct rt_token *kept = rt_token_new(rt, NULL);
    rt_token_cancel_after(kept, 10000);
    rt_token_free(kept);
    CHECK_MSG(rt->nheap == 0, "timers left in the heap: %zu", rt->nheap);
}

static void test_tokens(bool tree, bool after)
{
    struct rt *rt = test_rt();

    if (tree)
        test_token_tree(rt);
    if (after)
        test_cancel_after(rt);
    test_end(rt);
}

/* ---- cancelling a token whose registrations change under the walk -------------- */

/* A registration that records its cancel and then does what the test says:
 * what a real cancel function may do (complete an op whose completion
 * unregisters others, start something new, reuse its memory). */
struct walk_reg {
    struct rt_reg reg;
    int id;
    void (*then)(struct walk_reg *w);
};

static struct walk_reg walk[6]; /* 1..5 in the token under test, 0 in another */
static struct rt_token *walk_tok, *walk_other;
static char walk_log[64];
static bool walk_refused;

static void walk_cancel(struct rt_reg *r)
{
    struct walk_reg *w = RT_CONTAINER(r, struct walk_reg, reg);
    size_t n = strlen(walk_log);

    snprintf(walk_log + n, sizeof(walk_log) - n, "%s%d", n ? " " : "", w->id);
    if (w->then)
        w->then(w);
}

static void walk_drop_next(struct walk_reg *w)
{
    rt__token_unregister(&walk[w->id - 1].reg); /* registered before it: next in the list */
}

static void walk_drop_all(struct walk_reg *w)
{
    for (int i = 1; i <= 5; i++)
        if (i != w->id)
            rt__token_unregister(&walk[i].reg);
}

static void walk_reuse(struct walk_reg *w)
{
    /* its op is over; the same memory serves a new op under another token */
    rt__token_register(walk_other, &w->reg, walk_cancel);
}

static void walk_start_new(struct walk_reg *w)
{
    static struct rt_reg fresh;

    (void)w;
    walk_refused = !rt__token_register(walk_tok, &fresh, walk_cancel);
    if (!walk_refused)
        rt__token_unregister(&fresh);
}

/* Register 1..5 (the list holds them newest first: 5 4 3 2 1) and 0 under
 * another token; give `who` its action; cancel; return the order of calls. */
static const char *walk_run(struct rt *rt, int who, void (*then)(struct walk_reg *w))
{
    walk_tok = rt_token_new(rt, NULL);
    walk_other = rt_token_new(rt, NULL);
    walk_log[0] = '\0';
    walk_refused = false;
    memset(walk, 0, sizeof(walk));
    walk[0].id = 0;
    CHECK_MSG(rt__token_register(walk_other, &walk[0].reg, walk_cancel), "register 0");
    for (int i = 1; i <= 5; i++) {
        walk[i].id = i;
        CHECK_MSG(rt__token_register(walk_tok, &walk[i].reg, walk_cancel), "register %d", i);
    }
    walk[who].then = then;
    rt_token_cancel(walk_tok);
    return walk_log;
}

static void walk_end(void)
{
    for (int i = 0; i <= 5; i++)
        rt__token_unregister(&walk[i].reg);
    rt_token_free(walk_tok);
    rt_token_free(walk_other);
}

/* The walk itself: what each cancel function does to the list. */
static void test_cancel_walk(void)
{
    struct rt *rt = test_rt();
    const char *log;

    log = walk_run(rt, 5, NULL);
    CHECK_MSG(strcmp(log, "5 4 3 2 1") == 0, "five registrations: cancelled \"%s\"", log);
    CHECK_MSG(!walk_tok->regs, "the token's list is not empty after its cancel");
    rt_token_cancel(walk_tok);
    CHECK_MSG(strcmp(walk_log, "5 4 3 2 1") == 0, "a second cancel called again: \"%s\"", walk_log);
    walk_end();
    printf("five registrations: each cancelled once, in list order; a second cancel calls none\n");

    log = walk_run(rt, 5, walk_drop_next);
    CHECK_MSG(strcmp(log, "5 3 2 1") == 0,
              "5's cancel unregistered 4, the next in the list: cancelled \"%s\", expected "
              "\"5 3 2 1\" (was the next pointer read before 5's cancel ran?)",
              log);
    walk_end();
    printf("a cancel that unregisters the next registration: it is not called (5 3 2 1)\n");

    log = walk_run(rt, 5, walk_drop_all);
    CHECK_MSG(strcmp(log, "5") == 0,
              "5's cancel unregistered all the others: cancelled \"%s\", expected \"5\"", log);
    walk_end();
    printf("a cancel that unregisters all the others: only it is called\n");

    log = walk_run(rt, 3, walk_reuse);
    CHECK_MSG(strcmp(log, "5 4 3 2 1") == 0 && walk[3].reg.tok == walk_other && walk_other->regs,
              "3's cancel reused its registration under another token: cancelled \"%s\" (was "
              "3's next pointer read after its cancel ran?)",
              log);
    CHECK_MSG(!walk_other->cancelled && walk[0].reg.tok == walk_other,
              "the other token's registration was cancelled or unlinked");
    walk_end();
    printf("a cancel that reuses its registration under another token: the walk stays in its own "
           "list\n");
    test_end(rt);
}

/* A cancel function that starts something new under the token being
 * cancelled: the token says no, from the first cancel function on. */
static void test_cancel_refuses(void)
{
    struct rt *rt = test_rt();
    const char *log;

    log = walk_run(rt, 5, walk_start_new);
    CHECK_MSG(walk_refused, "a cancel started a new registration under the token being "
                            "cancelled, and it was accepted (is it marked cancelled first?)");
    CHECK_MSG(strcmp(log, "5 4 3 2 1") == 0, "cancelled \"%s\"", log);
    walk_end();
    printf("a cancel that starts something new under the same token: refused\n");
    test_end(rt);
}

/* ---- continuations ------------------------------------------------------------------ */

struct counted_cont {
    struct rt_cont c;
    int runs;
};

static void counted_run(struct rt_cont *c)
{
    RT_CONTAINER(c, struct counted_cont, c)->runs++;
}

/* A continuation always runs once, from the run queue: whether the future
 * completes later, or had completed before the continuation was handed over. */
static void test_continuations(void)
{
    struct rt *rt = test_rt();
    struct counted_cont early = {.c.run = counted_run}, late = {.c.run = counted_run};
    struct rt_future *p = rt_promise(rt, "p");

    rt__future_on_done(p, &early.c);
    rt_promise_complete(p, 1);
    CHECK_MSG(early.runs == 0, "a continuation ran inside the completion (%d runs)", early.runs);
    rt__future_on_done(p, &late.c);
    CHECK_MSG(late.runs == 0,
              "a continuation handed to a completed future ran inside rt__future_on_done: "
              "continuations run from the run queue, never inline");
    rt_block_on(rt, rt_delay(rt, 0, NULL));
    CHECK_MSG(early.runs == 1, "the continuation hung before completion ran %d times", early.runs);
    CHECK_MSG(late.runs == 1,
              "the continuation hung on an already completed future ran %d times, expected 1",
              late.runs);
    rt_future_release(p);
    printf("continuations hung before and after completion: each ran once, from the run queue\n");
    test_end(rt);
}

/* ---- combinators whose caller lets go before the children finish --------------------- */

/* For valgrind and the sanitizers: a combinator outlives its caller's
 * reference while arms are still to run, and frees itself after the last. */
static void test_when_lifetimes(void)
{
    struct rt *rt = test_rt();
    struct rt_future *p[3];

    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 3; i++)
            p[i] = rt_promise(rt, "p");
        struct rt_future *any = rt_when_any(rt, p, 3);
        rt_promise_complete(p[round], 10 + round);
        long r = rt_block_on(rt, any); /* the caller's reference is gone now */
        CHECK_MSG(r == round, "when_any, child %d completed first: %ld", round, r);
        for (int i = 0; i < 3; i++)
            if (i != round)
                rt_promise_complete(p[i], -ECONNRESET); /* arms still to run */
        rt_block_on(rt, rt_delay(rt, 0, NULL));
        for (int i = 0; i < 3; i++)
            CHECK_MSG(rt_future_take(p[i]) == (i == round ? 10 + round : -ECONNRESET), "p%d", i);
        CHECK_MSG(rt->nfutures == 0, "when_any round %d: %u futures left", round, rt->nfutures);
    }
    printf("when_any released by its caller before the losers finished: freed after the last "
           "arm\n");

    for (int i = 0; i < 3; i++)
        p[i] = rt_promise(rt, "p");
    struct rt_future *all = rt_when_all(rt, p, 3);
    rt_future_release(all); /* dropped before any child finished */
    for (int i = 2; i >= 0; i--)
        rt_promise_complete(p[i], i);
    rt_block_on(rt, rt_delay(rt, 0, NULL));
    for (int i = 0; i < 3; i++)
        rt_future_release(p[i]);
    CHECK_MSG(rt->nfutures == 0, "when_all dropped at once: %u futures left", rt->nfutures);
    printf("when_all dropped by its caller at once: freed after the last arm\n");
    test_end(rt);
}

/* ---- cancelling I/O in the backend ----------------------------------------------- */

struct reader {
    struct rt_task task;
    int fd;
    struct rt_token *tok;
    char buf[64];
    long first, second;
};

static void reader_step(void *frame)
{
    struct reader *co = frame;
    struct rt *rt = co->task.f.rt;

    RT_BEGIN(co);
    memset(co->buf, 'x', sizeof(co->buf));
    RT_AWAIT(co, rt_recv(rt, co->fd, co->buf, sizeof(co->buf), co->tok), co->first);
    RT_AWAIT(co, rt_recv(rt, co->fd, co->buf, sizeof(co->buf), NULL), co->second);
    RT_RETURN(co, 0);
    ASYNC_END(&co->task);
}

static void test_cancel_io(void)
{
    struct rt *rt = test_rt();
    int sv[2], lfd, port;

    CHECK_MSG(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
    CHECK_MSG(rt_attach(rt, sv[0]) == 0, "attach");
    struct reader *co = RT_TASK_NEW(rt, struct reader, reader_step);
    co->fd = sv[0];
    co->tok = rt_token_new(rt, NULL);
    rt_token_cancel_after(co->tok, 100);
    struct rt_future *f = rt_future_ref(rt_task_start(&co->task, NULL));
    rt_block_on(rt, rt_delay(rt, 300, NULL));
    CHECK_MSG(co->first == -ECANCELED, "the cancelled recv: %ld", co->first);
    CHECK_MSG(rt->pending == 1, "in flight after the cancel: %u (the second recv)", rt->pending);
    CHECK_MSG(write(sv[1], "after", 5) == 5, "write");
    CHECK_MSG(rt_block_on(rt, f) == 0, "reader");
    CHECK_MSG(co->second == 5 && memcmp(co->buf, "after", 5) == 0 && co->buf[5] == 'x',
              "the next recv: %ld", co->second);
    printf("a recv cancelled by cancel_after(100): -ECANCELED; the next recv: res 5, \"after\"\n");
    rt_token_free(co->tok);
    rt_future_release(f);
    rt_close(rt, sv[0]);
    close(sv[1]);

    /* accept, cancelled while waiting for a client */
    lfd = net_listen("127.0.0.1", 0, 16);
    port = net_local_port(lfd);
    CHECK_MSG(lfd >= 0 && port > 0 && rt_attach(rt, lfd) == 0, "listen");
    struct rt_token *tok = rt_token_new(rt, NULL);
    rt_token_cancel_after(tok, 50);
    CHECK_MSG(rt_block_on(rt, rt_accept(rt, lfd, tok)) == -ECANCELED, "accept not cancelled");
    CHECK_MSG(rt->pending == 0, "ops in flight after the cancelled accept: %u", rt->pending);
    printf("an accept cancelled after 50 ms: -ECANCELED, nothing left in flight\n");
    rt_token_free(tok);
    rt_close(rt, lfd);
    test_end(rt);
}

/* ---- pooled receives ----------------------------------------------------------------- */

struct pooled_reader {
    struct rt_task task;
    int fd;
    struct rt_token *tok;
    void *buf;
    long res;
    unsigned held_waiting; /* pool buffers held while the recv waited */
};

static void pooled_reader_step(void *frame)
{
    struct pooled_reader *co = frame;
    struct rt *rt = co->task.f.rt;

    RT_BEGIN(co);
    RT_AWAIT(co, rt_recv_pooled(rt, co->fd, &co->buf, co->tok), co->res);
    RT_RETURN(co, 0);
    ASYNC_END(&co->task);
}

/* One pooled recv on fd in a task; `before` runs while it waits. */
static struct pooled_reader *pooled_recv(struct rt *rt, int fd, struct rt_token *tok,
                                         void (*before)(int peer), int peer)
{
    struct pooled_reader *co = RT_TASK_NEW(rt, struct pooled_reader, pooled_reader_step);
    struct rt_future *f;

    co->fd = fd;
    co->tok = tok;
    f = rt_future_ref(rt_task_start(&co->task, NULL));
    rt_block_on(rt, rt_delay(rt, 50, NULL));
    co->held_waiting = cio_buf_held(rt->io);
    if (before)
        before(peer);
    CHECK_MSG(rt_block_on(rt, f) == 0, "the pooled reader");
    return co; /* ours to release: rt_block_on took one reference, f keeps the other */
}

static void say_hello(int peer)
{
    CHECK_MSG(write(peer, "hello", 5) == 5, "write");
}

static void hang_up(int peer)
{
    shutdown(peer, SHUT_WR);
}

static void test_pooled(void)
{
    struct rt *rt = test_rt();
    struct rt_token *tok = rt_token_new(rt, NULL);
    struct pooled_reader *co;
    void *buf = (void *)1;
    int sv[2];

    CHECK_MSG(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
    CHECK_MSG(rt_attach(rt, sv[0]) == 0, "attach");
    co = pooled_recv(rt, sv[0], NULL, say_hello, sv[1]);
    printf("rt_recv_pooled: %u buffers held while it waited; res %ld, \"%.*s\", %u held\n",
           co->held_waiting, co->res, co->res > 0 ? (int)co->res : 0,
           co->buf ? (char *)co->buf : "", cio_buf_held(rt->io));
    CHECK_MSG(co->held_waiting == 0 && co->res == 5 && co->buf &&
                  memcmp(co->buf, "hello", 5) == 0 && cio_buf_held(rt->io) == 1,
              "res %ld", co->res);
    if (co->res > 0)
        rt_buf_release(rt, co->buf);
    rt_future_release(&co->task.f);

    /* cancelled while it waits: -ECANCELED, no buffer */
    rt_token_cancel_after(tok, 100);
    co = pooled_recv(rt, sv[0], tok, NULL, -1);
    printf("rt_recv_pooled cancelled: res %ld (%s), buf %s, %u held\n", co->res,
           strerror((int)-co->res), co->buf ? "SET" : "NULL", cio_buf_held(rt->io));
    CHECK_MSG(co->res == -ECANCELED && !co->buf && cio_buf_held(rt->io) == 0, "res %ld", co->res);
    rt_future_release(&co->task.f);

    /* dropped by its caller: bytes that come are released unread */
    rt_future_release(rt_recv_pooled(rt, sv[0], &buf, NULL));
    say_hello(sv[1]);
    rt_block_on(rt, rt_delay(rt, 100, NULL));
    printf("rt_recv_pooled dropped, then 5 bytes: %u in flight, %u buffers held, buf %s\n",
           rt->pending, cio_buf_held(rt->io), buf ? "SET" : "NULL");
    CHECK_MSG(rt->pending == 0 && cio_buf_held(rt->io) == 0 && !buf, "a dropped pooled recv");

    /* end of stream: 0, no buffer */
    co = pooled_recv(rt, sv[0], NULL, hang_up, sv[1]);
    printf("rt_recv_pooled at end of stream: res %ld, buf %s, %u held\n", co->res,
           co->buf ? "SET" : "NULL", cio_buf_held(rt->io));
    CHECK_MSG(co->res == 0 && !co->buf && cio_buf_held(rt->io) == 0, "res %ld", co->res);
    rt_future_release(&co->task.f);
    rt_token_free(tok);
    rt_close(rt, sv[0]);
    close(sv[1]);
    test_end(rt);
}

/* ---- errors ------------------------------------------------------------------------- */

struct connector {
    struct rt_task task;
    int port;
    long res;
};

static void connector_step(void *frame)
{
    struct connector *co = frame;

    RT_BEGIN(co);
    RT_AWAIT(co, rt_connect(co->task.f.rt, "127.0.0.1", co->port, NULL), co->res);
    if (co->res >= 0)
        rt_close(co->task.f.rt, (int)co->res);
    RT_RETURN(co, co->res < 0 ? co->res : 0);
    ASYNC_END(&co->task);
}

/* A port nobody listens on: bind, note the port, close. */
static int closed_port(void)
{
    int fd = net_listen("127.0.0.1", 0, 1), port = net_local_port(fd);

    close(fd);
    return port;
}

static void test_errors(void)
{
    struct rt *rt = test_rt();
    struct connector *co = RT_TASK_NEW(rt, struct connector, connector_step);

    co->port = closed_port();
    long r = rt_block_on(rt, rt_task_start(&co->task, NULL));
    CHECK_MSG(r == -ECONNREFUSED, "connect to a closed port through two awaits: %ld", r);
    printf("connect to a closed port: -ECONNREFUSED reaches the awaiting task\n");

    struct rt_future *f[2];
    f[0] = sleep_task(rt, 0, 20, NULL);
    co = RT_TASK_NEW(rt, struct connector, connector_step);
    co->port = closed_port();
    f[1] = rt_task_start(&co->task, NULL);
    r = rt_block_on(rt, rt_when_all(rt, f, 2));
    CHECK_MSG(r == -ECONNREFUSED, "when_all: %ld", r);
    rt_future_release(f[0]);
    rt_future_release(f[1]);
    printf("when_all: the failed child's -ECONNREFUSED\n");
    test_end(rt);
}

/* A failing task nobody awaits: reported when it is freed. */
static void test_unobserved(void)
{
    struct rt *rt = test_rt();
    struct connector *co = RT_TASK_NEW(rt, struct connector, connector_step);

    co->port = closed_port();
    rt_future_release(rt_task_start(&co->task, NULL)); /* fire and forget */
    CHECK_MSG(rt_run(rt) == 0, "rt_run");
    test_end(rt);
}

/* ---- the trampoline -------------------------------------------------------------------- */

struct link {
    struct rt_task task;
    struct rt_future *prev;
    long res;
};

static void link_step(void *frame)
{
    struct link *co = frame;

    RT_BEGIN(co);
    RT_AWAIT(co, co->prev, co->res);
    RT_RETURN(co, co->res + 1);
    ASYNC_END(&co->task);
}

/* N tasks, each awaiting the one before; the first awaits a promise. When
 * the promise completes, the whole chain completes: in N turns of the loop
 * with the trampoline, or in N nested calls without (RT_INLINE_CONTINUATIONS=1). */
static void test_chain(long n)
{
    struct rt *rt = test_rt();
    struct rt_future *start = rt_promise(rt, "start"), *prev = rt_future_ref(start);

    for (long i = 0; i < n; i++) {
        struct link *l = RT_TASK_NEW(rt, struct link, link_step);
        l->prev = prev;
        prev = rt_task_start(&l->task, NULL);
    }
    rt_block_on(rt, rt_delay(rt, 0, NULL)); /* every link is suspended */
    rt_promise_complete(start, 0);
    long r = rt_block_on(rt, prev);
    rt_future_release(start);
    CHECK_MSG(r == n, "the last of %ld links returned %ld", n, r);
    printf("a chain of %ld awaiting tasks completed: %ld\n", n, r);
    test_end(rt);
}

/* ---- the .Result lesson ------------------------------------------------------------------ */

struct blocker {
    struct rt_task task;
    long res;
};

static void blocker_step(void *frame)
{
    struct blocker *co = frame;
    struct rt_future *d;

    RT_BEGIN(co);
    d = rt_delay(co->task.f.rt, 10, NULL);
    co->res = rt_block_on(co->task.f.rt, d); /* the mistake */
    if (co->res == -EDEADLK)
        RT_AWAIT(co, d, co->res); /* what it should have done */
    RT_RETURN(co, co->res);
    ASYNC_END(&co->task);
}

static void test_block_on_inside(void)
{
    struct rt *rt = test_rt();
    struct blocker *co = RT_TASK_NEW(rt, struct blocker, blocker_step);
    int64_t t0 = clock_now_ms();

    long r = rt_block_on(rt, rt_task_start(&co->task, NULL));
    CHECK_MSG(r == 0 && clock_now_ms() - t0 < 2000, "the task recovered: %ld", r);
    printf("rt_block_on inside a task: refused with -EDEADLK, no hang\n");
    test_end(rt);
}

static void test_deadlock(void)
{
    struct rt *rt = test_rt();
    struct rt_future *never = rt_promise(rt, "a promise nobody completes");
    struct link *co = RT_TASK_NEW(rt, struct link, link_step);

    co->prev = rt_future_ref(never);
    struct rt_future *f = rt_future_ref(rt_task_start(&co->task, NULL));
    CHECK_MSG(rt_block_on(rt, f) == -EDEADLK, "a wait nothing can end");
    rt_promise_complete(never, 1); /* let it finish, to free it */
    rt_future_release(never);
    CHECK_MSG(rt_block_on(rt, f) == 2, "after the promise completed");
    printf("awaiting a promise nobody completes: reported as a deadlock, not a hang\n");
    test_end(rt);
}

/* ---- shutdown --------------------------------------------------------------------------- */

static long raise_term(void *arg)
{
    (void)arg;
    usleep(50 * 1000);
    kill(getpid(), SIGTERM);
    return 0;
}

static void test_shutdown(void)
{
    struct rt *rt = test_rt();
    struct rt_token *conn = rt_token_new(rt, rt_root_token(rt));
    int64_t t0 = clock_now_ms();

    CHECK_MSG(rt_shutdown_on_signals(rt) == 0, "rt_shutdown_on_signals");
    norder = 0;
    for (int i = 0; i < 3; i++)
        rt_future_release(sleep_task(rt, i, 60000, i == 0 ? rt_root_token(rt) : conn));
    rt_future_release(rt_run_blocking(rt, raise_term, NULL, NULL));
    CHECK_MSG(rt_run(rt) == 0, "rt_run");
    CHECK_MSG(norder == 3 && clock_now_ms() - t0 < 5000, "%d tasks finished", norder);
    printf("SIGTERM cancelled the root token: 3 tasks waiting 60 s finished in %lld ms\n",
           (long long)(clock_now_ms() - t0));
    rt_token_free(conn);
    test_end(rt);
}

/* ---- offload ------------------------------------------------------------------------------ */

static long slow_answer(void *arg)
{
    usleep(100 * 1000);
    return (long)(intptr_t)arg;
}

static void test_offload(void)
{
    struct rt *rt = test_rt();
    struct rt_future *f[4];
    int64_t t0 = clock_now_ms();

    for (int i = 0; i < 4; i++)
        f[i] = rt_run_blocking(rt, slow_answer, (void *)(intptr_t)(40 + i), NULL);
    /* A fifth job, cancelled while every thread is busy: never runs. */
    struct rt_token *tok = rt_token_new(rt, NULL);
    struct rt_future *late = rt_run_blocking(rt, slow_answer, (void *)1, tok);
    rt_token_cancel(tok);
    for (int i = 0; i < 4; i++)
        CHECK_MSG(rt_block_on(rt, f[i]) == 40 + i, "job %d", i);
    int64_t took = clock_now_ms() - t0;
    CHECK_MSG(rt_block_on(rt, late) == -ECANCELED, "the cancelled job ran");
    CHECK_MSG(took < 350, "4 jobs of 100 ms on 4 threads took %lld ms", (long long)took);
    printf("4 blocking calls of 100 ms on the pool: %lld ms; a queued one cancelled: -ECANCELED\n",
           (long long)took);
    rt_token_free(tok);

    char path[] = "/tmp/rt-test-XXXXXX", want[100000], got[4096];
    int fd = mkstemp(path);
    for (size_t i = 0; i < sizeof(want); i++)
        want[i] = (char)(i * 31 + 7);
    CHECK_MSG(fd >= 0 && write(fd, want, sizeof(want)) == (ssize_t)sizeof(want), "temp file");
    unlink(path);
    long r = rt_block_on(rt, rt_read_file(rt, fd, got, sizeof(got), 65536, NULL));
    CHECK_MSG(r == 4096 && memcmp(got, want + 65536, 4096) == 0, "read at 65536: %ld", r);
    r = rt_block_on(rt, rt_read_file(rt, fd, got, sizeof(got), 99000, NULL));
    CHECK_MSG(r == 1000 && memcmp(got, want + 99000, 1000) == 0, "read at 99000: %ld", r);
    r = rt_block_on(rt, rt_read_file(rt, fd, got, sizeof(got), 200000, NULL));
    CHECK_MSG(r == 0, "read past the end: %ld", r);
    printf("rt_read_file (%s): 4096 bytes at 65536, 1000 at the tail, 0 past the end\n",
           rt_files_native(rt) ? "native" : "on the pool");
    close(fd);
    test_end(rt);
}

int main(int argc, char **argv)
{
    const char *t = argc > 1 ? argv[1] : "";

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(t, "probe") == 0)
        rt_destroy(test_rt());
    else if (strcmp(t, "timers") == 0)
        test_timers();
    else if (strcmp(t, "timer-cancel") == 0)
        test_timer_cancel();
    else if (strcmp(t, "heap-remove") == 0)
        test_heap_remove();
    else if (strcmp(t, "heap-order") == 0)
        test_heap_order_group();
    else if (strcmp(t, "when-all") == 0)
        test_when_all();
    else if (strcmp(t, "when-any") == 0)
        test_when_any();
    else if (strcmp(t, "tokens") == 0)
        test_tokens(true, true);
    else if (strcmp(t, "token-tree") == 0)
        test_tokens(true, false);
    else if (strcmp(t, "cancel-after") == 0)
        test_tokens(false, true);
    else if (strcmp(t, "cancel-walk") == 0)
        test_cancel_walk();
    else if (strcmp(t, "cancel-refuses") == 0)
        test_cancel_refuses();
    else if (strcmp(t, "continuations") == 0)
        test_continuations();
    else if (strcmp(t, "when-lifetimes") == 0)
        test_when_lifetimes();
    else if (strcmp(t, "cancel-io") == 0)
        test_cancel_io();
    else if (strcmp(t, "pooled") == 0)
        test_pooled();
    else if (strcmp(t, "errors") == 0)
        test_errors();
    else if (strcmp(t, "unobserved") == 0)
        test_unobserved();
    else if (strcmp(t, "chain") == 0)
        test_chain(argc > 2 ? atol(argv[2]) : 100000);
    else if (strcmp(t, "block-on-inside") == 0)
        test_block_on_inside();
    else if (strcmp(t, "deadlock") == 0)
        test_deadlock();
    else if (strcmp(t, "shutdown") == 0)
        test_shutdown();
    else if (strcmp(t, "offload") == 0)
        test_offload();
    else {
        fprintf(stderr, "usage: rt-test probe|timers|timer-cancel|heap-remove|heap-order|"
                        "when-all|when-any|when-lifetimes|continuations|tokens|token-tree|"
                        "cancel-after|cancel-walk|cancel-refuses|cancel-io|pooled|errors|"
                        "unobserved|chain [N]|block-on-inside|deadlock|shutdown|offload\n");
        return 2;
    }
    if (check_failures)
        fprintf(stderr, "%d checks failed\n", check_failures);
    else
        printf("all checks passed\n");
    return check_exit();
}
