/* SPDX-License-Identifier: MIT */
/* loop.h: the smallest epoll loop that can drive a state machine.
 *
 * A state machine that cannot go on (its socket said EAGAIN) arms one
 * struct loop_wait and returns. When the fd is ready, the loop calls
 * wait->resume(wait->frame): the state machine's move_next(), which picks up
 * where its state field says. That is the whole contract between the loop
 * and the code it runs, and it is the contract .NET's awaiters have with the
 * async methods the C# compiler writes (OnCompleted(MoveNext)).
 *
 * Every wait is one-shot (EPOLLONESHOT): it fires once, then the fd stays in
 * epoll's interest list, disabled, until the next loop_await_fd() re-arms it
 * with EPOLL_CTL_MOD. One resume per arm, never a second one for the same
 * readiness: a state machine resumed twice would run the same step twice.
 */
#ifndef CH12_LOOP_H
#define CH12_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct loop {
    int epfd;
    int armed;             /* waits armed and not yet fired: 0 means nothing left to do */
    bool stop;             /* loop_stop() was called */
    unsigned long resumes; /* continuations the loop has run */
};

struct loop_wait {
    int fd;
    bool in_epoll;               /* fd is in the interest list: re-arm with MOD, not ADD */
    bool armed;                  /* one resume is owed */
    void (*resume)(void *frame); /* the continuation: a move_next() */
    void *frame;                 /* the state machine it resumes */
};

int loop_init(struct loop *l);
void loop_fini(struct loop *l);

/* Call w->resume(w->frame) once, from loop_run(), when w->fd is ready for
 * `events` (EPOLLIN or EPOLLOUT). A failure here (epoll_ctl on a valid fd:
 * ENOMEM, or a bug such as arming one wait twice) ends the program: the
 * awaiting code has already decided to suspend and has nowhere to report it.
 * .NET does the same with an awaiter whose OnCompleted throws. */
void loop_await_fd(struct loop *l, struct loop_wait *w, uint32_t events);

/* Take w->fd out of epoll (and drop its pending resume, if any). Call it
 * before close(w->fd). */
void loop_forget(struct loop *l, struct loop_wait *w);

/* Run continuations until no wait is armed, or loop_stop(). Returns 0 or -errno. */
int loop_run(struct loop *l);
void loop_stop(struct loop *l);

/* A periodic timer (timerfd) armed on the loop: fd, for loop_await_fd(). */
int loop_timerfd(int first_ms, int period_ms);

#endif
