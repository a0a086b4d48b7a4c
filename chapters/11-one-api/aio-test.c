/* SPDX-License-Identifier: MIT */
/* aio-test.c: the promises of cio.h, checked on the backend CIO_BACKEND picks.
 *
 *     make -C chapters/11-one-api
 *     CIO_BACKEND=epoll build/chapters/11-one-api/aio-test probe|timers|cancel|files|net|idle|pool
 *
 *   probe   open the backend and print its capabilities (77 if refused here);
 *   timers  timeouts of 300, 100, 200 and 50 ms fire in order, each no
 *           sooner than asked and not much later; a cancelled one says
 *           -ECANCELED and never fires;
 *   cancel  a recv cancelled while it waits completes with -ECANCELED, and
 *           bytes that arrive afterwards are not written into its buffer;
 *           cancelling an op that is not in flight is -ENOENT; a recv
 *           cancelled as its data arrives completes once, one way or the other;
 *   files   reads at several offsets, all in flight at once, return the
 *           file's bytes; at and past the end they return 0; a read of a
 *           pipe waits for bytes, and returns 0 once its writer has closed
 *           (not on Windows);
 *   net     accept, recv, send, a send far larger than the socket buffer
 *           (complete only when every byte is out), and 0 at end of stream;
 *   idle    a recv waits while a send fills the socket and waits for room;
 *           once the send has completed and nothing comes, the loop sleeps
 *           (at most 3 wake-ups in 300 ms);
 *   pool    pooled receives (a pool of 4 buffers): a waiting one holds no
 *           buffer; bytes arrive in a pool buffer the caller releases; end
 *           of stream and a reset hold none; a fifth receive waits while 4
 *           buffers are held and completes after a release; a waiting one
 *           cancelled says -ECANCELED; receives waiting for a buffer are
 *           served first in, first out, before any that came later;
 *           1000 receives recycle the 4 buffers.
 *
 * Exit status: 0 pass, 77 skip (the backend is not usable here, reason on
 * stderr), 1 fail (every failed check on stderr), 2 usage.
 *
 * The same checks run on Windows: win/Makefile builds aio-test.exe on the
 * IOCP backend, and the chapter's tests run it under Wine. The few things
 * that differ (Winsock, a temporary file, sleeping) are the small os_
 * functions of aio-test-os.c, one version for each system.
 */
#include "aio-test-os.h"
#include "check.h"
#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <unistd.h> /* pipe */
#endif

/* What a callback saw: how many times it ran, and when. */
struct seen {
    int calls;
    int order; /* 1 for the first op of the test to complete, 2 for the next... */
    long long at_ms;
};

static int completed;
static long long t0;

/* ---- the loop -------------------------------------------------------------------- */

static void on_done(struct cio *a, struct cio_op *op)
{
    struct seen *s = op->user_data;

    (void)a;
    s->calls++;
    s->order = ++completed;
    s->at_ms = clock_now_ms() - t0;
}

static struct cio *open_loop(void)
{
    char why[256];
    int err;
    struct cio *a = cio_create(&err, why, sizeof(why));

    if (!a) {
        fprintf(stderr, "aio-test: %s\n", why);
        exit(err == -EINVAL ? 2 : CHECK_SKIP);
    }
    printf("backend %s\n", cio_backend_name(a));
    return a;
}

/* Run the loop until no op is in flight, or limit_ms have passed. */
static void run_until_idle(struct cio *a, int limit_ms)
{
    long long end = clock_now_ms() + limit_ms;

    while (cio_in_flight(a) > 0 && clock_now_ms() < end)
        if (cio_run(a, (int)(end - clock_now_ms())) < 0)
            break;
    CHECK_MSG(cio_in_flight(a) == 0, "%u ops still in flight after %d ms", cio_in_flight(a),
              limit_ms);
}

/* Run the loop for about ms, whatever completes. */
static void run_for(struct cio *a, int ms)
{
    long long end = clock_now_ms() + ms;

    while (clock_now_ms() < end)
        cio_run(a, (int)(end - clock_now_ms()));
}

static void submit(struct cio *a, struct cio_op *op)
{
    int err = cio_submit(a, op);

    CHECK_MSG(err == 0, "cio_submit(kind %d): %s", (int)op->kind, os_res_text(err));
}

/* ---- timers ------------------------------------------------------------------- */

