/* SPDX-License-Identifier: MIT */
/* cio_iocp.c: the IOCP backend (Windows Vista+; built with mingw-w64 and
 * run under Wine by the tests): native completions, as in chapter 09.
 *
 * Every op carries an OVERLAPPED (cio_op.ov); AcceptEx, WSARecv, WSASend
 * and ReadFile start the operation with it, and the completion packet that
 * GetQueuedCompletionStatusEx() returns points back at it, so
 * CONTAINING_RECORD() finds the op. Each handle joins the port once
 * (cio_attach). What is left for the library:
 *   - AcceptEx needs the new socket made in advance, and the accepted socket
 *     told which listener it came from (SO_UPDATE_ACCEPT_CONTEXT);
 *   - a send that completes short is sent on from where it stopped;
 *   - Windows error codes become the API's -errno (cio__errno, one place);
 *   - IOCP has no timer to queue: timeouts live on cio.c's list, and the
 *     wait sleeps no longer than the next one;
 *   - IOCP cannot pick a buffer for a receive, so a pooled receive posts a
 *     WSARecv of zero bytes, which holds no buffer and completes when bytes
 *     are there; only then does a non-blocking recv() take them into a pool
 *     buffer (on WSAEWOULDBLOCK the zero-byte receive is posted again);
 *   - CIO_STOP: the console handler of common/win/win.c sets an event; a
 *     wait on it in the system's thread pool (RegisterWaitForSingleObject)
 *     posts the op's completion packet to the port, so the loop wakes for
 *     Ctrl-C as for any completion.
 *
 * One thread only (the loop's): the port's concurrency is 1. Chapter 09 shows
 * a pool of threads on one port; the cio API runs callbacks on the thread
 * that calls cio_run(), like every other backend.
 */
#include "cio_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IOCP_BATCH 64 /* completions taken per GetQueuedCompletionStatusEx() */

struct iocp_impl {
    HANDLE port;
    LPFN_ACCEPTEX accept_ex; /* AcceptEx is not exported: Winsock hands it out */
};

/* snippet: errno */
/* The one place where a Windows error code becomes the API's errno. */
static int cio__errno(DWORD err)
{
    switch (err) {
    case ERROR_OPERATION_ABORTED: /* CancelIoEx, or the handle was closed (= WSA_OPERATION_ABORTED)
                                   */
        return ECANCELED;
    case WSAECONNRESET:
    case ERROR_NETNAME_DELETED: /* a reset, as an overlapped socket reports it */
        return ECONNRESET;
    case WSAECONNABORTED:
    case ERROR_CONNECTION_ABORTED:
        return ECONNABORTED;
    case WSAEMFILE:
        return EMFILE;
    case WSAENOBUFS:
        return ENOBUFS;
    case ERROR_NOT_ENOUGH_MEMORY:
        return ENOMEM;
    case WSAENOTSOCK:
    case ERROR_INVALID_HANDLE:
        return EBADF;
    default:
        return EIO;
    }
}
/* end snippet */

static int iocp__init(struct cio *a, char *why, size_t len)
{
    struct iocp_impl *w = calloc(1, sizeof(*w));

    if (!w)
        return -ENOMEM;
    /* concurrency 1: the loop's thread is the only one that waits on it */
    if (!(w->port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 1))) {
        snprintf(why, len, "iocp: CreateIoCompletionPort: error %lu", GetLastError());
        free(w);
        return -EIO;
    }
    a->impl = w;
    return 0;
}

static void iocp__fini(struct cio *a)
{
    struct iocp_impl *w = a->impl;

    CloseHandle(w->port);
    free(w);
}

static int iocp__attach(struct cio *a, cio_fd fd)
{
    struct iocp_impl *w = a->impl;

    /* Completion key 0: the OVERLAPPED alone says which op finished. */
    if (!CreateIoCompletionPort((HANDLE)fd, w->port, 0, 0))
        return -cio__errno(GetLastError());
    return 0;
}

static void iocp__detach(struct cio *a, cio_fd fd)
{
    (void)a;
    (void)fd; /* closing the handle takes it off the port */
}

/* snippet: start */
/* Start the op. true: it is under way (its packet will come, even if it
 * finished at once); false: it failed to start, with *err set. */
