/* SPDX-License-Identifier: MIT */
/* http-rt.c: a small HTTP/1.1 static file server on the runtime.
 *
 * GET and HEAD; keep-alive (HTTP/1.1's default) with Content-Length on
 * every response; 400 for a malformed request or a path that climbs out of
 * the root, 404 for a missing file, 405 for any other method. A connection
 * that sends no complete request for IDLE ms is closed: its wait runs under
 * a token that cancel_after() cancels. Files are read with rt_read_file():
 * in the kernel on io_uring, on the pool on epoll and kqueue (RT_TRACE=1).
 *
 *     make -C chapters/13-mini-runtime
 *     build/chapters/13-mini-runtime/http-rt -p 0 -r chapters/13-mini-runtime
 *     curl -v http://127.0.0.1:PORT/README.md                (another terminal)
 *     wrk -t2 -c50 -d5s http://127.0.0.1:PORT/README.md
 *
 * open() and fstat() stay on the loop thread: they touch only the page
 * cache's metadata here, and .NET's File.Open is synchronous too.
 */
#include "http-req.h"
#include "net.h"
#include "rt.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define IN_MAX     8192 /* a request head larger than this gets a 400 */
#define BODY_CHUNK (64 * 1024)

static int root_fd = -1;
static long idle_ms = 5000;

/* snippet: conn */
struct http_conn {
    struct rt_task task;
    int fd;
    struct rt_token *wait; /* the wait for the next request: cancelled after idle_ms */
    struct http_req req;
    size_t have, head; /* bytes in `in`; the current request's head length */
    long n;
    int file; /* the file being sent, or -1 */
    long long off, size;
    size_t out_len;
    char in[IN_MAX];
    char out[512]; /* the response head, and the body of an error */
    char body[BODY_CHUNK];
};
/* end snippet */

/* Where openat2() is missing (Linux before 5.6, or valgrind, which does not
 * know the call), walk the path one name at a time with O_NOFOLLOW: no
 * symbolic link is followed at all, stricter than RESOLVE_BENEATH, which
 * follows one that stays inside. http_path_ok() has refused "..". */
static int http_open_nofollow(const char *path)
{
    int dir = root_fd, fd = -1;

    for (;;) {
        const char *slash = strchr(path, '/');
        char name[256];
        size_t len = slash ? (size_t)(slash - path) : strlen(path);

        if (len == 0 || len >= sizeof(name)) {
            errno = ENOENT;
            fd = -1;
            break;
        }
        memcpy(name, path, len);
        name[len] = '\0';
        fd = openat(dir, name, (slash ? O_PATH | O_DIRECTORY : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
        if (dir != root_fd)
            close(dir);
        if (fd < 0 || !slash)
            break;
        dir = fd;
        path = slash + 1;
    }
    return fd;
}

/* Open path under the root, never above it: RESOLVE_BENEATH (Linux 5.6)
 * makes the kernel refuse "..", absolute symlinks and the like. */
static int http_open(const char *path)
{
    struct open_how how = {.flags = O_RDONLY | O_CLOEXEC, .resolve = RESOLVE_BENEATH};
    int fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));

    if (fd < 0 && errno == ENOSYS)
        fd = http_open_nofollow(path);
    return fd;
}

static const char *http_reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    default:
        return "Internal Server Error";
    }
}

/* Decide the response to the request in in[0..head): status, headers, and
 * the file to send (co->file) or the error body (in co->out). */
static void http_prepare(struct http_conn *co)
{
    struct http_req *r = &co->req;
    struct stat st;
    int status = 200;
    char err[64] = "";

    co->file = -1;
    co->off = co->size = 0;
    if (http_parse_request(co->in, co->head, r) < 0 || r->has_body || !http_path_ok(r->path)) {
        status = 400;
        r->keep_alive = false; /* we may not know where the next request starts */
    } else if (r->method == HTTP_OTHER) {
        status = 405;
    } else if ((co->file = http_open(r->path + 1)) < 0 || fstat(co->file, &st) < 0 ||
               !S_ISREG(st.st_mode)) {
        status = 404;
    } else {
        co->size = st.st_size;
    }
    if (status != 200 && co->file >= 0) {
        close(co->file);
        co->file = -1;
    }
    if (status != 200)
        co->size = snprintf(err, sizeof(err), "%d %s\n", status, http_reason(status));
    co->out_len = (size_t)snprintf(co->out, sizeof(co->out),
                                   "HTTP/1.1 %d %s\r\nContent-Length: %lld\r\nContent-Type: %s\r\n"
                                   "%sConnection: %s\r\n\r\n",
                                   status, http_reason(status), co->size,
                                   status == 200 ? http_content_type(r->path) : "text/plain",
                                   status == 405 ? "Allow: GET, HEAD\r\n" : "",
                                   r->keep_alive ? "keep-alive" : "close");
    if (status != 200 && r->method != HTTP_HEAD)
        co->out_len +=
            (size_t)snprintf(co->out + co->out_len, sizeof(co->out) - co->out_len, "%s", err);
}

