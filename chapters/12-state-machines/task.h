/* SPDX-License-Identifier: MIT */
/* task.h: Task<T> in C, the object an async function returns at once.
 *
 * The function runs until it would wait, and returns a task that is not
 * completed yet. Whoever awaits it asks task_is_completed() (C#'s
 * awaiter.IsCompleted): if the result is already there it reads it on the
 * spot, the synchronous fast path; if not, it hands the task its
 * continuation with task_on_completed() (AwaitUnsafeOnCompleted) and returns.
 * task_complete() runs that continuation.
 *
 * Like .NET's AsyncStateMachineBox, which is both the Task and the boxed
 * state machine, a task is the first member of its function's frame: one
 * allocation holds both, and task_free() releases both.
 */
#ifndef CH12_TASK_H
#define CH12_TASK_H

#include "loop.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct task {
    bool completed;
    int error;      /* 0, or the positive errno it failed with: the exception */
    char what[160]; /* the call that failed: "connect(127.0.0.1:8080)" */
    char *str;      /* Task<string>'s result, owned by the task until taken */
    size_t len;
    long value;                        /* Task<long>'s result */
    void (*continuation)(void *frame); /* the awaiter's move_next, once it suspended on us */
    void *continuation_frame;
};

/* A zeroed frame of `frame_size` bytes whose first member is a struct task.
 * Exits on ENOMEM, as .NET throws OutOfMemoryException. */
void *task_frame_new(size_t frame_size);

static inline bool task_is_completed(const struct task *t)
{
    return t->completed;
}

/* The awaiter side: resume(frame) runs when t completes. Only for a task not
 * completed yet; one continuation per task (await it once). */
void task_on_completed(struct task *t, void (*resume)(void *frame), void *frame);

/* The async function's side: the result (or t->error) is set; run the
 * continuation. The continuation may free the frame that holds t, so this is
 * the last thing a move_next() may do with its frame. */
void task_complete(struct task *t);
void task_fail(struct task *t, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Take the string result (the caller frees it), or NULL if the task failed. */
char *task_take_string(struct task *t, size_t *len);

/* Free a completed task, with the frame around it. */
void task_free(struct task *t);

/* Task.Delay(ms): a task completed by the loop after `ms` milliseconds. */
struct task *task_delay(struct loop *l, int ms);

/* -v: each state machine says what it does at each step, on stderr. */
extern bool task_trace;
#define TRACE(...)                                                                                 \
    do {                                                                                           \
        if (task_trace)                                                                            \
            fprintf(stderr, __VA_ARGS__);                                                          \
    } while (0)

#endif
