/* SPDX-License-Identifier: MIT */
/* pool.h: a fixed-size thread pool for blocking work, with completions handed
 * back to the event loop thread.
 *
 * An event loop must never block, but some calls always do: read() on a
 * regular file (epoll refuses the fd with EPERM, chapter 04), getaddrinfo(),
 * a slow fsync(). The loop hands such a call to the pool as a job: a `work`
 * function that runs on one of the pool's threads, and a `done` function,
 * the completion callback, that runs later ON THE LOOP THREAD, so it may touch
 * connections, buffers and the epoll set without a lock. This is the shape of
 * libuv's uv_queue_work() (work_cb, after_work_cb) and of a .NET work item
 * whose continuation is posted back to a single-threaded context.
 *
 *     loop thread                         pool threads
 *     pool_submit(job) --> [submit queue, bounded] --> job->work(job)
 *                                                          |
 *     epoll: pool_fd() readable <-- eventfd write <-- [done list] (handoff.c)
 *     pool_drain(): job->done(job, 0) for each, in order
 *
 * The submit queue is bounded: pool_submit() says -EAGAIN when it is full,
 * and the caller decides (refuse the request, or try later). An unbounded
 * queue hides overload until memory runs out; a full one is a fact the
 * program can report.
 *
 * pool_submit() and pool_get_stats() may be called from any thread (a job may
 * queue another job). pool_drain() and pool_shutdown() belong to the loop
 * thread: the thread whose epoll set holds pool_fd().
 */
#ifndef CH10_POOL_H
#define CH10_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pool_job;

/* Runs on a pool thread. May block: that is what the pool is for. */
typedef void (*pool_work_fn)(struct pool_job *job);
/* Runs on the loop thread, once per submitted job: status is 0 after work
 * ran, or -ECANCELED when the pool was shut down before the job started. */
typedef void (*pool_done_fn)(struct pool_job *job, int status);

/* snippet: job */
/* One unit of work. The caller embeds it in its own request struct (and gets
 * back to that struct from the job pointer in work and done), so the pool
 * allocates nothing per job. Owned by the pool from pool_submit() until done
 * is called. */
struct pool_job {
    pool_work_fn work;
    pool_done_fn done;
    struct pool_job *next; /* link in the submit queue, then in the done list */
    long long queued_ns;   /* clock_now_ns() when submitted (common/clock.h) */
    long long started_ns;  /* when a thread took it (0: never ran) */
};
/* end snippet */

/* snippet: stats */
/* What the pool can tell about itself: the numbers to look at when a server
 * is slow. Many queued jobs and no idle thread, while the CPU is idle, is
 * starvation: the threads are blocked, not working. */
struct pool_stats {
    int threads;                /* fixed at pool_init() */
    int busy;                   /* threads inside a work function now */
    int idle;                   /* threads waiting for a job */
    size_t queued;              /* jobs submitted and not started */
    size_t queue_cap;           /* pool_submit() says -EAGAIN beyond this */
    uint64_t submitted;         /* accepted by pool_submit() */
    uint64_t completed;         /* work functions that returned */
    uint64_t rejected;          /* pool_submit() calls refused: queue full */
    long long longest_wait_ns;  /* the longest any started job waited in the queue */
    long long oldest_queued_ns; /* how long the job at the head has waited so far */
};
/* end snippet */

struct pool {
    pthread_mutex_t lock;      /* guards the submit queue, the counters, stopping */
    pthread_cond_t work_ready; /* a job was queued, or the pool is stopping */
    struct pool_job *head, *tail;
    size_t queued, queue_cap;
    pthread_t *threads;
    int nthreads, busy;
    bool stopping;
    uint64_t submitted, completed, rejected;
    long long longest_wait_ns;

    /* The completion hand-off (handoff.c): finished jobs wait here for the
     * loop thread, and wake_fd tells the loop that some do. */
    pthread_mutex_t done_lock; /* guards done_head/done_tail only */
    struct pool_job *done_head, *done_tail;
    int wake_fd;  /* eventfd (Linux) or the read end of a pipe: in the epoll set */
    int wake_wfd; /* the same eventfd, or the pipe's write end */
};

/* Start `threads` threads (1 or more) and a submit queue of `queue_cap` jobs.
 * Returns 0 or -errno; on failure nothing is left to clean up. */
int pool_init(struct pool *p, int threads, size_t queue_cap);

/* Readable when completions wait: add it to the loop's epoll set (EPOLLIN)
 * and call pool_drain() when it fires. */
int pool_fd(const struct pool *p);

/* Queue a job. Returns 0, -EAGAIN when the queue is full (the job is not
 * queued and done will not be called), or -ESHUTDOWN after pool_shutdown(). */
int pool_submit(struct pool *p, struct pool_job *job, pool_work_fn work, pool_done_fn done);

/* Loop thread: run the done callback of every job finished so far, in the
 * order they finished. Returns how many ran. (handoff.c) */
size_t pool_drain(struct pool *p);

/* A consistent snapshot of the counters. */
void pool_get_stats(struct pool *p, struct pool_stats *st);

enum pool_stop {
    POOL_FINISH, /* run every queued job, then stop */
    POOL_CANCEL, /* jobs not started yet are cancelled (done gets -ECANCELED) */
};

/* Loop thread: stop the pool, wait for the jobs that are running (a thread
 * cannot be interrupted in the middle of a blocking call, only waited for),
 * join every thread, then run every remaining done callback here, cancelled
 * ones included, and release everything. Every submitted job gets exactly one
 * done call by the time this returns. */
void pool_shutdown(struct pool *p, enum pool_stop how);

/* ---- the completion hand-off (handoff.c), used by pool.c ------------------ */

/* Create and close wake_fd/wake_wfd. -errno on failure. */
int pool__handoff_init(struct pool *p);
void pool__handoff_close(struct pool *p);
/* A pool thread: `job` has finished its work; hand it to the loop thread. */
void pool__complete(struct pool *p, struct pool_job *job);

/* A test hook, NULL except in pool-check: when set, pool_drain()'s clearing
 * of the wake fd calls it first, on the loop thread, so that a check can
 * finish a job at that very moment (the one the order "clear, then take the
 * list" is about) instead of hoping for it. */
extern void (*pool__test_before_clear)(struct pool *p);

#endif