static void test_timers(struct cio *a)
{
    static const unsigned ms[] = {300, 100, 200, 50};
    struct cio_op ops[5];
    struct seen seen[5] = {{0}};

    t0 = clock_now_ms();
    for (int i = 0; i < 5; i++) {
        ops[i] = (struct cio_op){.kind = CIO_TIMEOUT,
                                 .timeout_ms = i < 4 ? ms[i] : 150,
                                 .cb = on_done,
                                 .user_data = &seen[i]};
        submit(a, &ops[i]);
    }
    CHECK_MSG(cio_cancel(a, &ops[4]) == 0, "cio_cancel(timeout 150 ms) should be 0");
    run_until_idle(a, 5000);
    for (int i = 0; i < 4; i++) {
        /* the cancelled one completes first, then 50, 100, 200 and 300 ms */
        static const int want_order[] = {5, 3, 4, 2};
        printf("timeout %u ms: res %d (%s) after %lld ms, completion number %d\n", ms[i],
               ops[i].res, os_res_text(ops[i].res), seen[i].at_ms, seen[i].order);
        CHECK_MSG(ops[i].res == -ETIME, "timeout %u ms: res %d, expected -ETIME", ms[i],
                  ops[i].res);
        CHECK_MSG(seen[i].calls == 1, "timeout %u ms: %d callbacks", ms[i], seen[i].calls);
        CHECK_MSG(seen[i].order == want_order[i],
                  "timeout %u ms completed in position %d, expected %d", ms[i], seen[i].order,
                  want_order[i]);
        /* a clock tick of slack below; a loaded machine's worth above */
        CHECK_MSG(seen[i].at_ms >= ms[i] - 2 && seen[i].at_ms <= ms[i] + 1000,
                  "timeout %u ms fired after %lld ms", ms[i], seen[i].at_ms);
    }
    printf("timeout 150 ms, cancelled: res %d (%s), %d callback\n", ops[4].res,
           os_res_text(ops[4].res), seen[4].calls);
    CHECK_MSG(ops[4].res == -ECANCELED, "the cancelled timeout: res %d, expected -ECANCELED",
              ops[4].res);
    CHECK_MSG(seen[4].calls == 1 && seen[4].order == 1,
              "the cancelled timeout completed first, once");
}

/* ---- sockets -------------------------------------------------------------------- */

/* A connected TCP pair on loopback: *client (blocking, ours to drive by
 * hand) and *server (attached to the loop). */
static void tcp_pair(struct cio *a, sock *client, sock *server)
{
    int port;
    sock lfd = os_listen_any(&port);

    *client = os_connect_to(port);
    *server = accept(lfd, NULL, NULL);
#ifdef _WIN32
    if (*server == INVALID_SOCKET)
#else
    if (*server < 0)
#endif
        os_die("accept(a loopback connection)");
    os_close(lfd);
    CHECK_MSG(cio_attach(a, (cio_fd)*server) == 0, "cio_attach(the accepted socket)");
}

static void test_cancel(struct cio *a)
{
    char buf[64], got[64];
    struct cio_op recv = {.kind = CIO_RECV, .buf = buf, .len = sizeof(buf), .cb = on_done};
    struct seen seen = {0};
    sock client, server;
    int untouched = 1;

    tcp_pair(a, &client, &server);
    recv.fd = (cio_fd)server;
    recv.user_data = &seen;
    memset(buf, 0xAA, sizeof(buf));
    t0 = clock_now_ms();
    submit(a, &recv);
    run_for(a, 100); /* nothing to receive: it stays in flight */
    CHECK_MSG(seen.calls == 0, "a recv with nothing to receive completed (res %d)", recv.res);
    CHECK_MSG(cio_cancel(a, &recv) == 0, "cio_cancel(a waiting recv) should be 0");
    run_until_idle(a, 5000);
    printf("a waiting recv, cancelled: res %d (%s), %d callback\n", recv.res, os_res_text(recv.res),
           seen.calls);
    CHECK_MSG(recv.res == -ECANCELED, "res %d, expected -ECANCELED", recv.res);
    CHECK_MSG(seen.calls == 1, "%d callbacks, expected 1", seen.calls);

    /* Bytes sent now must not land in the cancelled op's buffer... */
    CHECK_MSG(os_write(client, "after", 5) == 5, "write(client)");
    run_for(a, 200);
    for (size_t i = 0; i < sizeof(buf); i++)
        untouched &= (unsigned char)buf[i] == 0xAA;
    printf("5 bytes sent after the cancel: the cancelled recv's buffer is %s\n",
           untouched ? "untouched" : "WRITTEN");
    CHECK_MSG(untouched, "the buffer of a cancelled recv was written after its completion");
    /* ...and are still there for the next recv. */
    recv.buf = got;
    seen = (struct seen){0};
    submit(a, &recv);
    run_until_idle(a, 5000);
    printf("the next recv: res %d, \"%.*s\"\n", recv.res, recv.res > 0 ? recv.res : 0, got);
    CHECK_MSG(recv.res == 5 && memcmp(got, "after", 5) == 0, "the next recv: res %d", recv.res);

    printf("cio_cancel of an op not in flight: %d (%s)\n", cio_cancel(a, &recv), strerror(ENOENT));
    CHECK_MSG(cio_cancel(a, &recv) == -ENOENT, "cio_cancel(idle op) should be -ENOENT");

    /* The race: the data is there when the op starts, the cancel follows. */
    CHECK_MSG(os_write(client, "late", 4) == 4, "write(client)");
    os_sleep_ms(50);
    seen = (struct seen){0};
    submit(a, &recv);
    cio_cancel(a, &recv);
    run_until_idle(a, 5000);
    printf("a recv cancelled as its data arrived: %d callback, res %d (%s)\n", seen.calls, recv.res,
           recv.res == -ECANCELED ? "cancelled" : "completed with the data");
    CHECK_MSG(seen.calls == 1, "%d callbacks, expected exactly 1", seen.calls);
    CHECK_MSG(recv.res == -ECANCELED || (recv.res == 4 && memcmp(got, "late", 4) == 0),
              "res %d: neither -ECANCELED nor the 4 bytes", recv.res);
    cio_detach(a, (cio_fd)server);
    os_close(server);
    os_close(client);
}

