/* SPDX-License-Identifier: MIT */
/* aio-test: the promises of cio.h, checked on the backend AIO_BACKEND picks.
 *
 *     make -C chapters/11-one-api
 *     AIO_BACKEND=epoll build/chapters/11-one-api/aio-test probe|timers|cancel|files|net|pool
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
 *           file's bytes; at and past the end they return 0;
 *   net     accept, recv, send, a send far larger than the socket buffer
 *           (complete only when every byte is out), and 0 at end of stream;
 *   pool    pooled receives (a pool of 4 buffers): a waiting one holds no
 *           buffer; bytes arrive in a pool buffer the caller releases; end
 *           of stream and a reset hold none; a fifth receive waits while 4
 *           buffers are held and completes after a release; a waiting one
 *           cancelled says -ECANCELED; 1000 receives recycle the 4 buffers.
 *
 * Exit status: 0 pass, 77 skip (the backend is not usable here, reason on
 * stderr), 1 fail (every failed check on stderr), 2 usage.
 *
 * The same checks run on Windows: win/Makefile builds aio-test.exe on the
 * IOCP backend, and the chapter's tests run it under Wine. The few things
 * that differ (Winsock, a temporary file, sleeping) are the small
 * functions just below, one version for each system.
 */
#include "aio/cio.h"
#include "check.h"
#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
typedef SOCKET sock; /* cio.h brought in common/win/win.h, and with it Winsock */
#define SHUT_WR SD_SEND
#else
#include "net.h"
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
typedef int sock;
#endif

/* What a callback saw: how many times it ran, and when. */
struct seen {
    int calls;
    int order; /* 1 for the first op of the test to complete, 2 for the next... */
    long long at_ms;
};

static int completed;
static long long t0;

/* ---- what differs between POSIX and Windows ---------------------------------- */

#ifdef _WIN32
static void sleep_ms(int ms)
{
    Sleep((DWORD)ms);
}

static _Noreturn void die(const char *what)
{
    char text[256];

    fprintf(stderr, "aio-test: %s: %s\n", what,
            win_strerror(WSAGetLastError(), text, sizeof(text)));
    exit(1);
}

/* A listener on 127.0.0.1, any port: *port says which. */
static sock listen_any(int *port)
{
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int len = sizeof(sin);
    sock s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);

    if (s == INVALID_SOCKET || bind(s, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
        listen(s, 4) != 0 || getsockname(s, (struct sockaddr *)&sin, &len) != 0)
        die("a listener on 127.0.0.1");
    *port = ntohs(sin.sin_port);
    return s;
}

static sock connect_to(int port)
{
    struct sockaddr_in sin = {.sin_family = AF_INET,
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                              .sin_port = htons((u_short)port)};
    sock s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);

    if (s == INVALID_SOCKET || connect(s, (struct sockaddr *)&sin, sizeof(sin)) != 0)
        die("connect(127.0.0.1)");
    return s;
}

static int sock_write(sock s, const void *p, int n)
{
    return send(s, p, n, 0);
}
static int sock_read(sock s, void *p, int n)
{
    return recv(s, p, n, 0);
}
static void sock_close(sock s)
{
    closesocket(s);
}
static void sock_nonblocking(sock s)
{
    u_long on = 1;

    ioctlsocket(s, FIONBIO, &on);
}

/* A temporary file holding data[0..n), opened for overlapped reads (the
 * only kind a completion port reports) and deleted when closed. */
static cio_fd temp_file(const void *data, DWORD n)
{
    char dir[MAX_PATH], path[MAX_PATH];
    OVERLAPPED ov = {0};
    DWORD wrote = 0;
    HANDLE h;

    if (!GetTempPathA(sizeof(dir), dir) || !GetTempFileNameA(dir, "aio", 0, path))
        die("a temporary file name");
    h = CreateFileA(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, CREATE_ALWAYS,
                    FILE_ATTRIBUTE_TEMPORARY | FILE_FLAG_DELETE_ON_CLOSE | FILE_FLAG_OVERLAPPED,
                    NULL);
    if (h == INVALID_HANDLE_VALUE)
        die("CreateFile(a temporary file)");
    /* An overlapped handle writes through an OVERLAPPED too; wait for it
     * here, before the handle is tied to the loop's port. */
    if (!(ov.hEvent = CreateEventA(NULL, TRUE, FALSE, NULL)) ||
        (!WriteFile(h, data, n, NULL, &ov) && GetLastError() != ERROR_IO_PENDING) ||
        !GetOverlappedResult(h, &ov, &wrote, TRUE) || wrote != n)
        die("WriteFile(the temporary file)");
    CloseHandle(ov.hEvent);
    return (cio_fd)h;
}