/* snippet: step */
static void http_conn_step(void *frame)
{
    struct http_conn *co = frame;
    struct rt *rt = co->task.f.rt;

    RT_BEGIN(co);
    for (;;) {
        /* A whole request head, within idle_ms. */
        co->wait = rt_token_new(rt, co->task.token);
        rt_token_cancel_after(co->wait, (unsigned)idle_ms);
        co->n = 1;
        while (!(co->head = http_head_len(co->in, co->have)) && co->have < sizeof(co->in)) {
            RT_AWAIT(co,
                     rt_recv(rt, co->fd, co->in + co->have, sizeof(co->in) - co->have, co->wait),
                     co->n);
            if (co->n <= 0) /* closed, reset, idle too long (-ECANCELED), shutdown */
                break;
            co->have += (size_t)co->n;
        }
        rt_token_free(co->wait);
        if (co->n <= 0)
            break;
        if (!co->head) /* IN_MAX bytes and no end of head: answer 400, then close */
            co->head = co->have;
        http_prepare(co);

        RT_AWAIT(co, rt_send(rt, co->fd, co->out, co->out_len, co->task.token), co->n);
        while (co->n >= 0 && co->file >= 0 && co->req.method == HTTP_GET && co->off < co->size) {
            RT_AWAIT(
                co, rt_read_file(rt, co->file, co->body, sizeof(co->body), co->off, co->task.token),
                co->n);
            if (co->n <= 0) { /* the file shrank or failed: the length we promised is a lie */
                co->n = -EIO;
                break;
            }
            co->off += co->n;
            RT_AWAIT(co, rt_send(rt, co->fd, co->body, (size_t)co->n, co->task.token), co->n);
        }
        if (co->file >= 0)
            close(co->file);
        if (co->n < 0 || !co->req.keep_alive)
            break;
        co->have -= co->head; /* a pipelined next request may be here already */
        memmove(co->in, co->in + co->head, co->have);
    }
    rt_close(rt, co->fd);
    RT_RETURN(co, 0);
    ASYNC_END(&co->task);
}
/* end snippet */

struct http_server {
    struct rt_task task;
    int listener;
    long fd;
};

static void http_server_step(void *frame)
{
    struct http_server *co = frame;
    struct rt *rt = co->task.f.rt;
    struct http_conn *c;

    RT_BEGIN(co);
    for (;;) {
        RT_AWAIT(co, rt_accept(rt, co->listener, co->task.token), co->fd);
        if (co->fd == -ECANCELED)
            break;
        if (co->fd < 0) {
            fprintf(stderr, "accept(fd=%d): %s\n", co->listener, strerror((int)-co->fd));
            RT_AWAIT(co, rt_delay(rt, 100, co->task.token), co->fd); /* EMFILE: no busy loop */
            continue;
        }
        net_set_nodelay((int)co->fd);
        if (rt_attach(rt, (int)co->fd) < 0) {
            rt_close(rt, (int)co->fd);
            continue;
        }
        c = RT_TASK_NEW(rt, struct http_conn, http_conn_step);
        c->fd = (int)co->fd;
        rt_future_release(rt_task_start(&c->task, co->task.token));
    }
    RT_RETURN(co, 0);
    ASYNC_END(&co->task);
}

static int http_option(int opt, const char *arg, void *ctx)
{
    (void)ctx;
    if (opt == 'i')
        return net_parse_int(arg, 1, 3600 * 1000, &idle_ms) == 0 ? 0 : -1;
    if (opt == 'r') {
        root_fd = open(arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0) {
            fprintf(stderr, "http-rt: open(%s): %s\n", arg, strerror(errno));
            return -1;
        }
        return 0;
    }
    return -1;
}

int main(int argc, char **argv)
{
    static const struct net_cli_extra extra = {
        .optstring = "r:i:",
        .usage = "  -r DIR   the folder to serve (default: the current one)\n"
                 "  -i MS    close a connection idle this long (default 5000)\n",
        .on_opt = http_option};
    struct net_cli cli;
    struct http_server *srv;
    char why[256];
    struct rt *rt;
    int err, listener;
    long res;

    net_cli_parse(&cli, argc, argv, "A static HTTP/1.1 file server on the mini runtime.", &extra);
    if (root_fd < 0 && (root_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        net_die(errno, "open(.)");
    if (!(rt = rt_create(&err, why, sizeof(why)))) {
        fprintf(stderr, "http-rt: %s\n", why);
        return err == -EINVAL ? 2 : 77;
    }
    fprintf(stderr, "http-rt: backend %s, files read %s\n", rt_backend_name(rt),
            rt_files_native(rt) ? "in the kernel" : "on the pool");
    if ((err = rt_shutdown_on_signals(rt)) < 0)
        net_die(-err, "rt_shutdown_on_signals");
    srv = RT_TASK_NEW(rt, struct http_server, http_server_step);
    srv->listener = listener = net_listen_or_die(&cli, SOMAXCONN);
    if ((err = rt_attach(rt, listener)) < 0)
        net_die(-err, "rt_attach(listener fd=%d)", listener);
    res = rt_block_on(rt, rt_task_start(&srv->task, rt_root_token(rt)));
    err = rt_run(rt);
    rt_close(rt, listener);
    rt_destroy(rt);
    close(root_fd);
    return res < 0 || err < 0 ? 1 : 0;
}