/* snippet: big-send */
/* A send of 8 MiB to a peer that reads 64 KiB at a time between turns of
 * the loop: the socket buffers fill, the kernel takes the bytes in many
 * pieces, and the op must complete once, with res 8 MiB, after the last. */
static void test_big_send(struct cio *a, sock client, cio_fd server)
{
    size_t n = 8u << 20, got = 0, bad = 0;
    unsigned char *out = malloc(n), chunk[65536];
    struct cio_op send = {.kind = CIO_SEND, .fd = server, .buf = out, .len = n, .cb = on_done};
    struct seen seen = {0};
    long long end = clock_now_ms() + 30000;

    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)(i * 131 + 7);
    send.user_data = &seen;
    submit(a, &send);
    os_nonblocking(client);
    while ((seen.calls == 0 || got < n) && clock_now_ms() < end) {
        int r = os_read(client, chunk, sizeof(chunk));
        for (int i = 0; i < r; i++)
            bad += chunk[i] != (unsigned char)((got + (size_t)i) * 131 + 7);
        got += r > 0 ? (size_t)r : 0;
        cio_run(a, r > 0 ? 0 : 10);
    }
    printf("a send of %zu bytes: res %d, %d callback, %zu bytes received, %zu wrong\n", n, send.res,
           seen.calls, got, bad);
    CHECK_MSG(send.res == (int)n, "the send completed with %d, expected %zu", send.res, n);
    CHECK_MSG(seen.calls == 1 && got == n && bad == 0, "the peer got %zu of %zu bytes", got, n);
    free(out);
}
/* end snippet */

static void test_net(struct cio *a)
{
    int port;
    sock lfd = os_listen_any(&port), client;
    cio_fd server;
    char buf[64];
    struct seen seen = {0};
    struct cio_op acc = {.kind = CIO_ACCEPT, .fd = (cio_fd)lfd, .cb = on_done, .user_data = &seen};
    struct cio_op op = {.cb = on_done, .user_data = &seen};

    CHECK_MSG(cio_attach(a, (cio_fd)lfd) == 0, "cio_attach(listener)");
    submit(a, &acc);
    client = os_connect_to(port);
    run_until_idle(a, 5000);
    printf("accept: res %s\n", acc.res >= 0 ? "a new fd" : os_res_text(acc.res));
    CHECK_MSG(acc.res >= 0, "accept: res %d", acc.res);
    server = (cio_fd)acc.res;
    CHECK_MSG(cio_attach(a, server) == 0, "cio_attach(the accepted socket)");

    CHECK_MSG(os_write(client, "hello", 5) == 5, "write(client)");
    op = (struct cio_op){.kind = CIO_RECV,
                         .fd = server,
                         .buf = buf,
                         .len = sizeof(buf),
                         .cb = on_done,
                         .user_data = &seen};
    submit(a, &op);
    run_until_idle(a, 5000);
    printf("recv: res %d, \"%.*s\"\n", op.res, op.res > 0 ? op.res : 0, buf);
    CHECK_MSG(op.res == 5 && memcmp(buf, "hello", 5) == 0, "recv: res %d", op.res);

    op = (struct cio_op){.kind = CIO_SEND,
                         .fd = server,
                         .buf = "world",
                         .len = 5,
                         .cb = on_done,
                         .user_data = &seen};
    submit(a, &op);
    run_until_idle(a, 5000);
    CHECK_MSG(op.res == 5 && os_read(client, buf, 5) == 5 && memcmp(buf, "world", 5) == 0,
              "send: res %d", op.res);
    printf("send: res %d, the peer read \"%.5s\"\n", op.res, buf);

    test_big_send(a, client, server);

    shutdown(client, SHUT_WR);
    op = (struct cio_op){.kind = CIO_RECV,
                         .fd = server,
                         .buf = buf,
                         .len = sizeof(buf),
                         .cb = on_done,
                         .user_data = &seen};
    submit(a, &op);
    run_until_idle(a, 5000);
    printf("recv after the peer's shutdown: res %d\n", op.res);
    CHECK_MSG(op.res == 0, "recv at end of stream: res %d, expected 0", op.res);
    cio_detach(a, server);
    cio_detach(a, (cio_fd)lfd);
    os_close((sock)server);
    os_close(client);
    os_close(lfd);
}

/* ---- idle after a send that waited ----------------------------------------------- */

/* A recv waits on a connection (nothing comes) while a send fills its socket
 * and waits for room. Once the peer has read it all and the send has
 * completed, only the recv is left, and nothing comes for it: the loop must
 * sleep. A readiness backend that kept asking for writability (its interest
 * widened for the send and never narrowed) would be told "writable" at
 * once, again and again: each cio_run() below would return at once with no
 * callback. A completion backend has nothing to narrow. */
