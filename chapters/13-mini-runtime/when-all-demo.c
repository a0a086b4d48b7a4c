/* SPDX-License-Identifier: MIT */
/* when-all-demo.c: Task.WhenAll made real. Three fetches that take 200, 150
 * and 180 ms, awaited one after another and then all at once:
 *
 *     // C#
 *     var a = await FetchAsync("a"); var b = await FetchAsync("b"); ...  // ~530 ms
 *     await Task.WhenAll(FetchAsync("a"), FetchAsync("b"), FetchAsync("c"));  // ~200 ms
 *
 *     make -C chapters/13-mini-runtime
 *     build/chapters/13-mini-runtime/when-all-demo
 *
 * A "fetch" here waits on a timer, so the numbers show the runtime, not a
 * network: one thread, no thread per fetch, and the three waits overlap
 * because none of them blocks the loop.
 */
#include "clock.h"
#include "rt.h"

#include <errno.h>
#include <stdio.h>

struct fetch {
    struct rt_task task;
    const char *name;
    unsigned ms;
    long res;
};

static void fetch_step(void *frame)
{
    struct fetch *co = frame;

    RT_BEGIN(co);
    RT_AWAIT(co, rt_delay(co->task.f.rt, co->ms, co->task.token), co->res);
    RT_RETURN(co, co->res < 0 ? co->res : (long)co->ms); /* the "page": its length */
    ASYNC_END(&co->task);
}

/* A fetch under `tok` (NULL: none): cancelling the token ends its wait. */
static struct rt_future *fetch_async(struct rt *rt, const char *name, unsigned ms,
                                     struct rt_token *tok)
{
    struct fetch *f = RT_TASK_NEW(rt, struct fetch, fetch_step);

    f->name = name;
    f->ms = ms;
    return rt_task_start(&f->task, tok);
}

static const char *const names[] = {"a", "b", "c"};
static const unsigned delays[] = {200, 150, 180};

/* snippet: demo */
struct demo {
    struct rt_task task;
    int i;
    long res, total;
    int64_t t0, sequential_ms, when_all_ms;
    struct rt_future *f[3];
};

static void demo_step(void *frame)
{
    struct demo *co = frame;
    struct rt *rt = co->task.f.rt;

    RT_BEGIN(co);
    co->t0 = clock_now_ms();
    for (co->i = 0; co->i < 3; co->i++) { /* await each before starting the next */
        RT_AWAIT(co, fetch_async(rt, names[co->i], delays[co->i], NULL), co->res);
        co->total += co->res;
    }
    co->sequential_ms = clock_now_ms() - co->t0;

    co->t0 = clock_now_ms();
    for (co->i = 0; co->i < 3; co->i++) /* start all three, then await them together */
        co->f[co->i] = fetch_async(rt, names[co->i], delays[co->i], NULL);
    RT_AWAIT(co, rt_when_all(rt, co->f, 3), co->res);
    for (co->i = 0; co->i < 3; co->i++)
        co->total += rt_future_take(co->f[co->i]);
    co->when_all_ms = clock_now_ms() - co->t0;
    RT_RETURN(co, co->res);
    ASYNC_END(&co->task);
}
/* end snippet */

/* Task.WhenAny, and the losers cancelled: three fetches under one token
 * (a CancellationTokenSource), the first to finish wins, the other two are
 * told to stop and awaited until they have. */
static const unsigned any_delays[] = {600, 100, 400};

struct any_demo {
    struct rt_task task;
    int i;
    long winner, res, results[3];
    int64_t t0, ms;
    struct rt_token *tok;
    struct rt_future *f[3];
};

static void any_step(void *frame)
{
    struct any_demo *co = frame;
    struct rt *rt = co->task.f.rt;

    RT_BEGIN(co);
    co->t0 = clock_now_ms();
    co->tok = rt_token_new(rt, NULL);
    for (co->i = 0; co->i < 3; co->i++)
        co->f[co->i] = fetch_async(rt, names[co->i], any_delays[co->i], co->tok);
    /* EXERCISE BEGIN cancel-losers: await the first, cancel the others, await them all */
    RT_AWAIT(co, rt_when_any(rt, co->f, 3), co->winner);
    rt_token_cancel(co->tok); /* the losers' delays complete now, with -ECANCELED */
    RT_AWAIT(co, rt_when_all(rt, co->f, 3), co->res); /* nothing of theirs still runs */
    /* EXERCISE END */
    co->ms = clock_now_ms() - co->t0;
    for (co->i = 0; co->i < 3; co->i++)
        co->results[co->i] = rt_future_take(co->f[co->i]);
    rt_token_free(co->tok);
    RT_RETURN(co, 0);
    ASYNC_END(&co->task);
}

int main(void)
{
    char why[256];
    int err;
    struct rt *rt = rt_create(&err, why, sizeof(why));
    struct demo *d;
    long res;

    if (!rt) {
        fprintf(stderr, "when-all-demo: %s\n", why);
        return err == -EINVAL ? 2 : 77;
    }
    d = RT_TASK_NEW(rt, struct demo, demo_step);
    rt_future_ref(&d->task.f); /* read its fields after it returns */
    res = rt_block_on(rt, rt_task_start(&d->task, NULL));
    printf("backend %s\n", rt_backend_name(rt));
    printf("fetches of %u, %u and %u ms\n", delays[0], delays[1], delays[2]);
    printf("sequential: %lld ms\n", (long long)d->sequential_ms);
    printf("when_all: %lld ms\n", (long long)d->when_all_ms);
    printf("speed-up: %.2fx\n",
           (double)d->sequential_ms / (double)(d->when_all_ms ? d->when_all_ms : 1));
    rt_future_release(&d->task.f);
    if (res == 0) {
        struct any_demo *a = RT_TASK_NEW(rt, struct any_demo, any_step);

        rt_future_ref(&a->task.f);
        res = rt_block_on(rt, rt_task_start(&a->task, NULL));
        if (res == 0) {
            printf("when_any of %u, %u and %u ms: %s first, the others cancelled; all three done "
                   "after %lld ms\n",
                   any_delays[0], any_delays[1], any_delays[2], names[a->winner], (long long)a->ms);
            printf("results: %s %ld, %s %ld, %s %ld\n", names[0], a->results[0], names[1],
                   a->results[1], names[2], a->results[2]);
        }
        rt_future_release(&a->task.f);
    }
    rt_destroy(rt);
    return res == 0 ? 0 : 1;
}
