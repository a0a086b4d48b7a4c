/* SPDX-License-Identifier: MIT */
/* basic-conn.c: what echo-uring-basic does when a request of a connection
 * completes. This is the whole echo protocol, as a state machine driven by
 * completions (see the diagram in basic.h):
 *
 *   recv completed with n > 0 bytes  ->  send those n bytes
 *   recv completed with 0            ->  the client half-closed; everything it
 *                                        sent has been echoed: close
 *   send completed, some bytes left  ->  a short send: send the rest
 *   send completed, all bytes out    ->  receive the next bytes
 *   anything completed with -errno   ->  log it and close (a reset client is
 *                                        ordinary)
 *
 * A connection never has a recv and a send in flight at once, so its bytes
 * are echoed in order and a client that does not read stops being read from:
 * its send does not complete, so no recv is queued (backpressure for free).
 */
#include "todo.h"
#include "basic.h"

#include <errno.h>

void conn_on_recv(struct server *s, struct conn *c, int res)
{
    TODO("recv done: send what came, close at EOF, fail on errors");
}

void conn_on_send(struct server *s, struct conn *c, int res)
{
    TODO("send done: the rest after a short send, else recv again");
}
