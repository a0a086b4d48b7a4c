/* SPDX-License-Identifier: MIT */
/* sum-pages-sm.c: SumPagesAsync, hand-transformed into a state machine.
 *
 * The method (C#):
 *
 *     async Task<long> SumPagesAsync(string baseUrl, int pages, int delayMs)
 *     {
 *         long total = 0;
 *         for (int i = 1; i <= pages; i++)
 *         {
 *             string page = await client.GetStringAsync($"{baseUrl}/page/{i}"); // await #0
 *             long words = CountWords(page);
 *             Console.WriteLine($"page {i}: {words} words");
 *             total += words;
 *             await Task.Delay(delayMs);                                        // await #1
 *         }
 *         return total;
 *     }
 *
 * Built with the chapter's sum-pages.c (main, and a timer that prints a tick
 * every few milliseconds: the proof that the loop never waits on this code),
 * get-string.c (get_string_async), task.c (task_delay) and loop.c.
 */
#include "todo.h"
#include "http.h"
#include "sum-pages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sum_pages_sm {
    struct task task; /* first: the Task<long> SumPagesAsync returns */
    int state;        /* -1 running, 0 suspended at await #0, 1 at await #1, -2 done */
    /* the parameters */
    struct loop *loop;
    const char *base_url;
    int pages;
    int delay_ms;
    /* the locals that live across an await */
    int i;
    long total;
    struct task *awaiter; /* the task awaited while suspended (either await) */
};

enum { SUM_RUNNING = -1, SUM_DONE = -2 };

/* The awaited task t failed: fail ours with its error (the exception goes
 * up). Frees t. Completes our task, so it is the last thing move_next does. */
static void sum_pages_fail(struct sum_pages_sm *sm, struct task *t)
{
    sm->task.error = t->error;
    memcpy(sm->task.what, t->what, sizeof(sm->task.what));
    task_free(t);
    sm->state = SUM_DONE;
    task_complete(&sm->task);
}

/* GetResult() of a completed GetStringAsync task, then CountWords(page) and
 * Console.WriteLine: prints "page I: N words", returns N. Frees t. */
static long sum_pages_count(int i, struct task *t)
{
    size_t len;
    char *page = task_take_string(t, &len);
    long words = count_words(page, len);

    free(page);
    task_free(t);
    printf("page %d: %ld words\n", i, words);
    return words;
}

static void sum_pages_move_next(void *frame)
{
    struct sum_pages_sm *sm = frame;
    char url[320];

    TODO("SumPagesAsync by hand: a switch, two awaits, state saved first");
}

/* The stub the compiler leaves in place of the method. */
struct task *sum_pages_async(struct loop *l, const char *base_url, int pages, int delay_ms)
{
    struct sum_pages_sm *sm = task_frame_new(sizeof(*sm));

    sm->loop = l;
    sm->base_url = base_url;
    sm->pages = pages;
    sm->delay_ms = delay_ms;
    sm->state = SUM_RUNNING;
    sum_pages_move_next(sm);
    return &sm->task;
}
