/* SPDX-License-Identifier: MIT */
/* echo-iocp.c: an echo server on a Windows I/O completion port.
 *
 * Nothing here waits for a socket to be ready. The server hands Windows
 * whole operations (accept a client into this socket, receive into this
 * buffer, send these bytes) and a pool of worker threads sleeps in
 * GetQueuedCompletionStatusEx() until the kernel reports one finished.
 * Whichever worker wakes runs the continuation: it posts the next
 * operation and goes back to the port.
 *
 *     make -C chapters/09-iocp            (cross-compiles with x86_64-w64-mingw32-gcc)
 *     wine64 build/chapters/09-iocp/echo-iocp.exe -p 0 -w 2
 *     build/common/tools/echo-client -p PORT hello    (from another terminal)
 *
 * On Windows: build.bat (MSVC or MinGW), then echo-iocp.exe -p 0.
 * (Debian installs wine64 as /usr/lib/wine/wine64; other systems call it wine.)
 *
 * Options: the course's server contract (-b, -p, -h) and -w N, the number of
 * worker threads (default: one per CPU). Ctrl-C, Ctrl-Break or closing the
 * console shuts the server down cleanly, exit 0. Under Wine, SIGINT arrives
 * as Ctrl-C; SIGTERM ends the process at once, with no handler run.
 * FAULTS_SHORT_SEND=P in the environment cuts P% of sends in half (conn.c).
 *
 * Windows 7 SP1 or later (WSA_FLAG_NO_HANDLE_INHERIT; the IOCP calls need Vista).
 */
#include "iocp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORKER_BATCH 16 /* completions one GetQueuedCompletionStatusEx() may return */

struct worker {
    struct server *srv;
    HANDLE thread;
    int id;
    volatile LONG completions; /* packets this worker dequeued (printed at exit) */
};

/* ---- accepting: AcceptEx, posted ahead of the clients ---------------------------- */

/* Post one AcceptEx on the slot: a fresh socket that the next client
 * connects to. With a receive length of 0 it completes as soon as a client
 * connects, not when its first bytes arrive (or never, for a client that
 * sends nothing: with data wanted, such clients would hold every slot). */
static void accept_post(struct server *srv, struct accept_slot *a)
{
    DWORD bytes, err;

    for (;;) {
        a->s = WSASocketW(AF_INET, SOCK_STREAM, IPPROTO_TCP, NULL, 0,
                          WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
        if (a->s == INVALID_SOCKET) {
            win_warn(WSAGetLastError(), "WSASocket(for AcceptEx): one accept slot fewer");
            return;
        }
        memset(&a->op.ov, 0, sizeof(a->op.ov));
        InterlockedIncrement(&srv->in_flight);
        if (srv->accept_ex(srv->listener, a->s, a->addrs, 0, sizeof(a->addrs) / 2,
                           sizeof(a->addrs) / 2, &bytes, &a->op.ov))
            return; /* a client was waiting: the completion is queued anyway */
        if ((err = WSAGetLastError()) == ERROR_IO_PENDING)
            return;
        InterlockedDecrement(&srv->in_flight);
        closesocket(a->s);
        a->s = INVALID_SOCKET;
        if (err != WSAECONNRESET) { /* a client that connected and reset: try again */
            win_warn(err, "AcceptEx(listener %llu): one accept slot fewer",
                     (unsigned long long)srv->listener);
            return;
        }
    }
}

static void accept_done(struct server *srv, struct accept_slot *a, DWORD err)
{
    SOCKET s = a->s;
    struct conn *c;
    BOOL one = TRUE;

    a->s = INVALID_SOCKET;
    if (err != 0 || srv->stopping) {
        if (err != 0 && err != ERROR_OPERATION_ABORTED && err != WSA_OPERATION_ABORTED)
            win_warn(err, "AcceptEx(listener %llu) completed with an error",
                     (unsigned long long)srv->listener);
        closesocket(s);
    } else if (setsockopt(s, SOL_SOCKET, SO_UPDATE_ACCEPT_CONTEXT, (char *)&srv->listener,
                          sizeof(srv->listener)) != 0) {
        /* Without it the socket is connected but does not know its
         * listener: getpeername(), shutdown() and setsockopt() fail on it. */
        win_warn(WSAGetLastError(), "setsockopt(SO_UPDATE_ACCEPT_CONTEXT)");
        closesocket(s);
    } else if (!CreateIoCompletionPort((HANDLE)s, srv->port, KEY_IO, 0)) {
        win_warn(GetLastError(), "CreateIoCompletionPort(socket %llu)", (unsigned long long)s);
        closesocket(s);
    } else if (!(c = conn_new(srv, s))) {
        win_warn(ERROR_NOT_ENOUGH_MEMORY, "accept: a connection");
        closesocket(s);
    } else {
        /* Nagle would hold back a short echo until the client's delayed ACK */
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, (char *)&one, sizeof(one));
        conn_post_recv(c);
    }
    if (!srv->stopping)
        (void)0; /* the slot has done its job */
}