static void file_close(cio_fd fd)
{
    CloseHandle((HANDLE)fd);
}
#else
static void sleep_ms(int ms)
{
    usleep((useconds_t)ms * 1000);
}

static _Noreturn void die(const char *what)
{
    fprintf(stderr, "aio-test: %s: %s\n", what, strerror(errno));
    exit(1);
}

static sock listen_any(int *port)
{
    sock s = net_listen("127.0.0.1", 0, 4);

    if (s < 0 || (*port = net_local_port(s)) < 0)
        die("a listener on 127.0.0.1");
    return s;
}

static sock connect_to(int port)
{
    sock s = net_connect("127.0.0.1", port);

    if (s < 0)
        die("connect(127.0.0.1)");
    return s;
}

static int sock_write(sock s, const void *p, int n)
{
    return (int)write(s, p, (size_t)n);
}
static int sock_read(sock s, void *p, int n)
{
    return (int)read(s, p, (size_t)n);
}
static void sock_close(sock s)
{
    close(s);
}
static void sock_nonblocking(sock s)
{
    net_set_nonblocking(s);
}

/* A temporary file holding data[0..n), already unlinked. */
static cio_fd temp_file(const void *data, size_t n)
{
    char path[] = "/tmp/aio-test.XXXXXX";
    int fd = mkstemp(path);

    if (fd < 0 || write(fd, data, n) != (ssize_t)n)
        die("a temporary file");
    unlink(path);
    return fd;
}

static void file_close(cio_fd fd)
{
    close(fd);
}
#endif

/* A result's text: strerror(), except that Windows' C runtime has none for
 * ETIME or ECANCELED ("Unknown error"), so there the two are named here. */
static const char *res_text(int res)
{
#ifdef _WIN32
    if (res == -ETIME || res == -ECANCELED)
        return res == -ETIME ? "timer expired" : "cancelled";
#endif
    return strerror(-res);
}

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

    CHECK_MSG(err == 0, "cio_submit(kind %d): %s", (int)op->kind, res_text(err));
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
               ops[i].res, res_text(ops[i].res), seen[i].at_ms, seen[i].order);
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
           res_text(ops[4].res), seen[4].calls);
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
    sock lfd = listen_any(&port);

    *client = connect_to(port);
    *server = accept(lfd, NULL, NULL);
#ifdef _WIN32
    if (*server == INVALID_SOCKET)
#else
    if (*server < 0)
