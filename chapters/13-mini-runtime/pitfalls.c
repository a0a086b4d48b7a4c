/* SPDX-License-Identifier: MIT */
/* pitfalls.c: the two classic ways to break an async runtime, measured, and
 * the runtime catching two more.
 *
 *     make -C chapters/13-mini-runtime
 *     build/chapters/13-mini-runtime/pitfalls stall      a blocking call in a task
 *     build/chapters/13-mini-runtime/pitfalls offload    the same call on the pool
 *     build/chapters/13-mini-runtime/pitfalls result     rt_block_on inside a task
 *     build/chapters/13-mini-runtime/pitfalls async-void a failure nobody awaits
 *
 * stall/offload: a ticker task wakes every 10 ms and notes how late each
 * wake-up is, while a worker task makes three 200 ms blocking calls
 * (usleep, standing in for a disk read, a DNS lookup, a lock). Called in
 * the task, each call holds the only loop thread: every timer of every
 * other task waits for it. On the pool (rt_run_blocking) the loop stays
 * free and the ticker stays on time.
 */
#include "clock.h"
#include "rt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TICK_MS 10
#define CALL_MS 200
#define CALLS   3

static long max_late_ms, ticks;

struct ticker {
    struct rt_task task;
    int64_t due;
    long res;
};

static void ticker_step(void *frame)
{
    struct ticker *co = frame;

    RT_BEGIN(co);
    for (;;) {
        co->due = clock_now_ms() + TICK_MS;
        RT_AWAIT(co, rt_delay(co->task.f.rt, TICK_MS, co->task.token), co->res);
        if (co->res < 0)
            break;
        ticks++;
        if (clock_now_ms() - co->due > max_late_ms)
            max_late_ms = clock_now_ms() - co->due;
    }
    RT_RETURN(co, 0);
    ASYNC_END(&co->task);
}

static long blocking_call(void *arg)
{
    (void)arg;
    usleep(CALL_MS * 1000);
    return 0;
}

/* snippet: worker */
struct worker {
    struct rt_task task;
    bool offload;
    int i;
    long res;
};

static void worker_step(void *frame)
{
    struct worker *co = frame;

    RT_BEGIN(co);
    RT_AWAIT(co, rt_delay(co->task.f.rt, 50, NULL), co->res); /* let the ticker settle */
    for (co->i = 0; co->i < CALLS; co->i++) {
        if (co->offload) /* right: the pool blocks, the loop goes on */
            RT_AWAIT(co, rt_run_blocking(co->task.f.rt, blocking_call, NULL, NULL), co->res);
        else /* wrong: the loop thread itself sleeps */
            co->res = blocking_call(NULL);
    }
    /* Let the ticker take the tick it was owed, and measure it. */
    RT_AWAIT(co, rt_delay(co->task.f.rt, 3 * TICK_MS, NULL), co->res);
    RT_RETURN(co, 0);
    ASYNC_END(&co->task);
}
/* end snippet */

static int stall(struct rt *rt, bool offload)
{
    struct rt_token *tok = rt_token_new(rt, NULL);
    struct ticker *t = RT_TASK_NEW(rt, struct ticker, ticker_step);
    struct worker *w = RT_TASK_NEW(rt, struct worker, worker_step);
    struct rt_future *tf;
    int64_t t0 = clock_now_ms();

    tf = rt_task_start(&t->task, tok);
    w->offload = offload;
    rt_block_on(rt, rt_task_start(&w->task, NULL));
    rt_token_cancel(tok);
    rt_block_on(rt, tf);
    rt_token_free(tok);
    printf("%s: %d calls of %d ms took %lld ms; the %d ms ticker ticked %ld times, "
           "late by up to %ld ms\n",
           offload ? "on the pool (rt_run_blocking)" : "blocking in a task", CALLS, CALL_MS,
           (long long)(clock_now_ms() - t0), TICK_MS, ticks, max_late_ms);
    printf("max-late-ms %ld\n", max_late_ms);
    return 0;
}

/* .Result: a task blocks on a future; the runtime refuses instead of hanging. */
struct sync_over_async {
    struct rt_task task;
    struct rt_future *delay;
    long res;
};

static void sync_over_async_step(void *frame)
{
    struct sync_over_async *co = frame;

    RT_BEGIN(co);
    co->delay = rt_delay(co->task.f.rt, 100, NULL);
    co->res = rt_block_on(co->task.f.rt, co->delay); /* the mistake: refused */
    printf("rt_block_on inside a task returned %ld (%s)\n", co->res, strerror((int)-co->res));
    RT_AWAIT(co, co->delay, co->res); /* what it should have been */
    printf("awaited instead: %ld\n", co->res);
    RT_RETURN(co, 0);
    ASYNC_END(&co->task);
}

/* async void: a task fails and nobody awaits it. */
struct doomed {
    struct rt_task task;
    long res;
};

static void doomed_step(void *frame)
{
    struct doomed *co = frame;

    RT_BEGIN(co);
    RT_AWAIT(co, rt_delay(co->task.f.rt, 10, NULL), co->res);
    RT_RETURN(co, -EIO); /* like an exception thrown out of an async void method */
    ASYNC_END(&co->task);
}

int main(int argc, char **argv)
{
    const char *what = argc == 2 ? argv[1] : "";
    char why[256];
    int err;
    struct rt *rt;

    if (strcmp(what, "stall") && strcmp(what, "offload") && strcmp(what, "result") &&
        strcmp(what, "async-void")) {
        fprintf(stderr, "usage: pitfalls stall|offload|result|async-void\n");
        return 2;
    }
    if (!(rt = rt_create(&err, why, sizeof(why)))) {
        fprintf(stderr, "pitfalls: %s\n", why);
        return err == -EINVAL ? 2 : 77;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(what, "stall") == 0 || strcmp(what, "offload") == 0) {
        stall(rt, strcmp(what, "offload") == 0);
    } else if (strcmp(what, "result") == 0) {
        struct sync_over_async *s = RT_TASK_NEW(rt, struct sync_over_async, sync_over_async_step);
        rt_block_on(rt, rt_task_start(&s->task, NULL));
    } else {
        struct doomed *d = RT_TASK_NEW(rt, struct doomed, doomed_step);
        rt_future_release(rt_task_start(&d->task, NULL)); /* fire and forget */
        rt_run(rt);
    }
    rt_destroy(rt);
    return 0;
}