/* ---- the workers -------------------------------------------------------------------- */

/* One completion packet: find the operation from its OVERLAPPED, ask how it
 * went, and run its continuation. */
static void server_complete(struct server *srv, const OVERLAPPED_ENTRY *e)
{
    struct op *op = CONTAINING_RECORD(e->lpOverlapped, struct op, ov);
    SOCKET s = op->kind == OP_ACCEPT ? srv->listener : op->conn->s;
    DWORD bytes = e->dwNumberOfBytesTransferred, flags = 0, err = 0;

    /* GetQueuedCompletionStatusEx() returns no error code per packet: the
     * operation's status sits in its OVERLAPPED, and this call reads it
     * (no waiting: the operation is over) as a Winsock error code. */
    if (!WSAGetOverlappedResult(s, &op->ov, &bytes, FALSE, &flags))
        err = WSAGetLastError();
    InterlockedDecrement(&srv->in_flight);
    if (op->kind == OP_ACCEPT)
        accept_done(srv, CONTAINING_RECORD(op, struct accept_slot, op), err);
    else
        conn_on_complete(op->conn, op, bytes, err);
}

static DWORD WINAPI worker_main(void *arg)
{
    struct worker *w = arg;
    OVERLAPPED_ENTRY done[WORKER_BATCH];
    ULONG n, quits;

    for (;;) {
        /* Sleep until the port has packets, then take up to WORKER_BATCH of
         * them in one call. Last in, first out: the thread that waited
         * least is woken first, its stack and cache still warm. */
        if (!GetQueuedCompletionStatusEx(w->srv->port, done, WORKER_BATCH, &n, INFINITE, FALSE))
            win_die(GetLastError(), "GetQueuedCompletionStatusEx(worker %d)", w->id);
        quits = 0;
        for (ULONG i = 0; i < n; i++) {
            if (done[i].lpCompletionKey == KEY_QUIT) {
                quits++;
                continue;
            }
            server_complete(w->srv, &done[i]);
            InterlockedIncrement(&w->completions);
        }
        if (quits > 0) {
            /* One quit packet was posted per worker, but one batch may have
             * taken several: give back the ones meant for the others. */
            while (--quits > 0)
                PostQueuedCompletionStatus(w->srv->port, 0, KEY_QUIT, NULL);
            return 0;
        }
    }
}

/* ---- shutdown ----------------------------------------------------------------------- */

/* Stop in an order that never frees memory the kernel may still write to:
 * 1. stop the workers (one quit packet each), so nothing posts anew;
 * 2. cancel every operation still posted (accepts, recvs, sends);
 * 3. dequeue their completions here until none is in flight: each one
 *    drops its reference, and the last reference frees its connection. */
static int server_shutdown(struct server *srv, struct worker *workers, int nworkers)
{
    HANDLE threads[MAX_WORKERS];
    OVERLAPPED_ENTRY done[WORKER_BATCH];
    ULONG n;

    InterlockedExchange(&srv->stopping, 1);
    for (int i = 0; i < nworkers; i++) {
        if (!PostQueuedCompletionStatus(srv->port, 0, KEY_QUIT, NULL))
            win_die(GetLastError(), "PostQueuedCompletionStatus(quit)");
        threads[i] = workers[i].thread;
    }
    WaitForMultipleObjects((DWORD)nworkers, threads, TRUE, INFINITE);

    CancelIoEx((HANDLE)srv->listener, NULL);
    while (!list_empty(&srv->conns))
        conn_close(list_first_entry(&srv->conns, struct conn, link));
    while (srv->in_flight > 0) {
        if (!GetQueuedCompletionStatusEx(srv->port, done, WORKER_BATCH, &n, 10000, FALSE)) {
            win_warn(GetLastError(), "shutdown: %ld operations still in flight after 10 s",
                     (long)srv->in_flight);
            return 1;
        }
        for (ULONG i = 0; i < n; i++)
            server_complete(srv, &done[i]);
    }
    return 0;
}

