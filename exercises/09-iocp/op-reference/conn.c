/* SPDX-License-Identifier: MIT */
/* conn.c: one echo connection on a completion port.
 *
 * A connection alternates between two operations: a WSARecv into its
 * buffer, then WSASend of what arrived, then the next WSARecv. Only one of
 * them is ever posted at a time, so only one worker thread at a time can be
 * running a connection's completion, and a connection needs no lock. It is
 * also the backpressure: a client that never reads stops its own echo (the
 * send never completes) and so stops the server from receiving more from it.
 * (A server that must notice a reset while it is sending keeps a recv
 * posted at all times, and needs a lock or a per-connection queue instead.)
 *
 * The rule that keeps this memory-safe: a posted operation owns a reference
 * to its connection. The kernel writes into c->buf and c->recv.ov until the
 * completion is dequeued, so the connection must outlive every operation,
 * whoever closed it and whenever.
 */
#include "iocp.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct conn *conn_new(struct server *srv, SOCKET s)
{
    struct conn *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->s = s;
    c->srv = srv;
    c->refs = 1; /* the "open" reference, dropped by conn_close() */
    c->open = 1;
    c->recv.kind = OP_RECV;
    c->recv.conn = c;
    c->send.kind = OP_SEND;
    c->send.conn = c;
    InterlockedIncrement(&srv->live);
    InterlockedIncrement(&srv->served);
    EnterCriticalSection(&srv->lock);
    list_insert(&srv->conns, &c->link);
    LeaveCriticalSection(&srv->lock);
    return c;
}

void conn_get(struct conn *c)
{
    InterlockedIncrement(&c->refs);
}

/* The last reference closes the socket and frees the connection. */
void conn_put(struct conn *c)
{
    if (InterlockedDecrement(&c->refs) == 0) {
        InterlockedDecrement(&c->srv->live);
        closesocket(c->s);
        free(c);
    }
}

/* Take the connection off the server's list and drop the "open" reference.
 * Any operation still posted is cancelled: it completes soon with
 * ERROR_OPERATION_ABORTED, and its own reference keeps `c` alive until then.
 * Safe to call more than once. */
void conn_close(struct conn *c)
{
    struct server *srv = c->srv;

    if (InterlockedExchange(&c->open, 0) == 0)
        return;
    EnterCriticalSection(&srv->lock);
    list_remove(&c->link);
    LeaveCriticalSection(&srv->lock);
    CancelIoEx((HANDLE)c->s, NULL); /* ERROR_NOT_FOUND when nothing is posted: fine */
    conn_put(c);
}

/* An operation is about to be posted: it takes a reference, and the server
 * counts it until its completion is dequeued (shutdown waits for zero). */
static void conn__begin(struct conn *c, struct op *op)
{
    memset(&op->ov, 0, sizeof(op->ov));
    /* the operation takes no reference of its own */
    InterlockedIncrement(&c->srv->in_flight);
}

/* The post failed at once: no completion packet will ever come for it. */
static void conn__failed_to_start(struct conn *c, const char *call, DWORD err)
{
    InterlockedDecrement(&c->srv->in_flight);
    if (err != WSAECONNRESET && err != WSAECONNABORTED)
        win_warn(err, "%s(socket %llu)", call, (unsigned long long)c->s);
    conn_close(c);
    conn_put(c); /* the reference the operation would have held */
}

void conn_post_recv(struct conn *c)
{
    WSABUF wb = {.len = CONN_BUF, .buf = c->buf}; /* Winsock copies the WSABUF itself */
    DWORD flags = 0, err;

    if (c->srv->stopping) {
        conn_close(c);
        return;
    }
    conn__begin(c, &c->recv);
    /* 0: done already; SOCKET_ERROR + WSA_IO_PENDING: started. Either way
     * the completion packet comes through the port, and is handled there. */
    if (WSARecv(c->s, &wb, 1, NULL, &flags, &c->recv.ov, NULL) == 0)
        return;
    if ((err = WSAGetLastError()) != WSA_IO_PENDING)
        conn__failed_to_start(c, "WSARecv", err);
}

/* FAULTS_SHORT_SEND=P cuts P% of sends to half their length, so that their
 * completions report fewer bytes than the connection has to send. The
 * LD_PRELOAD faults shim of the earlier chapters cannot reach Win32 calls,
 * and neither Windows nor Wine completes a WSASend short on a healthy
 * connection, so without this the resubmission path would never run. */
static ULONG conn__fault_len(struct conn *c, ULONG len)
{
    uint32_t n = (uint32_t)InterlockedIncrement(&c->srv->sends);

    if (len > 1 && (n * 2654435761u) % 100 < (uint32_t)c->srv->short_send_pct)
        return len / 2;
    return len;
}

void conn_post_send(struct conn *c)
{
    if (c->srv->stopping) {
        conn_close(c);
        return;
    }
    WSABUF wb = {.len = c->len - c->sent, .buf = c->buf + c->sent};
    DWORD err;

    wb.len = conn__fault_len(c, wb.len);
    conn__begin(c, &c->send);
    if (WSASend(c->s, &wb, 1, NULL, 0, &c->send.ov, NULL) == 0)
        return;
    if ((err = WSAGetLastError()) != WSA_IO_PENDING)
        conn__failed_to_start(c, "WSASend", err);
}

static void conn__log_failure(struct conn *c, const struct op *op, DWORD err)
{
    /* aborted: cancelled by conn_close() or at shutdown; reset: the client's choice */
    if (err == ERROR_OPERATION_ABORTED || err == WSA_OPERATION_ABORTED || err == WSAECONNRESET ||
        err == WSAECONNABORTED)
        return;
    win_warn(err, "%s(socket %llu) completed with an error",
             op->kind == OP_RECV ? "WSARecv" : "WSASend", (unsigned long long)c->s);
}

/* A worker dequeued the completion of `op`, a recv or a send of `c`:
 * `bytes` were transferred, and `err` is 0 or why the operation failed. */
void conn_on_complete(struct conn *c, struct op *op, DWORD bytes, DWORD err)
{
    if (err != 0) {
        conn__log_failure(c, op, err);
        conn_close(c);
    } else if (op->kind == OP_RECV) {
        if (bytes == 0) {
            conn_close(c); /* EOF; every earlier byte was echoed before this recv was posted */
        } else {
            c->len = bytes;
            c->sent = 0;
            conn_post_send(c);
        }
    } else if (c->sent + bytes < c->len) {
        c->sent += bytes; /* a short send: the rest goes out in a new one */
        InterlockedIncrement(&c->srv->short_sends);
        conn_post_send(c);
    } else {
        conn_post_recv(c); /* all echoed: ready for more */
    }
    conn_put(c);
}
