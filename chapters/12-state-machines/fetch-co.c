/* SPDX-License-Identifier: MIT */
/* fetch-co.c: fetch-sm again, with the state machines written by macros.
 *
 *     make -C chapters/12-state-machines
 *     build/chapters/12-state-machines/http-server -p 8080 &
 *     build/chapters/12-state-machines/fetch-co http://127.0.0.1:8080/hello
 *     gcc -E -P -I common chapters/12-state-machines/fetch-co.c | less   # the expansion
 *
 * The same two functions as fetch-sm.c and get-string.c, FetchUpperAsync
 * and GetStringAsync, but the switch, the state numbers and the resume
 * labels come from coro.h: ASYNC_BEGIN opens a switch on co->line, and each
 * AWAIT stores __LINE__ and leaves a `case __LINE__:` where the code goes on.
 * The code reads top to bottom, like the C#. What does not change: every
 * variable used after an AWAIT is a field of the frame (co->...), and the
 * frame is a struct on the heap, as small as those fields.
 */
#include "buf.h"
#include "coro.h"
#include "http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

struct get_string_co {
    struct task task; /* first: the frame is the task */
    int line;         /* where to resume: 0 at the start, then an AWAIT's __LINE__ */
    struct loop *loop;
    struct http_url url;
    struct loop_wait io; /* io.fd: the socket */
    char request[512];
    size_t request_len, sent;
    struct buf response;
};

/* Release the socket and buffer, set the result or the error; return the
 * task to complete. */
static struct task *get_string_co_end(struct get_string_co *co, int err, const char *call)
{
    size_t off, len;
    int status = 0;

    if (co->io.fd >= 0) {
        loop_forget(co->loop, &co->io);
        close(co->io.fd);
        co->io.fd = -1;
    }
    if (!err && (status = http_parse_response(co->response.data, buf_len(&co->response), &off,
                                              &len)) == 0) {
        if ((co->task.str = malloc(len + 1)) != NULL) {
            memcpy(co->task.str, co->response.data + off, len);
            co->task.str[len] = '\0';
            co->task.len = len;
        } else {
            err = ENOMEM, call = "malloc";
        }
    }
    buf_free(&co->response);
    if (err)
        snprintf(co->task.what, sizeof(co->task.what), "%s(%s:%d)", call, co->url.host,
                 co->url.port);
    else if (status)
        snprintf(co->task.what, sizeof(co->task.what), "HTTP status %d from %s:%d%.40s", status,
                 co->url.host, co->url.port, co->url.path);
    co->task.error = err ? err : status ? EPROTO : 0;
    return &co->task;
}

/* snippet: get_string */
static void get_string_co(void *frame)
{
    struct get_string_co *co = frame;
    ssize_t n;
    int err;

    ASYNC_BEGIN(co);
    err = http_connect_start(&co->url, &co->io.fd);
    if (err == -EINPROGRESS) {
        AWAIT(co, loop_await_fd(co->loop, &co->io, EPOLLOUT));
        err = http_connect_result(co->io.fd);
    }
    if (err < 0)
        ASYNC_RETURN(co, task_complete(get_string_co_end(co, -err, "connect")));
    /* end snippet */

    /* EXERCISE BEGIN coro-loops: send the whole request, then read to EOF, awaiting on EAGAIN */
    while (co->sent < co->request_len) {
        n = send(co->io.fd, co->request + co->sent, co->request_len - co->sent, MSG_NOSIGNAL);
        if (n >= 0)
            co->sent += (size_t)n;
        else if (errno == EAGAIN)
            AWAIT(co, loop_await_fd(co->loop, &co->io, EPOLLOUT));
        else if (errno != EINTR)
            ASYNC_RETURN(co, task_complete(get_string_co_end(co, errno, "send")));
    }

    while ((n = http_recv_some(co->io.fd, &co->response)) != 0) {
        if (n == -EAGAIN)
            AWAIT(co, loop_await_fd(co->loop, &co->io, EPOLLIN));
        else if (n < 0)
            ASYNC_RETURN(co, task_complete(get_string_co_end(co, (int)-n, "recv")));
    }
    /* EXERCISE END */
    ASYNC_RETURN(co, task_complete(get_string_co_end(co, 0, NULL)));
    ASYNC_END(co);
}

static struct task *get_string_co_async(struct loop *l, const char *url)
{
    struct get_string_co *co = task_frame_new(sizeof(*co));
    int n;

    co->loop = l;
    co->io = (struct loop_wait){.fd = -1, .resume = get_string_co, .frame = co};
    buf_init(&co->response);
    if (http_parse_url(url, &co->url) < 0 ||
        (n = http_format_request(&co->url, co->request, sizeof(co->request))) < 0) {
        task_fail(&co->task, EINVAL, "bad URL '%s'", url);
        return &co->task;
    }
    co->request_len = (size_t)n;
    get_string_co(co);
    return &co->task;
}

/* snippet: fetch_upper */
struct fetch_upper_co {
    struct task task;
    int line;
    struct loop *loop;
    const char *url;
    struct task *awaiter;
};

static void fetch_upper_co(void *frame)
{
    struct fetch_upper_co *co = frame;
    struct task *got;

    ASYNC_BEGIN(co);
    co->awaiter = get_string_co_async(co->loop, co->url);
    if (!task_is_completed(co->awaiter))
        AWAIT(co, task_on_completed(co->awaiter, fetch_upper_co, co));
    got = co->awaiter;
    co->task.error = got->error;
    memcpy(co->task.what, got->what, sizeof(co->task.what));
    co->task.str = task_take_string(got, &co->task.len);
    task_free(got);
    if (co->task.str)
        http_to_upper(co->task.str, co->task.len);
    ASYNC_RETURN(co, task_complete(&co->task));
    ASYNC_END(co);
}
/* end snippet */

int main(int argc, char **argv)
{
    const char *url = fetch_cli_parse(argc, argv,
                                      "Fetch URL and print its body in upper case, "
                                      "with stackless coroutine macros.");
    struct fetch_upper_co *co;
    struct loop loop;
    int err, status;

    if ((err = loop_init(&loop)) < 0) {
        fprintf(stderr, "fetch-co: epoll_create1: %s\n", strerror(-err));
        return 1;
    }
    co = task_frame_new(sizeof(*co));
    co->loop = &loop;
    co->url = url;
    fetch_upper_co(co); /* runs to its first AWAIT */
    if ((err = loop_run(&loop)) < 0)
        fprintf(stderr, "fetch-co: epoll_wait: %s\n", strerror(-err));
    TRACE("[main] loop done after %lu resumes; frames: fetch_upper_co %zu bytes, get_string_co "
          "%zu bytes\n",
          loop.resumes, sizeof(struct fetch_upper_co), sizeof(struct get_string_co));
    status = err < 0 ? 1 : fetch_report("fetch-co", &co->task);
    task_free(&co->task);
    loop_fini(&loop);
    return status;
}