#endif
        die("accept(a loopback connection)");
    sock_close(lfd);
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
    printf("a waiting recv, cancelled: res %d (%s), %d callback\n", recv.res, res_text(recv.res),
           seen.calls);
    CHECK_MSG(recv.res == -ECANCELED, "res %d, expected -ECANCELED", recv.res);
    CHECK_MSG(seen.calls == 1, "%d callbacks, expected 1", seen.calls);

    /* Bytes sent now must not land in the cancelled op's buffer... */
    CHECK_MSG(sock_write(client, "after", 5) == 5, "write(client)");
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
    CHECK_MSG(sock_write(client, "late", 4) == 4, "write(client)");
    sleep_ms(50);
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
    sock_close(server);
    sock_close(client);
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
    sock_nonblocking(client);
    while ((seen.calls == 0 || got < n) && clock_now_ms() < end) {
        int r = sock_read(client, chunk, sizeof(chunk));
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
    sock lfd = listen_any(&port), client;
    cio_fd server;
    char buf[64];
    struct seen seen = {0};
    struct cio_op acc = {.kind = CIO_ACCEPT, .fd = (cio_fd)lfd, .cb = on_done, .user_data = &seen};
    struct cio_op op = {.cb = on_done, .user_data = &seen};

    CHECK_MSG(cio_attach(a, (cio_fd)lfd) == 0, "cio_attach(listener)");
    submit(a, &acc);
    client = connect_to(port);
    run_until_idle(a, 5000);
    printf("accept: res %s\n", acc.res >= 0 ? "a new fd" : res_text(acc.res));
    CHECK_MSG(acc.res >= 0, "accept: res %d", acc.res);
    server = (cio_fd)acc.res;
    CHECK_MSG(cio_attach(a, server) == 0, "cio_attach(the accepted socket)");

    CHECK_MSG(sock_write(client, "hello", 5) == 5, "write(client)");
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
    CHECK_MSG(op.res == 5 && sock_read(client, buf, 5) == 5 && memcmp(buf, "world", 5) == 0,
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
    sock_close((sock)server);
    sock_close(client);
    sock_close(lfd);
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
    CHECK_MSG(sock_write(client, "hello", 5) == 5, "write(client)");
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
    sock_close(server);
    sock_close(client);

    tcp_pair(a, &client, &server);
    setsockopt(client, SOL_SOCKET, SO_LINGER, (const void *)&hard, sizeof(hard));
    sock_close(client); /* an RST */
    sleep_ms(50);
    pool_recv(a, &op, server, &seen);
    run_until_idle(a, 5000);
    printf("pooled recv after a reset: res %d (%s), buf %s, %u held\n", op.res, res_text(op.res),
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
    sock_close(server);
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
        CHECK_MSG(sock_write(client[i], "abcde", 5) == 5, "write(client %d)", i);
    }
    sleep_ms(50);
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
    CHECK_MSG(sock_write(client[0], "fghij", 5) == 5, "write(client 0)");
    sleep_ms(50);
    pool_recv(a, &ops[0], server[0], &seen);
    run_for(a, 200);
    CHECK_MSG(ops[0].state != 0, "a pooled recv completed with every buffer held (res %d)",
              ops[0].res);
    CHECK_MSG(cio_cancel(a, &ops[0]) == 0, "cio_cancel(a parked recv) should be 0");
    run_until_idle(a, 5000);
    printf("a parked recv, cancelled: res %d (%s), buf %s, %u held\n", ops[0].res,
           res_text(ops[0].res), ops[0].buf ? "SET" : "NULL", cio_buf_held(a));
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
        sock_close(server[i]);
        sock_close(client[i]);
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
        CHECK_MSG(sock_write(client[i], "abcde", 5) == 5, "write(client %d)", i);
        pool_recv(a, &ops[i], server[i], &seen);
    }
    run_until_calls(a, &seen.calls, POOL, 5000);
    CHECK_MSG(cio_buf_held(a) == POOL, "%u of %d buffers held", cio_buf_held(a), POOL);
    pool_recv(a, &ops[IDLE], server[IDLE], &idle_seen); /* its client stays silent */
    run_for(a, 100);
    CHECK_MSG(sock_write(client[BUSY], "busy!", 5) == 5, "write(client %d)", BUSY);
    sleep_ms(50);
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
        sock_close(server[i]);
        sock_close(client[i]);
    }
}

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

        CHECK_MSG(sock_write(client, msg, len) == len, "write(client)");
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
    sock_close(server);
    sock_close(client);
}

static void test_pool(struct cio *a)
{
    CHECK_MSG(cio_buf_pool(a, 3) == -EINVAL, "cio_buf_pool(3): not a power of two");
    CHECK_MSG(cio_buf_pool(a, POOL) == 0, "cio_buf_pool(%d)", POOL);
    test_pool_basics(a);
    CHECK_MSG(cio_buf_pool(a, 8) == -EBUSY, "cio_buf_pool once the pool is made should be -EBUSY");
    test_pool_exhausted(a);
    test_pool_idle_parked(a);
    test_pool_recycled(a);
}

/* ---- files ------------------------------------------------------------------------ */

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
    fd = temp_file(data, SIZE);
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
    file_close(fd);
}

int main(int argc, char **argv)
{
    struct cio *a;
    char caps[128];

    if (argc != 2) {
        fprintf(stderr, "usage: aio-test probe|timers|cancel|files|net|pool\n");
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
    else if (strcmp(argv[1], "pool") == 0)
        test_pool(a);
    else {
        fprintf(stderr, "aio-test: %s: not a test (timers, cancel, files, net, pool)\n", argv[1]);
        cio_destroy(a);
        return 2;
    }
    cio_destroy(a);
    printf("%s\n", check_failures ? "FAILED" : "all checks passed");
    return check_exit();
}