static void test_idle(struct cio *a)
{
    sock client, server;
    size_t n = 8u << 20, got = 0;
    unsigned char *out = calloc(1, n), chunk[65536], in[16];
    struct seen rs = {0}, ss = {0};
    struct cio_op recv, send;
    long long end;
    int runs = 0;

    CHECK_MSG(out != NULL, "calloc(%zu)", n);
    tcp_pair(a, &client, &server);
    recv = (struct cio_op){.kind = CIO_RECV,
                           .fd = (cio_fd)server,
                           .buf = in,
                           .len = sizeof(in),
                           .cb = on_done,
                           .user_data = &rs};
    send = (struct cio_op){.kind = CIO_SEND,
                           .fd = (cio_fd)server,
                           .buf = out,
                           .len = n,
                           .cb = on_done,
                           .user_data = &ss};
    submit(a, &recv);
    submit(a, &send);
    os_nonblocking(client);
    end = clock_now_ms() + 30000;
    while ((ss.calls == 0 || got < n) && clock_now_ms() < end) {
        int r = os_read(client, chunk, sizeof(chunk));
        got += r > 0 ? (size_t)r : 0;
        cio_run(a, r > 0 ? 0 : 10);
    }
    CHECK_MSG(ss.calls == 1 && send.res == (int)n && got == n,
              "the send beside a waiting recv: res %d, %zu of %zu bytes received", send.res, got,
              n);
    run_for(a, 50); /* what the last reads left to report */
    end = clock_now_ms() + 300;
    while (clock_now_ms() < end) {
        cio_run(a, (int)(end - clock_now_ms()));
        runs++;
    }
    printf("idle with a recv waiting, after a send that waited for room: %d wake-up%s in 300 ms\n",
           runs, runs == 1 ? "" : "s");
    CHECK_MSG(rs.calls == 0, "the recv completed with %d, and nothing was sent", recv.res);
    CHECK_MSG(runs <= 3,
              "%d wake-ups in 300 ms with nothing to do: writability still asked for after the "
              "send completed?",
              runs);
    CHECK_MSG(cio_cancel(a, &recv) == 0, "cio_cancel(the waiting recv)");
    run_until_idle(a, 5000);
    CHECK_MSG(rs.calls == 1 && recv.res == -ECANCELED, "the cancelled recv: res %d", recv.res);
    cio_detach(a, (cio_fd)server);
    os_close(server);
    os_close(client);
    free(out);
}

/* ---- pooled receives ------------------------------------------------------------- */

enum { POOL = 4, PAIRS = POOL + 1 };

/* Run the loop until *calls reaches n, or limit_ms have passed. */
static void run_until_calls(struct cio *a, const int *calls, int n, int limit_ms)
{
    long long end = clock_now_ms() + limit_ms;

    while (*calls < n && clock_now_ms() < end)
        cio_run(a, (int)(end - clock_now_ms()));
}

static void pool_recv(struct cio *a, struct cio_op *op, sock fd, struct seen *seen)
{
    *op = (struct cio_op){
        .kind = CIO_RECV_POOLED, .fd = (cio_fd)fd, .cb = on_done, .user_data = seen};
    submit(a, op);
}

/* The first checks: bytes, a silent peer, end of stream, a reset. */
static void test_pool_basics(struct cio *a)
{
    struct cio_op op;
    struct seen seen = {0};
    struct linger hard = {.l_onoff = 1, .l_linger = 0};
    sock client, server;

    tcp_pair(a, &client, &server);
    pool_recv(a, &op, server, &seen);
    run_for(a, 100); /* a silent client: the recv waits, and holds nothing */
    printf("a pooled recv waiting on a silent client: %d callbacks, %u buffers held\n", seen.calls,
           cio_buf_held(a));
    CHECK_MSG(seen.calls == 0 && cio_buf_held(a) == 0, "a waiting pooled recv holds a buffer");
    CHECK_MSG(os_write(client, "hello", 5) == 5, "write(client)");
    run_until_idle(a, 5000);
    printf("pooled recv: res %d, \"%.*s\" in a pool buffer, %u held\n", op.res,
           op.res > 0 ? op.res : 0, op.buf ? (char *)op.buf : "", cio_buf_held(a));
    CHECK_MSG(op.res == 5 && op.buf && memcmp(op.buf, "hello", 5) == 0 && cio_buf_held(a) == 1,
              "pooled recv: res %d, buf %p", op.res, op.buf);
    if (op.res > 0)
        cio_buf_release(a, op.buf);
    CHECK_MSG(cio_buf_held(a) == 0, "%u buffers held after the release", cio_buf_held(a));

    shutdown(client, SHUT_WR);
    pool_recv(a, &op, server, &seen);
    run_until_idle(a, 5000);
    printf("pooled recv at end of stream: res %d, buf %s, %u held\n", op.res,
           op.buf ? "SET" : "NULL", cio_buf_held(a));
    CHECK_MSG(op.res == 0 && !op.buf && cio_buf_held(a) == 0, "end of stream: res %d", op.res);
    cio_detach(a, (cio_fd)server);
    os_close(server);
    os_close(client);

    tcp_pair(a, &client, &server);
    setsockopt(client, SOL_SOCKET, SO_LINGER, (const void *)&hard, sizeof(hard));
    os_close(client); /* an RST */
    os_sleep_ms(50);
    pool_recv(a, &op, server, &seen);
    run_until_idle(a, 5000);
    printf("pooled recv after a reset: res %d (%s), buf %s, %u held\n", op.res, os_res_text(op.res),
           op.buf ? "SET" : "NULL", cio_buf_held(a));
#ifdef _WIN32
    /* Windows says WSAECONNRESET; Wine 8 says end of stream (its recv()
     * returns 0 after a reset). Either way no buffer may be held. */
    CHECK_MSG((op.res == -ECONNRESET || op.res == 0) && !op.buf && cio_buf_held(a) == 0,
              "reset: res %d", op.res);
#else
    CHECK_MSG(op.res == -ECONNRESET && !op.buf && cio_buf_held(a) == 0, "reset: res %d", op.res);
#endif
    cio_detach(a, (cio_fd)server);
    os_close(server);
}

