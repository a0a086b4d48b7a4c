/* basic-conn.c: what echo-uring-basic does when a request of a connection
 * completes (exercise 08-io_uring-echo/uring-dispatch).
 *
 * The loop (chapters/08-io_uring-echo/echo-uring-basic.c) takes one CQE at
 * a time, finds the connection and the operation in its user_data, and
 * calls one of the two functions below with cqe->res: a byte count, 0 at
 * EOF, or -errno. You write them. Each connection has exactly one request
 * in flight, so each function must end in exactly one of:
 *
 *   conn_queue_recv(s, c)    receive into c->buf (s->buf_size bytes)
 *   conn_queue_send(s, c)    send c->buf[c->sent, c->len)
 *   conn_close(s, c)         close and free the connection
 *   conn_fail(s, c, "call", err)   log "call(fd=N): strerror(err)", then close
 *
 * The state machine (basic.h):
 *
 *     accept --> recv --res > 0--> send --all sent--> recv ...
 *                 |                | ^
 *                 |                +-+ short: send the rest
 *                 +--res = 0 (EOF) or an error--> close
 */
#include "basic.h"
#include "todo.h"

#include <errno.h>

void conn_on_recv(struct server *s, struct conn *c, int res)
{
    TODO("a recv completed: send what arrived, close at EOF, fail on errors");
}

void conn_on_send(struct server *s, struct conn *c, int res)
{
    TODO("a send completed: send the rest after a short send, else receive again");
}
