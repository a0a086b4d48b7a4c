/* SPDX-License-Identifier: MIT */
/* cio.h: one completion-style API over io_uring, epoll, kqueue and IOCP.
 *
 * cio ("completion I/O") is the course's library in chapters/11-one-api/cio/:
 * the folder, this header, every function (cio_*) and the variables that
 * steer it (CIO_BACKEND, CIO_TRACE, CIO_BUFS) carry its one name. It is not
 * called aio, though asynchronous I/O is what it does: POSIX AIO has that
 * name (<aio.h>: aio_read, aio_cancel, struct aiocb, in glibc itself since
 * 2.34), runs on threads in glibc and cannot accept or receive from a
 * socket; a function of ours called aio_read would clash with it.
 *
 * The program describes a whole operation (accept on this listener, receive
 * into this buffer, receive into a buffer of your choice, send these bytes,
 * read this file at this offset, wake me in 50 ms, tell me when I am asked to
 * stop) in a `struct cio_op` it owns, hands it to cio_submit(), and gets the
 * op back later, in its callback, with `res` filled in. How the backend gets
 * there is its own business:
 *
 *   io_uring, IOCP    the kernel does the operation and reports it done
 *                     (native completions);
 *   epoll, kqueue     the library tries the system call at once, and on
 *                     EAGAIN waits for readiness and tries again (the
 *                     readiness-to-completion adapter of ready.c, as .NET's
 *                     SocketAsyncEngine and libuv do);
 *                     regular files are never "ready": their reads go to a
 *                     worker thread (offload.c).
 *
 * The backend is chosen at run time: CIO_BACKEND=uring|epoll|kqueue (and
 * poll, where the exercise's backend is built in); by default io_uring when
 * the kernel allows it, else epoll. CIO_TRACE=1 prints one line per op
 * submitted, saying how it will complete. CIO_BUFS=N sizes the pool of
 * pooled receives, as cio_buf_pool() does (CIO_BUFS=1 shows parking).
 *
 * Rules (the same on every backend):
 *   - an op belongs to the library from cio_submit() until its callback
 *     starts, and so does its buffer: with a completion backend the kernel
 *     writes into it at a moment of its choosing;
 *   - every op submitted gets exactly one callback, cancelled or not;
 *   - callbacks run only inside cio_run(), on the thread that calls it, never
 *     inside cio_submit();
 *   - one send at a time per socket (a second one would interleave with the
 *     rest of a short first one);
 *   - cio_attach() an fd before its first op, cio_detach() it before close()
 *     and only when none of its ops is in flight.
 *
 * Pooled receives (CIO_RECV_POOLED): the op names no buffer, and the library
 * picks one from its pool of CIO_BUF_SIZE-byte buffers only when bytes have
 * arrived, so a connection waiting for a quiet client holds no buffer at all:
 *
 *   io_uring          a provided buffer ring (IOSQE_BUFFER_SELECT): the
 *                     kernel takes a buffer as the bytes land;
 *   epoll, kqueue     the adapter takes a buffer when the socket is readable,
 *                     and gives it back to the pool if recv() says EAGAIN;
 *   IOCP              a zero-byte WSARecv waits for the bytes; then a
 *                     non-blocking recv() into a pool buffer takes them.
 *
 * Who owns the buffer when:
 *   - from cio_submit() to the callback, the op holds no buffer of its own
 *     (op->buf is the library's to set);
 *   - res > 0: op->buf points to a pool buffer holding res bytes, and the
 *     buffer is the caller's until it calls cio_buf_release(a, op->buf),
 *     whenever it likes (after the send that echoes those bytes completes,
 *     for instance); the op itself may be submitted again meanwhile;
 *   - res <= 0 (end of stream, an error, -ECANCELED): op->buf is NULL and no
 *     buffer is held;
 *   - when every buffer is held, the op waits (it is parked, not failed) and
 *     goes on once one is released; cancelling it then completes it with
 *     -ECANCELED.
 *
 * Fair: only a receive whose bytes have come waits for a buffer, and such
 * receives are served first in, first out. A released buffer goes to the
 * one that has waited longest, and while any waits, a new receive whose
 * bytes come queues behind it instead of taking the buffer first.
 */
#ifndef CH11_CIO_H
#define CH11_CIO_H

#include "list.h"

#include <stddef.h>
#include <stdint.h>

#ifdef _WIN32
#include "win.h"          /* common/win/: winsock2.h before windows.h */
typedef uintptr_t cio_fd; /* a SOCKET or a file HANDLE */
#else
typedef int cio_fd;
#endif

/* snippet: kinds */
enum cio_kind {
    CIO_ACCEPT,      /* res: the new socket (>= 0), or -errno */
    CIO_RECV,        /* res: 1..len bytes received, 0 at end of stream, or -errno */
    CIO_SEND,        /* res: len (every byte is sent before it completes), or -errno */
    CIO_READ_FILE,   /* res: bytes read at `offset` (0 past the end), or -errno */
    CIO_TIMEOUT,     /* res: -ETIME when timeout_ms have passed */
    CIO_RECV_POOLED, /* res: as CIO_RECV, the bytes in a pool buffer at op->buf */
    CIO_STOP,        /* res: 0 once the process is asked to stop (see below) */
};
/* Any op: -ECANCELED when cio_cancel() stopped it first. */
/* end snippet */

/* Capabilities: what a backend does natively (cio_caps()). */
enum cio_cap {
    CIO_CAP_COMPLETION = 1u << 0,  /* the kernel does the I/O and reports it done */
    CIO_CAP_READINESS = 1u << 1,   /* the kernel says "ready"; the library does the I/O */
    CIO_CAP_FILE_ASYNC = 1u << 2,  /* file reads are asynchronous in the kernel itself */
    CIO_CAP_FILE_THREAD = 1u << 3, /* file reads run on a worker thread */
    CIO_CAP_TIMER_KERNEL = 1u << 4 /* timeouts are kernel objects, not a list in the library */
};