/* Every buffer held: the next pooled recv waits (parked) until a release. */
static void test_pool_exhausted(struct cio *a)
{
    sock client[PAIRS], server[PAIRS];
    struct cio_op ops[PAIRS];
    struct seen seen = {0};
    int done = 0;

    for (int i = 0; i < PAIRS; i++) {
        tcp_pair(a, &client[i], &server[i]);
        CHECK_MSG(os_write(client[i], "abcde", 5) == 5, "write(client %d)", i);
    }
    os_sleep_ms(50);
    for (int i = 0; i < PAIRS; i++)
        pool_recv(a, &ops[i], server[i], &seen);
    run_until_calls(a, &seen.calls, POOL, 5000);
    run_for(a, 200); /* time enough for the fifth to complete, if it wrongly could */
    for (int i = 0; i < PAIRS; i++)
        done += ops[i].res == 5; /* a waiting op still has res 0 */
    printf("%d pooled recvs with bytes waiting, %d buffers: %d completed, %u held, %u waiting\n",
           PAIRS, POOL, done, cio_buf_held(a), cio_in_flight(a));
    CHECK_MSG(done == POOL && cio_buf_held(a) == POOL && cio_in_flight(a) == 1,
              "expected %d completed and 1 waiting", POOL);

    if (ops[0].buf)
        cio_buf_release(a, ops[0].buf); /* the waiting one goes on with it */
    run_until_idle(a, 5000);
    printf("after one release: %d callbacks, the last res %d \"%.*s\", %u held\n", seen.calls,
           ops[POOL].res, ops[POOL].res > 0 ? ops[POOL].res : 0,
           ops[POOL].buf ? (char *)ops[POOL].buf : "", cio_buf_held(a));
    CHECK_MSG(seen.calls == PAIRS && ops[POOL].res == 5 && memcmp(ops[POOL].buf, "abcde", 5) == 0,
              "the parked recv: res %d", ops[POOL].res);

    /* Again every buffer held: a parked recv, cancelled, holds none. */
    CHECK_MSG(os_write(client[0], "fghij", 5) == 5, "write(client 0)");
    os_sleep_ms(50);
    pool_recv(a, &ops[0], server[0], &seen);
    run_for(a, 200);
    CHECK_MSG(ops[0].state != 0, "a pooled recv completed with every buffer held (res %d)",
              ops[0].res);
    CHECK_MSG(cio_cancel(a, &ops[0]) == 0, "cio_cancel(a parked recv) should be 0");
    run_until_idle(a, 5000);
    printf("a parked recv, cancelled: res %d (%s), buf %s, %u held\n", ops[0].res,
           os_res_text(ops[0].res), ops[0].buf ? "SET" : "NULL", cio_buf_held(a));
    CHECK_MSG(ops[0].res == -ECANCELED && !ops[0].buf && cio_buf_held(a) == POOL,
              "the cancelled parked recv: res %d", ops[0].res);
    for (int i = 1; i < PAIRS; i++)
        if (ops[i].buf) /* a check above failed if one is missing */
            cio_buf_release(a, ops[i].buf);
    /* its bytes are still in the socket, for the next recv */
    pool_recv(a, &ops[0], server[0], &seen);
    run_until_idle(a, 5000);
    printf("the next pooled recv: res %d \"%.*s\"\n", ops[0].res, ops[0].res > 0 ? ops[0].res : 0,
           ops[0].buf ? (char *)ops[0].buf : "");
    CHECK_MSG(ops[0].res == 5 && memcmp(ops[0].buf, "fghij", 5) == 0, "res %d", ops[0].res);
    if (ops[0].res > 0)
        cio_buf_release(a, ops[0].buf);
    for (int i = 0; i < PAIRS; i++) {
        cio_detach(a, (cio_fd)server[i]);
        os_close(server[i]);
        os_close(client[i]);
    }
}