static bool iocp__start(struct cio *a, struct cio_op *op, DWORD *err)
{
    struct iocp_impl *w = a->impl;
    WSABUF b = {(ULONG)(op->len - op->done), (char *)op->buf + op->done};
    DWORD flags = 0, bytes;
    BOOL ok;

    memset(&op->ov, 0, sizeof(op->ov));
    switch (op->kind) {
    case CIO_ACCEPT:
        if (!w->accept_ex)
            w->accept_ex = (LPFN_ACCEPTEX)win_extension(op->fd, (GUID)WSAID_ACCEPTEX, "AcceptEx");
        /* the listener is IPv4 (127.0.0.1 by default): so is the new socket */
        op->accepted = WSASocketW(AF_INET, SOCK_STREAM, IPPROTO_TCP, NULL, 0,
                                  WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
        if (op->accepted == INVALID_SOCKET) {
            *err = WSAGetLastError();
            return false;
        }
        /* receive length 0: complete on connect, not on the first bytes */
        ok = w->accept_ex(op->fd, op->accepted, op->addrs, 0, sizeof(op->addrs) / 2,
                          sizeof(op->addrs) / 2, &bytes, &op->ov);
        *err = ok ? 0 : (DWORD)WSAGetLastError();
        if (*err && *err != ERROR_IO_PENDING)
            closesocket(op->accepted);
        break;
    case CIO_RECV:
        ok = WSARecv(op->fd, &b, 1, NULL, &flags, &op->ov, NULL) == 0;
        *err = ok ? 0 : (DWORD)WSAGetLastError();
        break;
    case CIO_RECV_POOLED: /* zero bytes into no buffer: "tell me when there is something" */
        b = (WSABUF){0, NULL};
        ok = WSARecv(op->fd, &b, 1, NULL, &flags, &op->ov, NULL) == 0;
        *err = ok ? 0 : (DWORD)WSAGetLastError();
        break;
    case CIO_SEND:
        ok = WSASend(op->fd, &b, 1, NULL, 0, &op->ov, NULL) == 0;
        *err = ok ? 0 : (DWORD)WSAGetLastError();
        break;
    default: /* CIO_READ_FILE: the offset travels in the OVERLAPPED */
        op->ov.Offset = (DWORD)op->offset;
        op->ov.OffsetHigh = (DWORD)((uint64_t)op->offset >> 32);
        ok = ReadFile((HANDLE)op->fd, op->buf, (DWORD)op->len, NULL, &op->ov);
        *err = ok ? 0 : GetLastError();
        break;
    }
    return *err == 0 || *err == ERROR_IO_PENDING; /* WSA_IO_PENDING is the same code */
}
/* end snippet */

static void iocp__submit(struct cio *a, struct cio_op *op)
{
    DWORD err;

    if (op->kind == CIO_TIMEOUT) {
        cio__timer_add(a, op);
        return;
    }
    if (op->kind == CIO_READ_FILE && op->offset < 0) {
        cio__complete(a, op, -EINVAL); /* overlapped reads have no "current position" */
        return;
    }
    if (iocp__start(a, op, &err))
        return;
    /* A read that starts past the end may fail at once: that is the API's 0. */
    cio__complete(a, op, err == ERROR_HANDLE_EOF ? 0 : -cio__errno(err));
}

static void iocp__cancel(struct cio *a, struct cio_op *op)
{
    if (op->kind == CIO_TIMEOUT) {
        if (cio__timer_remove(a, op))
            cio__complete(a, op, -ECANCELED);
        return;
    }
    /* ERROR_NOT_FOUND: it finished already; its packet is on the way. */
    CancelIoEx((HANDLE)op->fd, &op->ov);
}

/* snippet: zero-byte */
/* The zero-byte receive completed: bytes (or the end of the stream) are
 * there. Take them with a plain recv() into a pool buffer. */
static void iocp__pooled_done(struct cio *a, struct cio_op *op, DWORD err)
{
    u_long nonblocking = 1;
    unsigned id;
    int n;

    if (err) {
        cio__complete(a, op, -cio__errno(err));
        return;
    }
    if (!cio__buf_take(a, op, &id)) {
        cio__park(a, op); /* no buffer for it yet: wait in line */
        return;
    }
    /* An overlapped socket is still blocking for a plain recv(): make it
     * non-blocking (its overlapped operations do not care). */
    ioctlsocket(op->fd, FIONBIO, &nonblocking);
    if ((n = recv(op->fd, cio__buf(a, id), CIO_BUF_SIZE, 0)) > 0) {
        cio__complete_pooled(a, op, id, n);
        return;
    }
    err = n == 0 ? 0 : (DWORD)WSAGetLastError();
    cio__buf_give(a, id);
    if (err == WSAEWOULDBLOCK && !(op->flags & CIO__CANCELLED)) {
        if (iocp__start(a, op, &err))
            return; /* the zero-byte receive waits again */
    }
    cio__complete(a, op, err == WSAEWOULDBLOCK ? -ECANCELED : err ? -cio__errno(err) : 0);
}
/* end snippet */

/* ---- CIO_STOP: Ctrl-C as a completion packet ---------------------------------- */

struct cio_stop {
    HANDLE event;      /* win_stop_event(): the console handler sets it */
    HANDLE wait;       /* the thread pool's wait on it, while an op waits */
    HANDLE port;       /* where that wait posts the op's packet */
    struct cio_op *op; /* the program's CIO_STOP, while it waits */
    volatile LONG posted;
};

/* On a thread of the system's pool, once the event is set. */
static VOID CALLBACK iocp__on_stop_event(PVOID ctx, BOOLEAN timed_out)
{
    struct cio_stop *st = ctx;

    (void)timed_out; /* INFINITE: never */
    InterlockedExchange(&st->posted, 1);
    PostQueuedCompletionStatus(st->port, 0, 0, &st->op->ov);
}

void cio__stop_submit(struct cio *a, struct cio_op *op)
{
    struct cio_stop *st = a->stop;

    if (!st) {
        if (!(st = calloc(1, sizeof(*st)))) {
            cio__complete(a, op, -ENOMEM);
            return;
        }
        st->event = win_stop_event(); /* exits with the reason if it cannot */
        st->port = ((struct iocp_impl *)a->impl)->port;
        a->stop = st;
    }
    if (st->op) {
        cio__complete(a, op, -EBUSY); /* one at a time */
        return;
    }
    memset(&op->ov, 0, sizeof(op->ov));
    st->op = op;
    st->posted = 0;
    if (!RegisterWaitForSingleObject(&st->wait, st->event, iocp__on_stop_event, st, INFINITE,
                                     WT_EXECUTEONLYONCE)) {
        st->op = NULL;
        st->wait = NULL;
        cio__complete(a, op, -cio__errno(GetLastError()));
    }
}

/* No more callbacks of the wait after this (INVALID_HANDLE_VALUE: wait for
 * one that is running). */
static void iocp__stop_unwait(struct cio_stop *st)
{
    if (st->wait)
        UnregisterWaitEx(st->wait, INVALID_HANDLE_VALUE);
    st->wait = NULL;
}

void cio__stop_cancel(struct cio *a, struct cio_op *op)
{
    struct cio_stop *st = a->stop;

    iocp__stop_unwait(st);
    if (st->posted)
        return; /* Ctrl-C came first: its packet is on the way */
    st->op = NULL;
    cio__complete(a, op, -ECANCELED);
}

static void iocp__stop_done(struct cio *a, struct cio_op *op)
{
    iocp__stop_unwait(a->stop);
    a->stop->op = NULL;
    cio__complete(a, op, 0);
}

void cio__stop_fini(struct cio *a)
{
    if (!a->stop)
        return;
    iocp__stop_unwait(a->stop);
    CloseHandle(a->stop->event);
    free(a->stop);
    a->stop = NULL;
}

/* snippet: complete */
/* One packet: how did the op end? */
static void iocp__complete(struct cio *a, struct cio_op *op)
{
    DWORD bytes = 0, flags = 0, err = 0;

    if (op->kind == CIO_STOP) { /* posted by iocp__on_stop_event, not by an I/O */
        iocp__stop_done(a, op);
        return;
    }

    if (op->kind == CIO_READ_FILE) {
        if (!GetOverlappedResult((HANDLE)op->fd, &op->ov, &bytes, FALSE))
            err = GetLastError();
    } else if (!WSAGetOverlappedResult(op->fd, &op->ov, &bytes, FALSE, &flags)) {
        err = WSAGetLastError();
    }
    switch (op->kind) {
    case CIO_ACCEPT:
        /* Without it the socket is connected but knows no listener:
         * getpeername(), shutdown() and setsockopt() fail on it. */
        if (!err && setsockopt(op->accepted, SOL_SOCKET, SO_UPDATE_ACCEPT_CONTEXT, (char *)&op->fd,
                               sizeof(op->fd)) != 0)
            err = WSAGetLastError();
        if (err)
            closesocket(op->accepted);
        /* A handle's value fits in an int: 64-bit Windows keeps them under
         * 2^32 so that 32-bit processes can share them. */
        cio__complete(a, op, err ? -cio__errno(err) : (int)op->accepted);
        break;
    case CIO_SEND:
        if (!err && op->done + bytes < op->len && !(op->flags & CIO__CANCELLED)) {
            op->done += bytes; /* short: send the rest before completing */
            if (iocp__start(a, op, &err))
                break;
        }
        cio__complete(a, op, err ? -cio__errno(err) : (int)(op->done + bytes));
        break;
    case CIO_READ_FILE:
        cio__complete(a, op, err == ERROR_HANDLE_EOF ? 0 : err ? -cio__errno(err) : (int)bytes);
        break;
    case CIO_RECV_POOLED:
        iocp__pooled_done(a, op, err);
        break;
    default:
        cio__complete(a, op, err ? -cio__errno(err) : (int)bytes);
        break;
    }
}
/* end snippet */

static int iocp__wait(struct cio *a, int timeout_ms)
{
    struct iocp_impl *w = a->impl;
    OVERLAPPED_ENTRY done[IOCP_BATCH];
    ULONG n;

    if (!GetQueuedCompletionStatusEx(w->port, done, IOCP_BATCH, &n,
                                     timeout_ms < 0 ? INFINITE : (DWORD)timeout_ms, FALSE))
        return GetLastError() == WAIT_TIMEOUT ? 0 : -EIO;
    for (ULONG i = 0; i < n; i++)
        iocp__complete(a, CONTAINING_RECORD(done[i].lpOverlapped, struct cio_op, ov));
    return 0;
}

const struct cio_backend cio_backend_iocp = {
    .name = "iocp",
    .caps = CIO_CAP_COMPLETION | CIO_CAP_FILE_ASYNC,
    .init = iocp__init,
    .fini = iocp__fini,
    .attach = iocp__attach,
    .detach = iocp__detach,
    .submit = iocp__submit,
    .cancel = iocp__cancel,
    .wait = iocp__wait,
};
