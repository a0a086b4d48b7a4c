/* SPDX-License-Identifier: MIT */
/* get-string.c: HttpClient.GetStringAsync(url), as the C# compiler would
 * write it, by hand.
 *
 * The method, as C# would say it (one socket, HTTP/1.0, read to EOF):
 *
 *     async Task<string> GetStringAsync(string url)
 *     {
 *         var socket = new Socket(...);
 *         await socket.ConnectAsync(url.Host, url.Port);         // await #0
 *         int sent = 0;
 *         while (sent < request.Length)
 *             sent += await socket.SendAsync(request[sent..]);   // await #1
 *         var response = new MemoryStream();
 *         int n;
 *         while ((n = await socket.ReceiveAsync(buffer)) > 0)    // await #2
 *             response.Write(buffer, 0, n);
 *         return BodyOf(response);
 *     }
 *
 * Each await becomes: try the operation; if it finished at once (the
 * synchronous fast path), go on; if not (EINPROGRESS, EAGAIN), save the
 * state number, hand the loop this frame's move_next as the continuation,
 * and return. Every local that must survive that return lives in the frame.
 * Built into fetch-sm and sum-pages (see fetch-sm.c).
 */
#include "buf.h"
#include "http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* snippet: frame */
struct get_string_sm {
    struct task task;    /* first: the Task<string> this method returns; the frame is its box */
    int state;           /* <>1__state: -1 running, 0..2 suspended at that await, -2 done */
    struct loop *loop;   /* parameters, hoisted: read after an await */
    struct http_url url; /* (C# would keep the string; this is it, parsed) */
    struct loop_wait io; /* the socket's awaiter: io.fd is the socket */
    char request[512];   /* hoisted locals: live across an await */
    size_t request_len;
    size_t sent;
    struct buf response;
};
/* end snippet */

enum { SM_RUNNING = -1, SM_DONE = -2 };

static void get_string_move_next(void *frame);

/* Leave for good: release what the frame holds, then complete the task.
 * Completing runs the awaiter's continuation, which may free this frame. */
static void get_string_finish(struct get_string_sm *sm, int err, const char *call)
{
    /* EXERCISE BEGIN finally: release the socket and the buffer, set the result, complete last */
    size_t off, len;
    int status = 0;

    if (sm->io.fd >= 0) {
        loop_forget(sm->loop, &sm->io);
        close(sm->io.fd);
        sm->io.fd = -1;
    }
    if (!err && (status = http_parse_response(sm->response.data, buf_len(&sm->response), &off,
                                              &len)) == 0) {
        sm->task.str = malloc(len + 1);
        if (sm->task.str) {
            memcpy(sm->task.str, sm->response.data + off, len);
            sm->task.str[len] = '\0';
            sm->task.len = len;
        } else {
            err = ENOMEM, call = "malloc";
        }
    }
    buf_free(&sm->response);
    sm->state = SM_DONE;
    TRACE("  [get_string] done: %s\n", err ? strerror(err) : status ? "bad response" : "body read");
    if (err)
        task_fail(&sm->task, err, "%s(%s:%d)", call, sm->url.host, sm->url.port);
    else if (status < 0)
        task_fail(&sm->task, EPROTO, "malformed HTTP response from %s:%d", sm->url.host,
                  sm->url.port);
    else if (status > 0)
        task_fail(&sm->task, EPROTO, "HTTP status %d from %s:%d%s", status, sm->url.host,
                  sm->url.port, sm->url.path);
    else
        task_complete(&sm->task);
    /* EXERCISE END */
}

/* snippet: move_next */
static void get_string_move_next(void *frame)
{
    struct get_string_sm *sm = frame;
    ssize_t n;
    int err;

    TRACE("  [get_string] move_next(state %d)\n", sm->state);
    switch (sm->state) { /* jump back to where the last call left off */
    case SM_RUNNING:
        break; /* first call: from the top */
    case 0:
        goto resume_connect;
    case 1:
        goto resume_send;
    case 2:
        goto resume_recv;
    default:
        abort(); /* resumed after it finished: a bug in the awaiter */
    }

    err = http_connect_start(&sm->url, &sm->io.fd);
    if (err == -EINPROGRESS) { /* await #0 did not complete at once: suspend */
        TRACE("  [get_string] connect: EINPROGRESS, suspend in state 0\n");
        sm->state = 0;
        loop_await_fd(sm->loop, &sm->io, EPOLLOUT);
        return;
    resume_connect:
        sm->state = SM_RUNNING;
        err = http_connect_result(sm->io.fd);
    }
    if (err < 0) {
        get_string_finish(sm, -err, "connect");
        return;
    }

    while (sm->sent < sm->request_len) {
        n = send(sm->io.fd, sm->request + sm->sent, sm->request_len - sm->sent, MSG_NOSIGNAL);
        if (n >= 0) {
            sm->sent += (size_t)n; /* the fast path: it took bytes without waiting */
            TRACE("  [get_string] send: %zd bytes at once\n", n);
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN) {
            get_string_finish(sm, errno, "send");
            return;
        }
        TRACE("  [get_string] send: EAGAIN, suspend in state 1\n");
        sm->state = 1; /* await #1: the send buffer is full */
        loop_await_fd(sm->loop, &sm->io, EPOLLOUT);
        return;
    resume_send:
        sm->state = SM_RUNNING;
    }

    for (;;) {
        n = http_recv_some(sm->io.fd, &sm->response);
        if (n > 0) {
            TRACE("  [get_string] recv: %zd bytes at once\n", n);
            continue; /* bytes were there: no suspension */
        }
        if (n == 0)
            break; /* EOF: HTTP/1.0 ends the body with the connection */
        if (n != -EAGAIN) {
            get_string_finish(sm, (int)-n, "recv");
            return;
        }
        TRACE("  [get_string] recv: EAGAIN after %zu bytes, suspend in state 2\n",
              buf_len(&sm->response));
        sm->state = 2; /* await #2: nothing to read yet */
        loop_await_fd(sm->loop, &sm->io, EPOLLIN);
        return;
    resume_recv:
        sm->state = SM_RUNNING;
    }
    get_string_finish(sm, 0, NULL);
}
/* end snippet */

/* snippet: stub */
/* The method itself, as the compiler leaves it: allocate the frame, copy
 * the parameters in, run move_next() once, return the task. */
struct task *get_string_async(struct loop *l, const char *url)
{
    struct get_string_sm *sm = task_frame_new(sizeof(*sm));
    int n;

    sm->state = SM_RUNNING;
    sm->loop = l;
    sm->io = (struct loop_wait){.fd = -1, .resume = get_string_move_next, .frame = sm};
    buf_init(&sm->response);
    if (http_parse_url(url, &sm->url) < 0) {
        task_fail(&sm->task, EINVAL, "bad URL '%s' (want http://ADDR:PORT/PATH)", url);
        return &sm->task; /* failed before any await: an already completed task */
    }
    if ((n = http_format_request(&sm->url, sm->request, sizeof(sm->request))) < 0) {
        task_fail(&sm->task, -n, "URL too long");
        return &sm->task;
    }
    sm->request_len = (size_t)n;
    get_string_move_next(sm);
    return &sm->task;
}
/* end snippet */

size_t get_string_frame_size(void)
{
    return sizeof(struct get_string_sm);
}
