/* offload.c: file reads for the readiness backends, on one worker thread.
 *
 * epoll refuses a regular file outright (epoll_ctl: EPERM, chapter 04) and
 * poll() calls it always ready: neither can say when a read from disk would
 * not block. So, as .NET and libuv do, the read runs on another thread and
 * its result comes back to the loop:
 *
 *   loop thread                       worker thread
 *   offload_submit(op) --todo------>  pread(op->fd, op->buf, op->len, op->offset)
 *                                     op->res = result; onto `done`
 *   eventfd readable  <--write(1)---  write(efd, 1)
 *   notify op completes: take `done`, cio__complete() each op
 *
 * The eventfd is read by an ordinary stream read (ready.c), so the
 * hand-back needs nothing new from the backend. This is deliberately the
 * smallest thing that works: one thread, so reads run one at a time (a
 * pool of several is chapter 10's subject). The thread starts with the
 * first file read, so a program that never reads a file never has it.
 */
#include "cio_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/eventfd.h>
#endif

struct offload {
    pthread_mutex_t lock;
    pthread_cond_t work;                  /* signalled when `todo` gains an op, or on quit */
    struct cio_op *todo_head, *todo_tail; /* waiting for the worker (under lock) */
    struct cio_op *done;                  /* read, not yet handed back: newest first (under lock) */
    bool quit;                            /* under lock */
    pthread_t thread;
    int rfd, wfd;         /* the eventfd (both the same), or a pipe's two ends */
    uint64_t count;       /* where the notify op's read lands */
    struct cio_op notify; /* internal: a read of rfd, through ready.c */
};

static void *offload__worker(void *arg)
{
    struct offload *o = arg;
    const uint64_t one = 1;

    pthread_mutex_lock(&o->lock);
    for (;;) {
        struct cio_op *op;
        ssize_t n;

        while (!o->todo_head && !o->quit)
            pthread_cond_wait(&o->work, &o->lock);
        if (o->quit)
            break;
        op = o->todo_head;
        o->todo_head = op->next;
        if (!o->todo_head)
            o->todo_tail = NULL;
        pthread_mutex_unlock(&o->lock);

        do {
            n = pread(op->fd, op->buf, op->len, (off_t)op->offset);
        } while (n < 0 && errno == EINTR);

        pthread_mutex_lock(&o->lock);
        op->res = n < 0 ? -errno : (int)n;
        op->next = o->done;
        o->done = op;
        /* the loop reads the counter back to 0: a write fails only if it
         * is already huge, and then the loop is woken anyway */
        if (write(o->wfd, &one, sizeof(one)) < 0) {
        }
    }
    pthread_mutex_unlock(&o->lock);
    return NULL;
}

/* snippet: notify */
/* The eventfd was readable: hand every finished read back to the loop. */
static void offload__on_notify(struct cio *a, struct cio_op *notify)
{
    struct offload *o = notify->user_data;
    struct cio_op *done, *rev = NULL;

    pthread_mutex_lock(&o->lock);
    done = o->done;
    o->done = NULL;
    pthread_mutex_unlock(&o->lock);
    while (done) { /* newest first: reverse, to complete them in order */
        struct cio_op *next = done->next;
        done->next = rev;
        rev = done;
        done = next;
    }
    while (rev) {
        struct cio_op *next = rev->next;
        cio__complete(a, rev, rev->res);
        rev = next;
    }
    if (notify->res < 0 && notify->res != -ECANCELED)
        abort(); /* the eventfd failed: nothing can be handed back any more */
    if (notify->res != -ECANCELED)
        cio_submit(a, notify); /* wait for the next batch */
}
/* end snippet */

static struct offload *offload__start(struct cio *a)
{
    struct offload *o = calloc(1, sizeof(*o));
    int fds[2];

    if (!o)
        return NULL;
#ifdef __linux__
    fds[0] = fds[1] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fds[0] < 0)
        goto fail_alloc;
#else
    if (pipe(fds) < 0)
        goto fail_alloc;
#endif
    o->rfd = fds[0];
    o->wfd = fds[1];
    if (ready_attach(a, o->rfd) < 0 || ready_attach(a, o->wfd) < 0)
        goto fail_fds;
    pthread_mutex_init(&o->lock, NULL);
    pthread_cond_init(&o->work, NULL);
    if (pthread_create(&o->thread, NULL, offload__worker, o) != 0)
        goto fail_sync;
    o->notify = (struct cio_op){.kind = CIO_READ_FILE,
                                .fd = o->rfd,
                                .buf = &o->count,
                                .len = sizeof(o->count),
                                .offset = -1,
                                .cb = offload__on_notify,
                                .user_data = o,
                                .flags = CIO__INTERNAL};
    cio_submit(a, &o->notify);
    return o;

fail_sync:
    pthread_cond_destroy(&o->work);
    pthread_mutex_destroy(&o->lock);
fail_fds:
    close(o->rfd);
    if (o->wfd != o->rfd)
        close(o->wfd);
fail_alloc:
    free(o);
    return NULL;
}

void offload_submit(struct cio *a, struct cio_op *op)
{
    struct offload *o = a->offload;

    if (!o && !(o = a->offload = offload__start(a))) {
        cio__complete(a, op, -ENOMEM);
        return;
    }
    pthread_mutex_lock(&o->lock);
    op->next = NULL;
    if (o->todo_tail)
        o->todo_tail->next = op;
    else
        o->todo_head = op;
    o->todo_tail = op;
    pthread_cond_signal(&o->work);
    pthread_mutex_unlock(&o->lock);
}

bool offload_cancel(struct cio *a, struct cio_op *op)
{
    struct offload *o = a->offload;
    struct cio_op **p;
    bool found = false;

    if (!o)
        return false;
    pthread_mutex_lock(&o->lock);
    for (p = &o->todo_head; *p; p = &(*p)->next) {
        if (*p == op) {
            *p = op->next;
            found = true;
            break;
        }
    }
    if (found) { /* the tail may have been the op */
        struct cio_op *t = o->todo_head;
        while (t && t->next)
            t = t->next;
        o->todo_tail = t;
    }
    pthread_mutex_unlock(&o->lock);
    return found;
}

void offload_fini(struct cio *a)
{
    struct offload *o = a->offload;

    if (!o)
        return;
    pthread_mutex_lock(&o->lock);
    o->quit = true;
    pthread_cond_signal(&o->work);
    pthread_mutex_unlock(&o->lock);
    pthread_join(o->thread, NULL);
    ready_detach(a, o->rfd);
    close(o->rfd);
    if (o->wfd != o->rfd)
        close(o->wfd);
    pthread_cond_destroy(&o->work);
    pthread_mutex_destroy(&o->lock);
    free(o);
    a->offload = NULL;
}
