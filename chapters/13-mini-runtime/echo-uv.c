/* SPDX-License-Identifier: MIT */
/* echo-uv.c: the echo server on libuv, as a reference for echo-rt's figures.
 *
 * libuv is the event loop under Node.js: a production loop, on epoll on
 * Linux. This server uses it the way Node.js's streams do: each read is
 * first written back with uv_try_write(), a plain write() that completes at
 * once when the socket has room (almost always, for an echo); only what it
 * could not send is copied into a write request, and reading stops until
 * that request completes (backpressure). Every read lands in one buffer for
 * the whole loop (libuv asks for it just before each read(), and the bytes
 * are written or copied before the next), so an idle client holds no
 * buffer, the common path allocates nothing and changes no epoll
 * registration.
 *
 *     apt-get install libuv1-dev      (make deps installs it)
 *     make -C chapters/13-mini-runtime
 *     build/chapters/13-mini-runtime/echo-uv -p 0
 *
 * SIGINT/SIGTERM close every handle, the loop runs out, exit 0.
 */
#include "net.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#define BUF_SIZE (64 * 1024)

struct client {
    uv_tcp_t tcp; /* first: the handle's address is the client's */
    uv_write_t write;
    uv_shutdown_t shutdown;
    char *pending; /* the bytes uv_try_write() left, in flight in `write` */
};

static char loop_buf[BUF_SIZE]; /* where every read lands; see client_read() */

static void uv_die(int err, const char *what)
{
    fprintf(stderr, "echo-uv: %s: %s\n", what, uv_strerror(err));
    exit(1);
}

static void client_free(uv_handle_t *h)
{
    struct client *c = (struct client *)h;

    free(c->pending);
    free(c);
}

static void client_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    (void)suggested;
    *buf = uv_buf_init(loop_buf, BUF_SIZE);
}

static void client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);

static void client_written(uv_write_t *req, int status)
{
    struct client *c = req->data;

    free(c->pending);
    c->pending = NULL;
    if (status == 0)
        uv_read_start((uv_stream_t *)&c->tcp, client_alloc, client_read);
    else if (!uv_is_closing((uv_handle_t *)&c->tcp))
        /* A reset or a broken pipe: the client is gone. Reading is stopped
         * while a write is queued, so nothing else would ever close it.
         * (UV_ECANCELED: SIGTERM's walk is closing it already.) */
        uv_close((uv_handle_t *)&c->tcp, client_free);
}

static void client_shut(uv_shutdown_t *req, int status)
{
    /* UV_ECANCELED: SIGTERM's walk closed the handle while the shutdown was
     * pending, and libuv asserts against closing a handle twice. */
    (void)status;
    if (!uv_is_closing((uv_handle_t *)req->handle))
        uv_close((uv_handle_t *)req->handle, client_free);
}

static void client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct client *c = (struct client *)s;
    uv_buf_t data, rest;
    int sent;

    if (n == 0)
        return;        /* EAGAIN, in libuv's words */
    if (n == UV_EOF) { /* half-closed: shut down once the queued write is out */
        if (uv_shutdown(&c->shutdown, s, client_shut) < 0)
            uv_close((uv_handle_t *)s, client_free);
        return;
    }
    if (n < 0) {
        uv_close((uv_handle_t *)s, client_free);
        return;
    }
    data = uv_buf_init(buf->base, (unsigned)n); /* buf->len is the buffer's size */
    sent = uv_try_write(s, &data, 1);
    if (sent == UV_EAGAIN)
        sent = 0;
    if (sent < 0) {
        uv_close((uv_handle_t *)s, client_free);
        return;
    }
    if (sent == n)
        return;
    /* The socket is full: queue the rest, stop reading until it is out. */
    if (!(c->pending = malloc((size_t)(n - sent)))) {
        uv_close((uv_handle_t *)s, client_free);
        return;
    }
    memcpy(c->pending, buf->base + sent, (size_t)(n - sent));
    rest = uv_buf_init(c->pending, (unsigned)(n - sent));
    c->write.data = c;
    uv_read_stop(s);
    if (uv_write(&c->write, s, &rest, 1, client_written) < 0)
        uv_close((uv_handle_t *)s, client_free);
}

static void server_on_connection(uv_stream_t *server, int status)
{
    struct client *c;

    if (status < 0) {
        fprintf(stderr, "accept: %s\n", uv_strerror(status));
        return;
    }
    if (!(c = calloc(1, sizeof(*c)))) {
        fprintf(stderr, "echo-uv: out of memory\n");
        return;
    }
    uv_tcp_init(server->loop, &c->tcp);
    if (uv_accept(server, (uv_stream_t *)&c->tcp) < 0) {
        uv_close((uv_handle_t *)&c->tcp, client_free);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    uv_read_start((uv_stream_t *)&c->tcp, client_alloc, client_read);
}

static void close_any(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (uv_is_closing(h))
        return;
    /* The clients are the only handles allocated one by one: TCP handles
     * with no data (calloc). Test the type first: libuv never touches
     * `data`, so the signal handles' is whatever their stack held. */
    uv_close(h, h->type == UV_TCP && h->data == NULL ? client_free : NULL);
}

static void on_signal(uv_signal_t *sig, int signum)
{
    (void)signum;
    uv_walk(sig->loop, close_any, NULL);
}

int main(int argc, char **argv)
{
    struct net_cli cli;
    uv_loop_t *loop = uv_default_loop();
    uv_tcp_t server;
    uv_signal_t sigint, sigterm;
    struct sockaddr_in addr;
    int len = sizeof(addr), err;

    net_cli_parse(&cli, argc, argv, "An echo server on libuv (a reference for echo-rt).", NULL);
    if ((err = uv_ip4_addr(cli.addr, cli.port, &addr)) < 0)
        uv_die(err, cli.addr);
    uv_tcp_init(loop, &server);
    server.data = &server; /* not a client: close_any must not free it */
    if ((err = uv_tcp_bind(&server, (const struct sockaddr *)&addr, 0)) < 0)
        uv_die(err, "bind");
    if ((err = uv_listen((uv_stream_t *)&server, SOMAXCONN, server_on_connection)) < 0)
        uv_die(err, "listen");
    uv_signal_init(loop, &sigint);
    uv_signal_init(loop, &sigterm);
    uv_signal_start(&sigint, on_signal, SIGINT);
    uv_signal_start(&sigterm, on_signal, SIGTERM);
    uv_tcp_getsockname(&server, (struct sockaddr *)&addr, &len);
    printf("listening on %s:%d\n", cli.addr, ntohs(addr.sin_port));
    fflush(stdout);

    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    return 0;
}