static int parse_workers(int opt, const char *arg, void *ctx)
{
    long v;

    if (opt != 'w' || win_parse_int(arg, 1, MAX_WORKERS, &v) < 0) {
        fprintf(stderr, "echo-iocp: -w %s: a number of threads from 1 to %d\n", arg ? arg : "",
                MAX_WORKERS);
        return -1;
    }
    *(int *)ctx = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    static struct server srv; /* 16 accept slots: too big to want on the stack */
    struct worker workers[MAX_WORKERS];
    int nworkers = win_cpu_count(), status;
    const struct win_cli_extra extra = {"w:", "  -w N      worker threads (default: one per CPU)\n",
                                        parse_workers, &nworkers};
    const char *faults = getenv("FAULTS_SHORT_SEND");
    struct win_cli cli;
    HANDLE stop;
    long pct = 0;

    win_stdio_binary();
    win_cli_parse(&cli, argc, argv, "An echo server on an I/O completion port.", &extra);
    if (nworkers > MAX_WORKERS)
        nworkers = MAX_WORKERS;
    if (faults && win_parse_int(faults, 0, 100, &pct) < 0)
        win_die(ERROR_INVALID_PARAMETER, "FAULTS_SHORT_SEND=%s (a percentage)", faults);
    srv.short_send_pct = (int)pct;
    /* Before listening: a test may press Ctrl-C as soon as it sees the port. */
    stop = win_stop_event();
    win_sockets_start();
    InitializeCriticalSection(&srv.lock);
    list_init(&srv.conns);

    /* A port not yet tied to any handle. The last argument is its
     * concurrency: how many threads it lets run completions at once (0 =
     * one per CPU). More workers than that may wait on it; the extra ones
     * are released only while a running one blocks on something else. */
    srv.port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 0);
    if (!srv.port)
        win_die(GetLastError(), "CreateIoCompletionPort(new port)");
    srv.listener = win_listen_or_die(&cli, SOMAXCONN);
    /* Tie the listener to the port: its AcceptEx completions go there. */
    if (!CreateIoCompletionPort((HANDLE)srv.listener, srv.port, KEY_IO, 0))
        win_die(GetLastError(), "CreateIoCompletionPort(listener)");
    srv.accept_ex = (LPFN_ACCEPTEX)win_extension(srv.listener, (GUID)WSAID_ACCEPTEX, "AcceptEx");

    for (int i = 0; i < nworkers; i++) {
        workers[i] = (struct worker){.srv = &srv, .id = i + 1};
        workers[i].thread = CreateThread(NULL, 0, worker_main, &workers[i], 0, NULL);
        if (!workers[i].thread)
            win_die(GetLastError(), "CreateThread(worker %d)", i + 1);
    }
    for (int i = 0; i < ACCEPT_SLOTS; i++) {
        srv.slots[i].op.kind = OP_ACCEPT;
        accept_post(&srv, &srv.slots[i]);
    }
    fprintf(stderr, "echo-iocp: %d worker threads, %d accepts posted\n", nworkers, ACCEPT_SLOTS);

    WaitForSingleObject(stop, INFINITE);
    status = server_shutdown(&srv, workers, nworkers);

    fprintf(stderr, "echo-iocp: completions per worker:");
    for (int i = 0; i < nworkers; i++) {
        fprintf(stderr, " %ld", (long)workers[i].completions);
        CloseHandle(workers[i].thread);
    }
    fprintf(stderr, "; short sends resubmitted: %ld\n", (long)srv.short_sends);
    /* 0 still allocated, unless the drain above gave up on some operations */
    fprintf(stderr, "echo-iocp: %ld connections served, %ld still allocated\n", (long)srv.served,
            (long)srv.live);
    closesocket(srv.listener);
    CloseHandle(srv.port);
    DeleteCriticalSection(&srv.lock);
    WSACleanup();
    CloseHandle(stop);
    return status;
}