/* A pooled recv that found every buffer held while its client was silent
 * must not keep the next released buffer from a recv whose bytes are
 * waiting. On io_uring a recv that picks its buffer when it starts fails
 * with -ENOBUFS on an empty ring even on a silent socket; resumed after a
 * release, it then waits for bytes that may never come, and if it counted
 * as holding a promise of that buffer, the recv with bytes behind it would
 * never be resumed: a server with idle clients stalls. */
static void test_pool_idle_parked(struct cio *a)
{
    sock client[PAIRS + 1], server[PAIRS + 1];
    struct cio_op ops[PAIRS + 1];
    struct seen seen = {0}, idle_seen = {0};
    enum { IDLE = POOL, BUSY = POOL + 1 };

    for (int i = 0; i < PAIRS + 1; i++)
        tcp_pair(a, &client[i], &server[i]);
    for (int i = 0; i < POOL; i++) {
        CHECK_MSG(os_write(client[i], "abcde", 5) == 5, "write(client %d)", i);
        pool_recv(a, &ops[i], server[i], &seen);
    }
    run_until_calls(a, &seen.calls, POOL, 5000);
    CHECK_MSG(cio_buf_held(a) == POOL, "%u of %d buffers held", cio_buf_held(a), POOL);
    pool_recv(a, &ops[IDLE], server[IDLE], &idle_seen); /* its client stays silent */
    run_for(a, 100);
    CHECK_MSG(os_write(client[BUSY], "busy!", 5) == 5, "write(client %d)", BUSY);
    os_sleep_ms(50);
    pool_recv(a, &ops[BUSY], server[BUSY], &seen); /* bytes waiting, no buffer */
    run_for(a, 100);
    CHECK_MSG(seen.calls == POOL, "a pooled recv completed with every buffer held");

    /* One buffer back: it is for the recv with bytes. (A check above failed
     * if there is none to give.) */
    if (ops[0].buf)
        cio_buf_release(a, ops[0].buf);
    run_until_calls(a, &seen.calls, POOL + 1, 2000);
    printf("every buffer held, a recv on a silent client and one with bytes waiting; after a "
           "release: the one with bytes %s, the silent one %s\n",
           ops[BUSY].res == 5 ? "has them" : "still waits",
           idle_seen.calls ? "completed" : "waits");
    CHECK_MSG(ops[BUSY].res == 5 && ops[BUSY].buf && memcmp(ops[BUSY].buf, "busy!", 5) == 0,
              "the recv with bytes waiting did not get the released buffer (res %d)",
              ops[BUSY].res);
    CHECK_MSG(idle_seen.calls == 0, "the recv on a silent client completed (res %d)",
              ops[IDLE].res);

    CHECK_MSG(cio_cancel(a, &ops[IDLE]) == 0, "cio_cancel(the silent client's recv) should be 0");
    if (ops[BUSY].res != 5)
        cio_cancel(a, &ops[BUSY]); /* still parked (a check above failed): end it */
    run_until_idle(a, 5000);
    CHECK_MSG(ops[IDLE].res == -ECANCELED && !ops[IDLE].buf, "the cancelled recv: res %d",
              ops[IDLE].res);
    for (int i = 1; i < POOL; i++)
        if (ops[i].buf)
            cio_buf_release(a, ops[i].buf);
    if (ops[BUSY].res > 0)
        cio_buf_release(a, ops[BUSY].buf);
    CHECK_MSG(cio_buf_held(a) == 0, "%u buffers held at the end", cio_buf_held(a));
    for (int i = 0; i < PAIRS + 1; i++) {
        cio_detach(a, (cio_fd)server[i]);
        os_close(server[i]);
        os_close(client[i]);
    }
}

/* snippet: fifo-test */
/* Receives that wait for a buffer are served in the order their bytes came,
 * and a receive whose bytes come later waits behind them: one that was
 * already waiting for bytes when the buffer came back (on io_uring the
 * kernel could hand it a buffer from the ring itself), and one submitted
 * right after the release, before the loop runs (a readiness backend could
 * take the buffer at once). One buffer goes round: each receive served
 * gives it back, and it must go to the next in line. */