struct cio;
struct cio_op;
typedef void (*cio_cb)(struct cio *a, struct cio_op *op);

/* snippet: op */
struct cio_op {
    /* Set by the caller before cio_submit(). */
    enum cio_kind kind;
    cio_fd fd;           /* the socket or file; unused by CIO_TIMEOUT */
    void *buf;           /* RECV, READ_FILE: filled in; SEND: sent; RECV_POOLED: set by cio */
    size_t len;          /* bytes at buf (RECV_POOLED: unused) */
    int64_t offset;      /* READ_FILE: where to read; -1 = the current position (a pipe) */
    unsigned timeout_ms; /* TIMEOUT */
    cio_cb cb;           /* called once, when the op is over */
    void *user_data;     /* the caller's own */

    /* Set before cb runs. */
    int res; /* see enum cio_kind */

    /* The library's, from cio_submit() until the callback. */
    unsigned state;             /* CIO__IDLE, CIO__IN_FLIGHT, CIO__DONE */
    unsigned flags;             /* CIO__INTERNAL... */
    size_t done;                /* SEND: bytes already sent (short sends) */
    int64_t deadline_ms;        /* TIMEOUT kept in the library's list */
    struct cio_op *next, *prev; /* in one of the library's queues */
    struct list_node waiting;   /* RECV_POOLED: in the pool's queue, waiting for a buffer */
    long long ts_sec, ts_nsec;  /* io_uring: the TIMEOUT's __kernel_timespec */
#ifdef _WIN32
    OVERLAPPED ov;   /* IOCP: the completion packet points here */
    SOCKET accepted; /* IOCP: the socket AcceptEx connects */
    char addrs[2 * (sizeof(struct sockaddr_in6) + 16)]; /* AcceptEx writes addresses here */
#endif
};
/* end snippet */

/* Create a loop on the backend CIO_BACKEND names (or the best available).
 * Returns NULL with *err set to a negative errno; -EINVAL means CIO_BACKEND
 * names no backend built into this program (`why` says which exist). */
struct cio *cio_create(int *err, char *why, size_t whylen);
/* Free the loop. Every op must be over (its callback run). */
void cio_destroy(struct cio *a);

const char *cio_backend_name(const struct cio *a);
unsigned cio_caps(const struct cio *a);
/* "readiness; file reads on a worker thread; timeouts in the library" */
const char *cio_caps_text(unsigned caps, char *buf, size_t len);

/* Prepare a new fd for this loop: non-blocking for readiness backends, tied
 * to the completion port for IOCP. -errno on failure. */
int cio_attach(struct cio *a, cio_fd fd);
/* Forget an fd before closing it (no op of it may be in flight). */
void cio_detach(struct cio *a, cio_fd fd);

/* Start an op. 0, or -EINVAL (bad op), -EBUSY (already in flight); errors of
 * the operation itself always arrive through the callback. */
int cio_submit(struct cio *a, struct cio_op *op);

/* snippet: cancel */
/* Ask for an op to stop. 0: asked; the callback will come, with -ECANCELED,
 * or with the op's own result if it finished first (a recv cancelled as its
 * data arrived completes with the data). -ENOENT: the op is not in flight.
 * Until that callback, the buffer still belongs to the library. */
int cio_cancel(struct cio *a, struct cio_op *op);
/* end snippet */

/* Wait up to timeout_ms (-1: no limit) for completions and run their
 * callbacks. Returns the number of callbacks run, or -errno. */
int cio_run(struct cio *a, int timeout_ms);

/* Ops submitted and not yet called back. */
unsigned cio_in_flight(const struct cio *a);

/* snippet: stop */
/* CIO_STOP: the request to stop, as one more op. It completes with 0 when
 * SIGINT or SIGTERM arrives (POSIX) or on Ctrl-C, Ctrl-Break or the console
 * closing (Windows), and with -ECANCELED when cancelled. How it waits is the
 * backend's business, as for any op:
 *
 *   POSIX         a read of a signalfd (Linux) or of a self-pipe (elsewhere:
 *                 net.c's), made at the first CIO_STOP: submit it before
 *                 the program starts a thread or tells anyone its port;
 *   Windows       the console handler (common/win/win.c) sets an event, and
 *                 a thread-pool wait on it posts the op's completion packet
 *                 to the port.
 *
 * One CIO_STOP in flight at a time: a second completes with -EBUSY. */
/* end snippet */

/* snippet: pool */
#define CIO_BUF_SIZE  (16 * 1024) /* bytes in one pool buffer: at most what a pooled recv brings */
#define CIO_BUF_COUNT 256         /* pool buffers unless cio_buf_pool() says otherwise */

/* Size the pool of pooled receives: count buffers (a power of two, 1 to
 * 32768). Only before the first CIO_RECV_POOLED, which makes the pool:
 * -EBUSY afterwards, -EINVAL for a bad count. */
int cio_buf_pool(struct cio *a, unsigned count);
/* Give back the buffer a CIO_RECV_POOLED brought (op->buf, res > 0). An op
 * parked for want of a buffer goes on with it. A pointer that is not a held
 * pool buffer is a bug in the caller: it says so on stderr and aborts. */
void cio_buf_release(struct cio *a, void *buf);
/* Pool buffers the caller holds now (brought, not yet released). */
unsigned cio_buf_held(const struct cio *a);
/* end snippet */

#endif
