/* SPDX-License-Identifier: MIT */
/* rt.h: the mini async runtime of chapter 13.
 *
 * What .NET gives a C# program with Task, await, the ThreadPool and
 * CancellationToken, in a few small C files on top of the course's own
 * parts: chapter 11's completion library (cio: io_uring, epoll, kqueue),
 * chapter 10's thread pool and chapter 12's coroutine macros.
 *
 *   future    a result that is not there yet: a value (>= 0) or -errno, and
 *             the continuations waiting for it (future.c)
 *   task      a coroutine whose frame is a struct; it is its own future
 *             (task.c), like .NET's AsyncStateMachineBox
 *   run queue continuations ready to run; a completed future never calls
 *             its awaiters, it queues them (loop.c): the trampoline
 *   timers    a binary min-heap of deadlines (timer.c)
 *   tokens    cancellation with parent/child links and deadlines (cancel.c)
 *   I/O       accept, connect, recv, send on cio (io.c); file reads and
 *             blocking calls on the pool (offload.c)
 *
 * Rules:
 *   - everything runs on one thread, the one inside rt_block_on() or
 *     rt_run(); only the function given to rt_run_blocking() runs elsewhere;
 *   - a function that returns a future gives its caller one reference: the
 *     caller awaits it (RT_AWAIT releases it) or drops it (rt_future_release);
 *   - every operation completes exactly once: with its result, or with
 *     -ECANCELED once its token is cancelled.
 *
 * RT_BACKEND=uring|epoll|kqueue picks the backend (the default: io_uring
 * where the kernel allows it, else epoll); RT_TRACE=1 says on stderr how each
 * file read and blocking call is done.
 */
#ifndef CH13_RT_H
#define CH13_RT_H

#include "coro.h" /* chapter 12: ASYNC_BEGIN, AWAIT, ASYNC_END */
#include "list.h" /* common/ */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rt;
struct rt_future;
struct rt_token;

/* ---- the runtime ------------------------------------------------------------ */

/* A runtime on the backend RT_BACKEND names (or the best one). NULL with the
 * reason in `why`: *err is -EINVAL for an unknown backend, else why it failed
 * (io_uring forbidden here: -EPERM). */
struct rt *rt_create(int *err, char *why, size_t whylen);
/* Free the runtime. Reports (stderr) tasks and operations still alive. */
void rt_destroy(struct rt *rt);
const char *rt_backend_name(const struct rt *rt);
/* The backend does file reads itself (io_uring) rather than on a thread. */
bool rt_files_native(const struct rt *rt);

/* SIGINT and SIGTERM cancel the root token (call before anything starts
 * threads, so that they inherit the blocked signals). 0 or -errno. */
int rt_shutdown_on_signals(struct rt *rt);

/* Run the loop until `f` completes; return its result and release it. From
 * inside the loop (a task) this would wait for itself for ever: it says so on
 * stderr and returns -EDEADLK at once, and `f` stays the caller's, to await
 * (.NET's `.Result` deadlock). If nothing in flight could ever complete `f`,
 * it names the tasks still waiting, releases `f` and returns -EDEADLK. */
long rt_block_on(struct rt *rt, struct rt_future *f);
/* Run the loop until no task is left. 0, or -EDEADLK as above. */
int rt_run(struct rt *rt);

/* ---- futures (future.c) -------------------------------------------------------- */

/* A continuation: what runs when a future completes. It is queued on the
 * run queue, never called from inside the completion (the trampoline). */
struct rt_cont {
    void (*run)(struct rt_cont *c);
    struct rt_cont *next; /* in a future's list, then in the run queue */
};

/* snippet: future */
struct rt_future {
    struct rt *rt;
    unsigned refs;                     /* the caller's, the producer's, a combinator's... */
    bool done;                         /* res is final; continuations were queued */
    bool observed;                     /* someone read res (an unread failure is reported) */
    long res;                          /* the value (>= 0), or -errno */
    struct rt_cont *conts;             /* waiting for it, until done */
    const char *name;                  /* for reports: "task conn", "recv" */
    void (*free)(struct rt_future *f); /* releases the object around it */
};
/* end snippet */

/* A future completed by hand (a TaskCompletionSource): the caller holds two
 * references, one to await it with, one that rt_promise_complete() uses up. */
struct rt_future *rt_promise(struct rt *rt, const char *name);
void rt_promise_complete(struct rt_future *f, long res);

static inline bool rt_future_done(const struct rt_future *f)
{
    return f->done;
}
/* The result of a completed future (marks it observed). */
long rt_future_result(struct rt_future *f);
struct rt_future *rt_future_ref(struct rt_future *f);
void rt_future_release(struct rt_future *f);
/* Read the result and release the reference: what `await` ends with. */
long rt_future_take(struct rt_future *f);

/* ---- tasks (task.c) ------------------------------------------------------------ */

/* snippet: task */
struct rt_task {
    struct rt_future f;         /* first: a task is its own future */
    int line;                   /* coro.h: where to resume */
    void (*step)(void *frame);  /* the coroutine: the frame's MoveNext */
    struct rt_future *awaiting; /* the future it is suspended on */
    struct rt_cont resume;      /* queued to run step() again */
    struct rt_token *token;     /* its cancellation token (may be NULL) */
    struct list_node link;      /* in the runtime's list of live tasks */
};
/* end snippet */

/* A zeroed frame of `size` bytes whose first member is a struct rt_task;
 * fill in its arguments, then rt_task_start(). Exits on ENOMEM. */
