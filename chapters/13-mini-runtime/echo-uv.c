/* echo-uv: the echo server on libuv, as a reference for echo-rt's figures.
 *
 * libuv is the event loop under Node.js: a production loop, on epoll on
 * Linux. This is an echo server written the way libuv's own benchmark
 * server (test/echo-server.c) writes it: reading never stops; each read's
 * buffer becomes a write request, freed when the write completes. (A
 * client that never reads would make it queue writes without bound: a
 * reference for throughput, not a server to copy.)
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

struct echo_write {
    uv_write_t req; /* first: the request's address is ours */
    uv_buf_t buf;
};

static void uv_die(int err, const char *what)
{
    fprintf(stderr, "echo-uv: %s: %s\n", what, uv_strerror(err));
    exit(1);
}

static void client_free(uv_handle_t *h)
{
    free(h);
}

static void client_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    (void)suggested;
    buf->base = malloc(BUF_SIZE);
    buf->len = buf->base ? BUF_SIZE : 0; /* 0: libuv reports UV_ENOBUFS */
}

static void client_written(uv_write_t *req, int status)
{
    struct echo_write *w = (struct echo_write *)req;

    (void)status; /* an error: the read side sees it too, and closes */
    free(w->buf.base);
    free(w);
}

static void client_shut(uv_shutdown_t *req, int status)
{
    (void)status;
    uv_close((uv_handle_t *)req->handle, client_free);
    free(req);
}

static void client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct echo_write *w;
    uv_shutdown_t *shut;

    if (n <= 0)
        free(buf->base);
    if (n == 0)
        return;        /* EAGAIN, in libuv's words */
    if (n == UV_EOF) { /* half-closed: shut down once the queued writes are out */
        if (!(shut = malloc(sizeof(*shut))) || uv_shutdown(shut, s, client_shut) < 0) {
            free(shut);
            uv_close((uv_handle_t *)s, client_free);
        }
        return;
    }
    if (n < 0) {
        uv_close((uv_handle_t *)s, client_free);
        return;
    }
    if (!(w = malloc(sizeof(*w)))) {
        free(buf->base);
        uv_close((uv_handle_t *)s, client_free);
        return;
    }
    w->buf = uv_buf_init(buf->base, (unsigned)n);
    if (uv_write(&w->req, s, &w->buf, 1, client_written) < 0) {
        free(buf->base);
        free(w);
        uv_close((uv_handle_t *)s, client_free);
    }
}

static void server_on_connection(uv_stream_t *server, int status)
{
    uv_tcp_t *c;

    if (status < 0) {
        fprintf(stderr, "accept: %s\n", uv_strerror(status));
        return;
    }
    if (!(c = calloc(1, sizeof(*c)))) {
        fprintf(stderr, "echo-uv: out of memory\n");
        return;
    }
    uv_tcp_init(server->loop, c);
    if (uv_accept(server, (uv_stream_t *)c) < 0) {
        uv_close((uv_handle_t *)c, client_free);
        return;
    }
    uv_tcp_nodelay(c, 1);
    uv_read_start((uv_stream_t *)c, client_alloc, client_read);
}

static void close_any(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (uv_is_closing(h))
        return;
    /* The clients are the only handles allocated one by one. */
    uv_close(h, h->data == NULL && h->type == UV_TCP ? client_free : NULL);
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
