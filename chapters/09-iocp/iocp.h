/* SPDX-License-Identifier: MIT */
/* iocp.h: what echo-iocp.c and conn.c share.
 *
 * Every overlapped operation is a `struct op` whose first member is the
 * OVERLAPPED the kernel fills in. A completion packet hands back only that
 * OVERLAPPED pointer (and the completion key given when the socket joined
 * the port), so the pointer is how a worker finds its way back from "some
 * I/O finished" to "this connection's recv finished".
 */
#ifndef COURSE_IOCP_H
#define COURSE_IOCP_H

#include "list.h"
#include "win.h"

#define CONN_BUF     (64 * 1024) /* bytes one recv may bring, and one send echo */
#define ACCEPT_SLOTS 16          /* AcceptEx calls kept posted on the listener */
#define MAX_WORKERS  64          /* WaitForMultipleObjects() waits on 64 handles at most */

/* Completion keys: every socket of the server joins the port with KEY_IO;
 * KEY_QUIT marks the packets that PostQueuedCompletionStatus() sends to
 * stop a worker (they carry no OVERLAPPED). */
#define KEY_IO   1
#define KEY_QUIT 2

enum op_kind { OP_ACCEPT, OP_RECV, OP_SEND };

/* snippet: op */
struct op {
    OVERLAPPED ov; /* first: the OVERLAPPED* a completion returns is the op* */
    enum op_kind kind;
    struct conn *conn; /* NULL for an accept */
};
/* end snippet */

struct server;

/* snippet: conn */
struct conn {
    struct op recv; /* the connection's recv, when one is posted */
    struct op send; /* its send; never both at once (see conn.c) */
    SOCKET s;
    struct server *srv;
    /* One reference while the connection is open (dropped by conn_close),
     * plus one per operation posted and not yet completed. The last
     * conn_put() closes the socket and frees the memory: never while the
     * kernel may still write into `buf` or `recv.ov`. */
    volatile LONG refs;
    volatile LONG open;    /* 1 until conn_close(); then 0 */
    DWORD len;             /* bytes in buf to echo */
    DWORD sent;            /* of which already sent */
    struct list_node link; /* in the server's list of open connections */
    char buf[CONN_BUF];
};
/* end snippet */

struct accept_slot {
    struct op op;
    SOCKET s; /* the socket AcceptEx connects to the next client */
    /* AcceptEx writes the local and remote addresses here, each with 16
     * bytes of slack, as its documentation requires. */
    char addrs[2 * (sizeof(struct sockaddr_in6) + 16)];
};

struct server {
    HANDLE port;
    SOCKET listener;
    LPFN_ACCEPTEX accept_ex;
    volatile LONG stopping;    /* 1 from the start of shutdown: post nothing new */
    volatile LONG in_flight;   /* operations posted and not yet completed */
    volatile LONG sends;       /* WSASend calls made (the fault injection counts them) */
    volatile LONG short_sends; /* sends that completed short and were resubmitted */
    volatile LONG live;        /* connections allocated and not yet freed */
    volatile LONG served;      /* connections accepted since the start */
    int short_send_pct;        /* FAULTS_SHORT_SEND: percent of sends cut short */
    CRITICAL_SECTION lock;     /* guards `conns` */
    struct list_node conns;    /* every open connection (conn.link) */
    struct accept_slot slots[ACCEPT_SLOTS];
};

/* conn.c */
struct conn *conn_new(struct server *srv, SOCKET s);
void conn_get(struct conn *c);
void conn_put(struct conn *c);
void conn_close(struct conn *c);
void conn_post_recv(struct conn *c);
void conn_post_send(struct conn *c);
void conn_on_complete(struct conn *c, struct op *op, DWORD bytes, DWORD err);

#endif
