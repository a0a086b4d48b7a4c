/* SPDX-License-Identifier: MIT */
/* task.c: Task<T> for chapter 12 (see task.h). */
#include "task.h"
#include "net.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

bool task_trace;

void *task_frame_new(size_t frame_size)
{
    void *frame = calloc(1, frame_size);

    if (!frame)
        net_die(ENOMEM, "calloc(%zu)", frame_size);
    return frame;
}

void task_on_completed(struct task *t, void (*resume)(void *frame), void *frame)
{
    t->continuation = resume;
    t->continuation_frame = frame;
}

/* snippet: complete */
void task_complete(struct task *t)
{
    void (*resume)(void *) = t->continuation;

    t->completed = true;
    if (resume)
        resume(t->continuation_frame); /* inline, as .NET runs most continuations */
}
/* end snippet */

void task_fail(struct task *t, int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(t->what, sizeof(t->what), fmt, ap);
    va_end(ap);
    t->error = err;
    task_complete(t);
}

char *task_take_string(struct task *t, size_t *len)
{
    char *s = t->str;

    *len = t->len;
    t->str = NULL;
    t->len = 0;
    return s;
}

void task_free(struct task *t)
{
    if (t) {
        free(t->str);
        free(t); /* the task is the first member of its frame: this frees the frame */
    }
}

/* ---- Task.Delay ------------------------------------------------------------ */

struct delay_frame {
    struct task task; /* first: the frame is the task */
    struct loop *loop;
    struct loop_wait wait; /* a one-shot timerfd */
};

static void delay__fired(void *frame)
{
    struct delay_frame *d = frame;

    loop_forget(d->loop, &d->wait);
    close(d->wait.fd);
    task_complete(&d->task);
}

struct task *task_delay(struct loop *l, int ms)
{
    struct delay_frame *d = task_frame_new(sizeof(*d));
    int fd = loop_timerfd(ms, 0);

    if (fd < 0) {
        task_fail(&d->task, -fd, "timerfd_create");
        return &d->task;
    }
    d->loop = l;
    d->wait = (struct loop_wait){.fd = fd, .resume = delay__fired, .frame = d};
    loop_await_fd(l, &d->wait, EPOLLIN);
    return &d->task;
}