void *rt_task_new(struct rt *rt, size_t size, void (*step)(void *frame), const char *name);
#define RT_TASK_NEW(rt, type, step) ((type *)rt_task_new((rt), sizeof(type), (step), #step))
/* Queue the task's first step. The caller keeps one reference to its future:
 * await it, or rt_future_release() it (fire and forget). */
struct rt_future *rt_task_start(struct rt_task *t, struct rt_token *token);

/* snippet: macros */
/* In a step function whose frame `co` has a `struct rt_task task` first: */
#define RT_BEGIN(co) ASYNC_BEGIN(&(co)->task)

/* Suspend until the future `fut` completes, then put its result in `out`
 * and release it. A future already complete costs no suspension (C#'s
 * IsCompleted fast path). */
#define RT_AWAIT(co, fut, out)                                                                     \
    do {                                                                                           \
        (co)->task.awaiting = (fut);                                                               \
        if (!rt_future_done((co)->task.awaiting))                                                  \
            AWAIT(&(co)->task, rt_task_suspend(&(co)->task));                                      \
        (out) = rt_future_take((co)->task.awaiting);                                               \
    } while (0)

/* Finish with a result (>= 0) or -errno. Nothing may touch `co` afterwards:
 * completing the task may free its frame. */
#define RT_RETURN(co, value) ASYNC_RETURN(&(co)->task, rt_task_return(&(co)->task, (value)))

#define RT_END(co)                                                                                 \
    RT_RETURN(co, 0);                                                                              \
    ASYNC_END(&(co)->task)
/* end snippet */

void rt_task_suspend(struct rt_task *t);
void rt_task_return(struct rt_task *t, long res);

/* ---- timers (timer.c) ------------------------------------------------------------ */

/* Complete with 0 after `ms` milliseconds, or -ECANCELED if `tok` is
 * cancelled first (the timer is then removed: Task.Delay(ms, token)). */
struct rt_future *rt_delay(struct rt *rt, unsigned ms, struct rt_token *tok);

/* ---- combinators (when.c) --------------------------------------------------------- */

/* Complete when every future has: 0, or the first error among them (in the
 * order they failed). The futures stay the caller's (read their results). */
struct rt_future *rt_when_all(struct rt *rt, struct rt_future **fs, size_t n);
/* Complete when the first one does, with its index. The others go on. */
struct rt_future *rt_when_any(struct rt *rt, struct rt_future **fs, size_t n);

/* ---- cancellation (cancel.c) ------------------------------------------------------- */

/* The token SIGINT/SIGTERM cancel (rt_shutdown_on_signals): every other
 * token should descend from it. */
struct rt_token *rt_root_token(struct rt *rt);
/* A token cancelled with its parent (NULL: none), or on its own. */
struct rt_token *rt_token_new(struct rt *rt, struct rt_token *parent);
/* Cancel it and every descendant: their operations complete with -ECANCELED. */
void rt_token_cancel(struct rt_token *tok);
/* Cancel it `ms` milliseconds from now (CancellationTokenSource.CancelAfter);
 * a second call moves the deadline. */
void rt_token_cancel_after(struct rt_token *tok, unsigned ms);
bool rt_token_cancelled(const struct rt_token *tok);
/* Free it: its children lose their link to it; no operation may use it. */
void rt_token_free(struct rt_token *tok);

/* ---- sockets (io.c) ---------------------------------------------------------------- */

/* Each returns a future completing as cio says (cio.h): a new fd, bytes
 * received (0: end of stream), bytes sent (all of them: short sends are
 * sent on inside), or -errno; -ECANCELED when `tok` is cancelled first. The
 * buffer belongs to the runtime until the future completes. */
struct rt_future *rt_accept(struct rt *rt, int listen_fd, struct rt_token *tok);
struct rt_future *rt_recv(struct rt *rt, int fd, void *buf, size_t len, struct rt_token *tok);
struct rt_future *rt_send(struct rt *rt, int fd, const void *buf, size_t len, struct rt_token *tok);
/* snippet: pooled */
/* A receive that holds no buffer while it waits (cio's CIO_RECV_POOLED):
 * the future completes with the bytes received (at most 16 KiB), 0 at end
 * of stream or -errno, and when it is > 0, *bufp points to a pool buffer
 * holding them, the caller's until rt_buf_release(). Otherwise *bufp is
 * NULL. bufp, like rt_recv's buffer, must outlive the operation; if the
 * caller drops the future, bytes that arrive are released unread. */
struct rt_future *rt_recv_pooled(struct rt *rt, int fd, void **bufp, struct rt_token *tok);
void rt_buf_release(struct rt *rt, void *buf);
/* end snippet */
/* A connected, attached socket to addr:port, or -errno. cio has no connect
 * operation: a blocking connect() runs on the pool. */
struct rt_future *rt_connect(struct rt *rt, const char *addr, int port, struct rt_token *tok);
/* Ready a new fd for the loop (non-blocking where the backend needs it). */
int rt_attach(struct rt *rt, int fd);
/* Detach and close: no operation of the fd may be in flight. */
void rt_close(struct rt *rt, int fd);

/* ---- offload (offload.c) ------------------------------------------------------------- */

/* Run fn(arg) on the thread pool; the future completes with its return
 * value on the loop thread (Task.Run). A blocking call, never on the loop.
 * Cancelling `tok` takes the job back if no thread has started it. */
struct rt_future *rt_run_blocking(struct rt *rt, long (*fn)(void *arg), void *arg,
                                  struct rt_token *tok);
/* pread(fd, buf, len, offset) without blocking the loop: natively on
 * io_uring, on the pool elsewhere (RT_TRACE=1 says which). */
struct rt_future *rt_read_file(struct rt *rt, int fd, void *buf, size_t len, int64_t offset,
                               struct rt_token *tok);

#endif