static void test_pool_fifo(struct cio *a)
{
    enum { WAITING = 6, LATE_SILENT = POOL + WAITING, LATE_NEW, N };
    sock client[N], server[N];
    struct cio_op ops[N];
    struct seen seen[N] = {{0}};
    int base, in_order = 1, late_last = 1;

    for (int i = 0; i < N; i++)
        tcp_pair(a, &client[i], &server[i]);
    for (int i = 0; i < POOL; i++) { /* every buffer held */
        CHECK_MSG(os_write(client[i], "held!", 5) == 5, "write(client %d)", i);
        pool_recv(a, &ops[i], server[i], &seen[i]);
    }
    run_until_calls(a, &completed, completed + POOL, 5000);
    CHECK_MSG(cio_buf_held(a) == POOL, "%u of %d buffers held", cio_buf_held(a), POOL);
    pool_recv(a, &ops[LATE_SILENT], server[LATE_SILENT], &seen[LATE_SILENT]);
    for (int i = POOL; i < POOL + WAITING; i++) { /* bytes come, one receive after another */
        CHECK_MSG(os_write(client[i], "wait!", 5) == 5, "write(client %d)", i);
        os_sleep_ms(10);
        pool_recv(a, &ops[i], server[i], &seen[i]);
        run_for(a, 30); /* it finds no buffer and waits: in this order */
    }
    base = completed;
    CHECK_MSG(cio_in_flight(a) == WAITING + 1, "%u receives in flight, expected %d waiting",
              cio_in_flight(a), WAITING + 1);

    /* One buffer back; at once, bytes for the receive that waited for them,
     * and a new receive whose bytes are there. */
    if (ops[0].buf)
        cio_buf_release(a, ops[0].buf);
    CHECK_MSG(os_write(client[LATE_SILENT], "late1", 5) == 5, "write(client %d)", LATE_SILENT);
    CHECK_MSG(os_write(client[LATE_NEW], "late2", 5) == 5, "write(client %d)", LATE_NEW);
    os_sleep_ms(10);
    pool_recv(a, &ops[LATE_NEW], server[LATE_NEW], &seen[LATE_NEW]);
    for (int k = 1; k <= WAITING + 2; k++) {
        run_until_calls(a, &completed, base + k, 3000);
        for (int i = POOL; i < N; i++)
            if (seen[i].order == base + k && ops[i].res > 0)
                cio_buf_release(a, ops[i].buf); /* on to the next in line */
    }
    printf("%d receives waiting for the one buffer, then two late ones: served", WAITING);
    for (int k = 1; k <= WAITING + 2; k++)
        for (int i = POOL; i < N; i++)
            if (seen[i].order == base + k && i >= LATE_SILENT)
                printf(" %s", i == LATE_SILENT ? "late-silent" : "late-new");
            else if (seen[i].order == base + k)
                printf(" %d", i - POOL + 1);
    for (int i = POOL; i < POOL + WAITING; i++) {
        in_order &= seen[i].order == base + 1 + (i - POOL);
        CHECK_MSG(ops[i].res == 5 && seen[i].calls == 1, "waiting receive %d: res %d", i - POOL + 1,
                  ops[i].res);
    }
    for (int i = LATE_SILENT; i < N; i++)
        late_last &= seen[i].order > base + WAITING;
    printf("\n");
    CHECK_MSG(in_order, "the waiting receives were not served in the order their bytes came");
    CHECK_MSG(late_last, "a late receive took the buffer before one that waited longer");
    for (int i = POOL; i < N; i++)
        if (!seen[i].calls) /* never served: a check above failed */
            cio_cancel(a, &ops[i]);
    for (int i = 1; i < POOL; i++)
        if (ops[i].buf)
            cio_buf_release(a, ops[i].buf);
    run_until_idle(a, 3000);
    CHECK_MSG(cio_buf_held(a) == 0, "%u buffers held at the end", cio_buf_held(a));
    for (int i = 0; i < N; i++) {
        cio_detach(a, (cio_fd)server[i]);
        os_close(server[i]);
        os_close(client[i]);
    }
}
/* end snippet */

/* 1000 messages through 4 buffers: each buffer comes back and is used again. */
static void test_pool_recycled(struct cio *a)
{
    enum { N = 1000 };
    struct cio_op op;
    struct seen seen = {0};
    sock client, server;
    int good = 0;
    void *seen_bufs[N];
    int distinct = 0;

    tcp_pair(a, &client, &server);
    for (int i = 0; i < N; i++) {
        char msg[32];
        int len = snprintf(msg, sizeof(msg), "message %d", i);

        CHECK_MSG(os_write(client, msg, len) == len, "write(client)");
        pool_recv(a, &op, server, &seen);
        run_until_idle(a, 5000);
        good += op.res == len && memcmp(op.buf, msg, (size_t)len) == 0;
        seen_bufs[i] = op.buf;
        for (int j = 0; j < i && op.buf; j++)
            if (seen_bufs[j] == op.buf) {
                distinct--;
                break;
            }
        distinct++;
        if (op.res > 0)
            cio_buf_release(a, op.buf);
    }
    printf("%d pooled recvs through a pool of %d: %d with the right bytes, %d distinct buffers, "
           "%u held\n",
           N, POOL, good, distinct, cio_buf_held(a));
    CHECK_MSG(good == N && distinct <= POOL && cio_buf_held(a) == 0, "recycling");
    cio_detach(a, (cio_fd)server);
    os_close(server);
    os_close(client);
}

static void test_pool(struct cio *a)
{
    CHECK_MSG(cio_buf_pool(a, 3) == -EINVAL, "cio_buf_pool(3): not a power of two");
    CHECK_MSG(cio_buf_pool(a, POOL) == 0, "cio_buf_pool(%d)", POOL);
    test_pool_basics(a);
    CHECK_MSG(cio_buf_pool(a, 8) == -EBUSY, "cio_buf_pool once the pool is made should be -EBUSY");
    test_pool_exhausted(a);
    test_pool_idle_parked(a);
    test_pool_fifo(a);
    test_pool_recycled(a);
}

/* ---- files ------------------------------------------------------------------------ */

