/* SPDX-License-Identifier: MIT */
/* task.c: tasks, coroutines whose frame is a struct.
 *
 * A task is a future (its result) and a step function (chapter 12's
 * MoveNext, written with coro.h's macros) in one allocation, the frame, as
 * .NET's AsyncStateMachineBox is both the Task and the boxed state machine.
 *
 *   rt_task_start ──► READY ──step()──► RUNNING ──RT_AWAIT, not done──► SUSPENDED
 *                      ▲                   │                                │
 *                      └───────────────────┼──── the future completes: ─────┘
 *                                          │     resume queued on the run queue
 *                                          └──RT_RETURN──► DONE (future completed)
 *
 * A task that fails with nobody looking is the C version of `async void`:
 * its error would vanish. The runtime notices when the frame is freed: a
 * failed result nobody ever read is reported on stderr then.
 */
#include "rt_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* snippet: unobserved */
static void task__free(struct rt_future *f)
{
    struct rt_task *t = (struct rt_task *)f;

    /* Cancellation is not a failure: .NET does not report it either. */
    if (f->done && f->res < 0 && f->res != -ECANCELED && !f->observed)
        fprintf(stderr,
                "rt: task %s failed (%s) and nobody awaited it: the error would have been lost\n",
                f->name, strerror((int)-f->res));
    free(t);
}
/* end snippet */

static void task__resume(struct rt_cont *c)
{
    struct rt_task *t = RT_CONTAINER(c, struct rt_task, resume);

    t->step(t); /* the frame starts with the task */
}

void *rt_task_new(struct rt *rt, size_t size, void (*step)(void *frame), const char *name)
{
    struct rt_task *t = rt__alloc(size);

    /* Two references: the caller's, and the task's own until it returns. */
    rt__future_init(&t->f, rt, name, 2, task__free);
    t->step = step;
    t->resume.run = task__resume;
    return t;
}

struct rt_future *rt_task_start(struct rt_task *t, struct rt_token *token)
{
    struct rt *rt = t->f.rt;

    t->token = token;
    list_insert(&rt->tasks, &t->link);
    rt->ntasks++;
    rt__post(rt, &t->resume);
    return &t->f;
}

/* snippet: suspend */
void rt_task_suspend(struct rt_task *t)
{
    rt__future_on_done(t->awaiting, &t->resume);
}
/* end snippet */

void rt_task_return(struct rt_task *t, long res)
{
    struct rt *rt = t->f.rt;

    list_remove(&t->link);
    rt->ntasks--;
    rt__future_complete(&t->f, res);
    rt_future_release(&t->f); /* may free the frame */
}
