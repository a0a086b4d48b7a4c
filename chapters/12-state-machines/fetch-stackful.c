/* SPDX-License-Identifier: MIT */
/* fetch-stackful.c: FetchUpperAsync once more, on a stackful coroutine.
 *
 *     make -C chapters/12-state-machines
 *     build/chapters/12-state-machines/http-server -p 8080 &
 *     build/chapters/12-state-machines/fetch-stackful http://127.0.0.1:8080/hello
 *
 * No state machine this time: get_string() is written like blocking code,
 * with ordinary locals, and runs on a fiber (fiber.c) with a stack of its
 * own. Where it would block, fiber_wait() arms the loop and switches back to
 * it; the loop switches back in when the fd is ready, and get_string() goes
 * on inside its loop, its locals untouched on the fiber's stack. That is how
 * Go's goroutines and Java's virtual threads look to the code they run. The
 * cost is the stack: chapter 12's coro-cost measures it.
 */
#include "buf.h"
#include "fiber.h"
#include "http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define FETCH_STACK (64 * 1024)

struct fetch_fiber {
    struct fiber fiber;
    struct loop *loop;
    struct loop_wait io; /* io.fd: the socket, while get_string() has one */
    const char *url;
    struct task result; /* not awaited by anyone: only to report like the other two */
};

static void fiber_resume_from_loop(void *frame)
{
    struct fetch_fiber *ff = frame;

    fiber_resume(&ff->fiber);
}

/* snippet: wait */
/* "Block" until fd is ready: the fiber sleeps, the thread goes back to the loop. */
static void fiber_wait(struct fetch_fiber *ff, uint32_t events)
{
    loop_await_fd(ff->loop, &ff->io, events);
    fiber_suspend(&ff->fiber);
}
/* end snippet */

/* snippet: get_string */
static int get_string(struct fetch_fiber *ff, struct buf *body, const char **call)
{
    struct http_url url;
    char request[512];
    size_t sent = 0, off, len;
    struct buf response = BUF_INIT; /* a local, alive across every wait below */
    ssize_t n;
    int err, req_len;

    http_parse_url(ff->url, &url); /* fetch_cli_parse() checked it */
    req_len = http_format_request(&url, request, sizeof(request));
    *call = "connect";
    err = http_connect_start(&url, &ff->io.fd);
    if (err == -EINPROGRESS) {
        fiber_wait(ff, EPOLLOUT);
        err = http_connect_result(ff->io.fd);
    }
    while (err == 0 && sent < (size_t)req_len) {
        *call = "send";
        n = send(ff->io.fd, request + sent, (size_t)req_len - sent, MSG_NOSIGNAL);
        if (n >= 0)
            sent += (size_t)n;
        else if (errno == EAGAIN)
            fiber_wait(ff, EPOLLOUT);
        else if (errno != EINTR)
            err = -errno;
    }
    while (err == 0 && (n = http_recv_some(ff->io.fd, &response)) != 0) {
        *call = "recv";
        if (n == -EAGAIN)
            fiber_wait(ff, EPOLLIN);
        else if (n < 0)
            err = (int)n;
    }
    /* end snippet */
    if (ff->io.fd >= 0) {
        loop_forget(ff->loop, &ff->io);
        close(ff->io.fd);
        ff->io.fd = -1;
    }
    if (err == 0) {
        *call = "HTTP";
        err = http_parse_response(response.data, buf_len(&response), &off, &len);
        if (err > 0)
            snprintf(ff->result.what, sizeof(ff->result.what), "HTTP status %d from %s:%d%.40s",
                     err, url.host, url.port, url.path);
        if (err == 0 && buf_append(body, response.data + off, len) < 0)
            err = -ENOMEM, *call = "malloc";
    }
    buf_free(&response);
    return err;
}

/* The fiber's body: FetchUpperAsync, straight-line. */
static void fetch_upper(void *arg)
{
    struct fetch_fiber *ff = arg;
    struct buf body = BUF_INIT;
    const char *call = "connect";
    int err = get_string(ff, &body, &call);

    if (err > 0) { /* an HTTP status: the message is set */
        ff->result.error = EPROTO;
    } else if (err < 0) {
        ff->result.error = -err;
        snprintf(ff->result.what, sizeof(ff->result.what), "%s(%.100s)", call, ff->url);
    } else if ((ff->result.str = malloc(buf_len(&body) + 1)) != NULL) {
        memcpy(ff->result.str, buf_peek(&body), buf_len(&body));
        ff->result.len = buf_len(&body);
        http_to_upper(ff->result.str, ff->result.len);
    } else {
        ff->result.error = ENOMEM;
        snprintf(ff->result.what, sizeof(ff->result.what), "malloc");
    }
    buf_free(&body);
    ff->result.completed = true;
}

int main(int argc, char **argv)
{
    struct fetch_fiber ff = {.url = fetch_cli_parse(argc, argv,
                                                    "Fetch URL and print its body in upper case, "
                                                    "on a stackful coroutine (ucontext).")};
    struct loop loop;
    int err, status;

    if ((err = loop_init(&loop)) < 0) {
        fprintf(stderr, "fetch-stackful: epoll_create1: %s\n", strerror(-err));
        return 1;
    }
    ff.loop = &loop;
    ff.io = (struct loop_wait){.fd = -1, .resume = fiber_resume_from_loop, .frame = &ff};
    if ((err = fiber_init(&ff.fiber, FETCH_STACK, fetch_upper, &ff)) < 0) {
        fprintf(stderr, "fetch-stackful: fiber stack of %d bytes: %s\n", FETCH_STACK,
                strerror(-err));
        loop_fini(&loop);
        return 1;
    }
    fiber_resume(&ff.fiber); /* runs until its first wait */
    if ((err = loop_run(&loop)) < 0)
        fprintf(stderr, "fetch-stackful: epoll_wait: %s\n", strerror(-err));
    TRACE("[main] loop done after %lu resumes; the fiber's stack: %d bytes\n", loop.resumes,
          FETCH_STACK);
    status = err < 0 ? 1 : fetch_report("fetch-stackful", &ff.result);
    free(ff.result.str);
    fiber_fini(&ff.fiber);
    loop_fini(&loop);
    return status;
}
