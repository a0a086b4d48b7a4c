/* SPDX-License-Identifier: MIT */
/* coro.h: stackless coroutines in C, from a switch and __LINE__.
 *
 * The trick is Duff's device, as Simon Tatham's coroutines and Adam
 * Dunkels' protothreads use it: case labels may sit anywhere inside their
 * switch, even inside a loop or an if. So the whole body of a coroutine goes
 * inside one `switch (co->line)`, and every AWAIT leaves a `case __LINE__:`
 * behind it. To suspend, AWAIT stores its own line number in co->line and
 * returns; the next call switches straight to that case, back inside
 * whatever loop it was in. The state number the C# compiler assigns by hand
 * (get-string.c) is here the source line.
 *
 *     static void my_move_next(void *frame)
 *     {
 *         struct my_frame *co = frame;     // co->line starts at 0
 *         ASYNC_BEGIN(co);
 *         for (co->i = 0; co->i < 3; co->i++)
 *             AWAIT(co, loop_await_fd(co->loop, &co->io, EPOLLIN));
 *         ASYNC_END(co);
 *     }
 *
 * The rules it imposes, both shown by coro-pitfalls.c:
 *   1. Locals do not survive an AWAIT. The function really returns, its stack
 *      frame is gone, and the next call starts a new one. Whatever must
 *      outlive an AWAIT lives in the frame struct (co->i above, not int i).
 *   2. No AWAIT inside a switch of your own: its `case __LINE__:` would
 *      belong to the inner switch, and the resume would find no case for it.
 *      ASYNC_END's default: catches that and says so.
 * And two AWAITs may not share a line (a duplicate case: a compile error).
 */
#ifndef CH12_CORO_H
#define CH12_CORO_H

#include <stdio.h>

enum { CORO_START = 0, CORO_DONE = -1, CORO_LOST = -2 };

static inline void coro_lost(int line, const char *func)
{
    fprintf(stderr,
            "%s: resumed at line %d, but its switch has no case %d (an AWAIT inside a nested "
            "switch?) or it had finished\n",
            func, line, line);
}

/* snippet: macros */
#define ASYNC_BEGIN(co)                                                                            \
    switch ((co)->line) {                                                                          \
    case CORO_START:

/* Suspend: remember this line, run `arm` (which arranges for the frame to be
 * resumed: loop_await_fd, task_on_completed), return. Resuming lands here. */
#define AWAIT(co, arm)                                                                             \
    do {                                                                                           \
        (co)->line = __LINE__;                                                                     \
        arm;                                                                                       \
        return;                                                                                    \
    case __LINE__:;                                                                                \
    } while (0)

/* Leave for good. `complete` runs last (task_complete...): the continuation
 * it runs may free the frame, so nothing may touch `co` after it. */
#define ASYNC_RETURN(co, complete)                                                                 \
    do {                                                                                           \
        (co)->line = CORO_DONE;                                                                    \
        complete;                                                                                  \
        return;                                                                                    \
    } while (0)

#define ASYNC_END(co)                                                                              \
    (co)->line = CORO_DONE;                                                                        \
    return;                                                                                        \
    default:                                                                                       \
        coro_lost((co)->line, __func__);                                                           \
        (co)->line = CORO_LOST;                                                                    \
        }
/* end snippet */

#endif
