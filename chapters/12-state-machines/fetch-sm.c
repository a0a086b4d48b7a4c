/* SPDX-License-Identifier: MIT */
/* fetch-sm.c: an async C# method rewritten in C the way the C# compiler
 * rewrites it, as a state machine, on an epoll loop.
 *
 *     make -C chapters/12-state-machines
 *     build/chapters/12-state-machines/http-server -p 8080 &
 *     build/chapters/12-state-machines/fetch-sm http://127.0.0.1:8080/hello
 *     build/chapters/12-state-machines/fetch-sm -v http://127.0.0.1:8080/hello  # every step
 *
 * The method:
 *
 *     async Task<string> FetchUpperAsync(string url)
 *     {
 *         var client = new HttpClient();
 *         string body = await client.GetStringAsync(url);
 *         return body.ToUpperInvariant();
 *     }
 *
 * The compiler turns it into a frame (a struct holding the parameters, the
 * locals that live across an await, the state number and the awaiter) and a
 * MoveNext() that switches on the state. Here both are written out, and
 * GetStringAsync (get-string.c) is a second state machine of the same
 * shape, with three awaits, on non-blocking connect/send/recv.
 */
#include "http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* snippet: frame */
struct fetch_upper_sm {
    struct task task; /* first: the Task<string> FetchUpperAsync returns (the builder's) */
    int state;        /* <>1__state: -1 not started or running, 0 suspended at the await, -2 done */
    struct loop *loop; /* the parameters, hoisted */
    const char *url;
    struct task *awaiter; /* <>u__1: the TaskAwaiter<string> kept while suspended */
    /* `client` and `body` are not here: neither is read after the await */
};
/* end snippet */

/* snippet: move_next */
static void fetch_upper_move_next(void *frame)
{
    struct fetch_upper_sm *sm = frame;
    struct task *awaiter;
    char *body;
    size_t len;

    TRACE("[fetch_upper] move_next(state %d)\n", sm->state);
    if (sm->state != 0) {                              /* -1: the first call, from the stub */
        awaiter = get_string_async(sm->loop, sm->url); /* client.GetStringAsync(url).GetAwaiter() */
        if (!task_is_completed(awaiter)) {             /* awaiter.IsCompleted */
            TRACE("[fetch_upper] GetStringAsync not completed: suspend in state 0\n");
            sm->state = 0;
            sm->awaiter = awaiter;
            task_on_completed(awaiter, fetch_upper_move_next, sm); /* AwaitUnsafeOnCompleted */
            return;
        }
        TRACE("[fetch_upper] GetStringAsync completed at once: no suspension\n");
    } else { /* 0: resumed by the awaiter's completion */
        awaiter = sm->awaiter;
        sm->awaiter = NULL;
        sm->state = -1;
    }

    /* awaiter.GetResult(): the string, or the exception thrown again here */
    if (awaiter->error) {
        sm->task.error = awaiter->error;
        snprintf(sm->task.what, sizeof(sm->task.what), "%s", awaiter->what);
        task_free(awaiter);
        sm->state = -2;
        task_complete(&sm->task); /* <>t__builder.SetException(e) */
        return;
    }
    body = task_take_string(awaiter, &len);
    task_free(awaiter);
    http_to_upper(body, len); /* body.ToUpperInvariant() */
    sm->task.str = body;
    sm->task.len = len;
    sm->state = -2;
    TRACE("[fetch_upper] done: %zu bytes\n", len);
    task_complete(&sm->task); /* <>t__builder.SetResult(result): runs our awaiter's continuation */
}
/* end snippet */

/* snippet: stub */
/* What is left of FetchUpperAsync itself: the stub that starts the machine. */
static struct task *fetch_upper_async(struct loop *l, const char *url)
{
    struct fetch_upper_sm *sm = task_frame_new(sizeof(*sm));

    sm->loop = l;
    sm->url = url;
    sm->state = -1;
    fetch_upper_move_next(sm); /* <>t__builder.Start(ref stateMachine) */
    return &sm->task;          /* <>t__builder.Task */
}
/* end snippet */

int main(int argc, char **argv)
{
    const char *url = fetch_cli_parse(argc, argv,
                                      "Fetch URL and print its body in upper case, "
                                      "with hand-written state machines.");
    struct loop loop;
    struct task *t;
    int err, status;

    if ((err = loop_init(&loop)) < 0) {
        fprintf(stderr, "fetch-sm: epoll_create1: %s\n", strerror(-err));
        return 1;
    }
    t = fetch_upper_async(&loop, url);
    TRACE("[main] fetch_upper_async returned, task %s; running the loop\n",
          task_is_completed(t) ? "completed" : "not completed");
    if ((err = loop_run(&loop)) < 0)
        fprintf(stderr, "fetch-sm: epoll_wait: %s\n", strerror(-err));
    TRACE("[main] loop done after %lu resumes; frames: fetch_upper_sm %zu bytes, "
          "get_string_sm %zu bytes\n",
          loop.resumes, sizeof(struct fetch_upper_sm), get_string_frame_size());
    status = err < 0 ? 1 : fetch_report("fetch-sm", t);
    task_free(t);
    loop_fini(&loop);
    return status;
}
