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
#include "basic.h"

#include <errno.h>

/* snippet: on-recv */
void conn_on_recv(struct server *s, struct conn *c, int res)
{
    /* EXERCISE BEGIN uring-dispatch: recv done: send what came, close at EOF, fail on errors */
    if (res > 0) {
        c->len = (size_t)res;
        c->sent = 0;
        conn_queue_send(s, c);
    } else if (res == 0) {
        conn_close(s, c); /* EOF: nothing is pending, we only recv once all is sent */
    } else if (res == -EINTR || res == -EAGAIN) {
        conn_queue_recv(s, c); /* nothing was received: ask again */
    } else {
        conn_fail(s, c, "recv", -res);
    }
    /* EXERCISE END */
}
/* end snippet */

/* snippet: on-send */
void conn_on_send(struct server *s, struct conn *c, int res)
{
    /* EXERCISE BEGIN uring-dispatch: send done: the rest after a short send, else recv again */
    if (res >= 0) {
        c->sent += (size_t)res;
        if (c->sent < c->len)
            conn_queue_send(s, c); /* short send: the rest, from where it stopped */
        else
            conn_queue_recv(s, c); /* all echoed: the next bytes */
    } else if (res == -EINTR || res == -EAGAIN) {
        conn_queue_send(s, c);
    } else {
        conn_fail(s, c, "send", -res); /* EPIPE, ECONNRESET: the client is gone */
    }
    /* EXERCISE END */
}
/* end snippet */