#ifndef _WIN32
/* A pipe, read at the file position (offset -1): the read waits for bytes,
 * and once the writer has closed it completes with 0. An empty pipe whose
 * writer is gone reports a hang-up alone (POLLHUP, EPOLLHUP, EV_EOF: no
 * "readable"), and that must wake the read too, or it waits for ever. */
static void test_pipe_eof(struct cio *a)
{
    struct seen seen = {0};
    struct cio_op op;
    char buf[16];
    int p[2];

    CHECK_MSG(pipe(p) == 0, "pipe(): %s", strerror(errno));
    CHECK_MSG(cio_attach(a, p[0]) == 0, "cio_attach(a pipe)");
    op = (struct cio_op){.kind = CIO_READ_FILE,
                         .fd = p[0],
                         .buf = buf,
                         .len = sizeof(buf),
                         .offset = -1,
                         .cb = on_done,
                         .user_data = &seen};
    submit(a, &op);
    run_for(a, 50);
    CHECK_MSG(seen.calls == 0, "a read of an empty pipe completed (res %d) instead of waiting",
              op.res);
    CHECK(write(p[1], "abc", 3) == 3);
    run_until_idle(a, 5000);
    printf("read of a pipe: res %d\n", op.res);
    CHECK_MSG(seen.calls == 1 && op.res == 3 && memcmp(buf, "abc", 3) == 0,
              "read of a pipe holding 3 bytes: res %d, %d calls", op.res, seen.calls);
    seen = (struct seen){0};
    submit(a, &op);
    close(p[1]);
    run_until_idle(a, 5000);
    printf("read of a pipe whose writer closed: res %d\n", op.res);
    CHECK_MSG(seen.calls == 1 && op.res == 0,
              "read of a pipe whose writer closed: res %d, %d calls", op.res, seen.calls);
    cio_detach(a, p[0]);
    close(p[0]);
}
#endif

static void test_files(struct cio *a)
{
    static const int64_t offsets[] = {0, 4096, 65536, 99000, 100000, 200000};
    enum { N = sizeof(offsets) / sizeof(offsets[0]), SIZE = 100000 };
    char bufs[N][4096];
    static unsigned char data[SIZE];
    struct cio_op ops[N];
    struct seen seen[N] = {{0}};
    cio_fd fd;

    for (int i = 0; i < SIZE; i++)
        data[i] = (unsigned char)(i * 7 + 3);
    fd = os_temp_file(data, SIZE);
    CHECK_MSG(cio_attach(a, fd) == 0, "cio_attach(a regular file)");
    for (int i = 0; i < N; i++) {
        ops[i] = (struct cio_op){.kind = CIO_READ_FILE,
                                 .fd = fd,
                                 .buf = bufs[i],
                                 .len = 4096,
                                 .offset = offsets[i],
                                 .cb = on_done,
                                 .user_data = &seen[i]};
        submit(a, &ops[i]); /* all in flight at once */
    }
    run_until_idle(a, 10000);
    for (int i = 0; i < N; i++) {
        int64_t left = SIZE - offsets[i];
        int want = left <= 0 ? 0 : left < 4096 ? (int)left : 4096;
        int same = ops[i].res == want &&
                   (want == 0 || memcmp(bufs[i], data + offsets[i], (size_t)want) == 0);
        printf("read 4096 bytes at offset %lld of %d: res %d, %s\n", (long long)offsets[i], SIZE,
               ops[i].res, same ? "the file's bytes" : "WRONG");
        CHECK_MSG(same && seen[i].calls == 1, "read at %lld: res %d, expected %d",
                  (long long)offsets[i], ops[i].res, want);
    }
    cio_detach(a, fd);
    os_file_close(fd);
#ifndef _WIN32
    test_pipe_eof(a);
#endif
}

int main(int argc, char **argv)
{
    struct cio *a;
    char caps[128];

    if (argc != 2) {
        fprintf(stderr, "usage: aio-test probe|timers|cancel|files|net|idle|pool\n");
        return 2;
    }
#ifdef _WIN32
    win_stdio_binary(); /* "\n", not "\r\n", for the tests that read this */
    win_sockets_start();
#endif
    a = open_loop();
    printf("caps %s\n", cio_caps_text(cio_caps(a), caps, sizeof(caps)));
    if (strcmp(argv[1], "probe") == 0)
        ; /* the backend opened: that is all */
    else if (strcmp(argv[1], "timers") == 0)
        test_timers(a);
    else if (strcmp(argv[1], "cancel") == 0)
        test_cancel(a);
    else if (strcmp(argv[1], "files") == 0)
        test_files(a);
    else if (strcmp(argv[1], "net") == 0)
        test_net(a);
    else if (strcmp(argv[1], "idle") == 0)
        test_idle(a);
    else if (strcmp(argv[1], "pool") == 0)
        test_pool(a);
    else {
        fprintf(stderr, "aio-test: %s: not a test (timers, cancel, files, net, idle, pool)\n",
                argv[1]);
        cio_destroy(a);
        return 2;
    }
    cio_destroy(a);
    printf("%s\n", check_failures ? "FAILED" : "all checks passed");
    return check_exit();
}
