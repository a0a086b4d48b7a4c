/* SPDX-License-Identifier: MIT */
/* sync-over-async.c: a pool thread that blocks waiting for another job of the
 * same pool, and the loop thread that blocks waiting for its own callback.
 *
 * Each request is an "outer" job that blocks 20 ms, then needs an "inner"
 * job done (the inner one sleeps 10 ms: a stand-in for some I/O). Five
 * scenarios:
 *
 *   1 wait       1 thread, 1 request: the outer job queues the inner one and
 *                waits for it (task.Wait(), .Result). The only thread is the
 *                one waiting: the inner job never starts. Deadlock.
 *   2 wait       4 threads, 4 requests at once: the same, four times over.
 *                More threads only move the limit.
 *   3 continue   1 thread, 4 requests: the outer job queues the inner one
 *                with a completion callback that finishes the request, and
 *                returns (await). Nothing waits; everything completes.
 *   4 loop-wait  the loop thread queues a job and waits for the job's done
 *                callback, which only the loop thread can run. Deadlock,
 *                with any number of pool threads.
 *   5 loop-work  the loop thread waits only for the job's work (signalled
 *                on the pool thread), not for its callback. No deadlock,
 *                although the loop is blocked meanwhile.
 *
 * A deadlocked program would hang; this one gives every wait a deadline
 * (-t), and the loop watches the pool like .NET's starvation detector does:
 * queued work and no progress for -d ms is reported as a stall.
 *
 *     make -C chapters/10-threadpool
 *     build/chapters/10-threadpool/sync-over-async              # all five, exit 0 if as described
 *     build/chapters/10-threadpool/sync-over-async -m wait -w 1 # one scenario: exit 1 if it
 * stalled
 */
#include "clock.h"
#include "net.h"
#include "pool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

enum mode { WAIT, CONTINUE, LOOP_WAIT, LOOP_WORK };
static const char *mode_names[] = {"wait", "continue", "loop-wait", "loop-work"};

struct opts {
    enum mode mode;
    long threads, requests, timeout_ms, detect_ms;
};

struct request {
    struct pool_job outer, inner;
    struct pool *pool;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool inner_work_done; /* set on the pool thread at the end of inner_work */
    bool inner_cb_done;   /* set on the loop thread by inner's done callback */
    bool gave_up;         /* a wait hit its deadline */
    bool finished;        /* the request is complete (its last callback ran) */
};

static int timeout_ms;

static struct request *of_inner(struct pool_job *j)
{
    return (struct request *)((char *)j - offsetof(struct request, inner));
}

static void inner_work(struct pool_job *j)
{
    struct request *r = of_inner(j);
    struct timespec io = {0, 10 * 1000000L};

    nanosleep(&io, NULL); /* the inner job's own I/O */
    pthread_mutex_lock(&r->lock);
    r->inner_work_done = true;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

/* Wait for *flag under r->lock, at most timeout_ms. Returns false on timeout. */
static bool wait_for(struct request *r, const bool *flag)
{
    struct timespec deadline;
    bool ok;

    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&r->lock);
    while (!*flag && pthread_cond_timedwait(&r->cond, &r->lock, &deadline) != ETIMEDOUT)
        ;
    ok = *flag;
    if (!ok)
        r->gave_up = true;
    pthread_mutex_unlock(&r->lock);
    return ok;
}

static void inner_done(struct pool_job *j, int status)
{
    struct request *r = of_inner(j);

    (void)status;
    pthread_mutex_lock(&r->lock);
    r->inner_cb_done = true;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

/* The first part of every request: 20 ms of its own blocking work. By the
 * time any request queues its inner job, every request has been queued, so
 * with as many requests as threads each thread holds one outer job. */
static void first_part(void)
{
    struct timespec ts = {0, 20 * 1000000L};

    nanosleep(&ts, NULL);
}

static void outer_done(struct pool_job *j, int status)
{
    (void)status;
    ((struct request *)j)->finished = true; /* outer is the first member */
}

/* snippet: sync-over-async */
/* Scenarios 1 and 2: sync over async. The outer job queues the inner one on
 * its own pool and blocks until it has run: Task.Run(...).Result. */
static void outer_work_wait(struct pool_job *j)
{
    struct request *r = (struct request *)j;

    first_part();
    if (pool_submit(r->pool, &r->inner, inner_work, inner_done) < 0)
        return;
    wait_for(r, &r->inner_work_done); /* a pool thread asleep, waiting for a pool thread */
}
/* end snippet */

/* snippet: continuation */
/* Scenario 3: the fix. The outer job queues the inner one with a callback
 * that completes the request, and returns: its thread is free at once, and
 * the inner job can have it. The callback is the continuation after an await. */
static void inner_done_continue(struct pool_job *j, int status)
{
    struct request *r = of_inner(j);

    inner_done(j, status);
    r->finished = true; /* the rest of the request runs here, on the loop thread */
}

static void outer_work_continue(struct pool_job *j)
{
    struct request *r = (struct request *)j;

    first_part();
    pool_submit(r->pool, &r->inner, inner_work, inner_done_continue);
}

static void outer_done_continue(struct pool_job *j, int status)
{
    (void)j;
    (void)status; /* not finished yet: inner_done_continue finishes it */
}
/* end snippet */

/* Run one scenario. Returns true if it stalled (a wait hit its deadline, or
 * the watchdog saw no progress). */
static bool run(const struct opts *o)
{
    struct request *reqs = calloc((size_t)o->requests, sizeof(*reqs));
    struct epoll_event ev = {.events = EPOLLIN}, out;
    struct pool p;
    struct pool_stats st;
    long long t0 = clock_now_ns(), last_progress = t0, deadline;
    uint64_t last_completed = 0;
    bool stalled = false, reported = false;
    int ep, finished = 0, err;

    timeout_ms = (int)o->timeout_ms;
    if (!reqs || (err = pool_init(&p, (int)o->threads, 64)) < 0)
        net_die(reqs ? -err : ENOMEM, "pool_init(%ld threads)", o->threads);
    if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, pool_fd(&p), &ev))
        net_die(errno, "epoll");
    for (long i = 0; i < o->requests; i++) {
        struct request *r = &reqs[i];
        r->pool = &p;
        pthread_mutex_init(&r->lock, NULL);
        pthread_cond_init(&r->cond, NULL);
        if (o->mode == WAIT)
            pool_submit(&p, &r->outer, outer_work_wait, outer_done);
        else if (o->mode == CONTINUE)
            pool_submit(&p, &r->outer, outer_work_continue, outer_done_continue);
    }
    /* snippet: loop-wait */
    if (o->mode == LOOP_WAIT || o->mode == LOOP_WORK) {
        /* As if inside a done callback: the loop thread queues a job and
         * blocks until it is complete. */
        struct request *r = &reqs[0];
        pool_submit(&p, &r->inner, inner_work, inner_done);
        if (o->mode == LOOP_WAIT) /* for the callback: only this thread can run it */
            wait_for(r, &r->inner_cb_done);
        else /* for the work only: a pool thread signals it */
            wait_for(r, &r->inner_work_done);
        r->finished = true;
        if (r->gave_up)
            printf("  the loop thread waited %d ms for a done callback that only the loop thread "
                   "can run: it gave up\n",
                   timeout_ms);
    }
    /* end snippet */

    /* The loop, with a watchdog: jobs queued, none completed for detect_ms. */
    deadline = t0 + (o->timeout_ms * 3 + 2000) * 1000000LL;
    for (;;) {
        finished = 0;
        for (long i = 0; i < o->requests; i++)
            finished += reqs[i].finished;
        if (finished == o->requests || clock_now_ns() > deadline)
            break;
        if (epoll_wait(ep, &out, 1, 20) > 0)
            pool_drain(&p);
        pool_get_stats(&p, &st);
        if (st.completed != last_completed || st.queued == 0) {
            last_completed = st.completed;
            last_progress = clock_now_ns();
        } else if (!reported && clock_now_ns() - last_progress > o->detect_ms * 1000000LL) {
            printf("  stall detected after %ld ms without progress: threads %d, busy %d, idle %d, "
                   "queued %zu, oldest queued %.0f ms, completed %llu\n",
                   o->detect_ms, st.threads, st.busy, st.idle, st.queued,
                   (double)st.oldest_queued_ns / 1e6, (unsigned long long)st.completed);
            reported = stalled = true;
        }
    }
    for (long i = 0; i < o->requests; i++)
        if (reqs[i].gave_up) {
            if (o->mode == WAIT)
                printf(
                    "  request %ld: its job gave up after %ld ms waiting for the job it queued\n",
                    i + 1, o->timeout_ms);
            stalled = true;
        }
    printf("  %d of %ld requests complete after %.0f ms: %s\n", finished, o->requests,
           (double)(clock_now_ns() - t0) / 1e6,
           stalled ? "STALLED (a deadlock, broken only by the timeout)" : "no stall");
    fflush(stdout);
    close(ep);
    pool_shutdown(&p, POOL_FINISH);
    for (long i = 0; i < o->requests; i++) {
        pthread_cond_destroy(&reqs[i].cond);
        pthread_mutex_destroy(&reqs[i].lock);
    }
    free(reqs);
    return stalled;
}

static _Noreturn void usage(FILE *to, int status)
{
    fprintf(to, "usage: sync-over-async [-m MODE [-w THREADS] [-c REQUESTS]] [-t MS] [-d MS]\n"
                "Without -m: run the five scenarios; exit 0 if each behaved as described.\n"
                "  -m MODE  one scenario: wait, continue, loop-wait or loop-work; exit 1 if it "
                "stalled\n"
                "  -w N     pool threads (default 1)\n"
                "  -c N     requests at once (default 1)\n"
                "  -t MS    a blocked wait gives up after MS (default 1200)\n"
                "  -d MS    report a stall after MS without progress (default 400)\n");
    exit(status);
}

int main(int argc, char **argv)
{
    struct opts o = {
        .mode = WAIT, .threads = 1, .requests = 1, .timeout_ms = 1200, .detect_ms = 400};
    bool one = false;
    int opt;

    while ((opt = getopt(argc, argv, "m:w:c:t:d:h")) != -1) {
        long *dst = opt == 'w'   ? &o.threads
                    : opt == 'c' ? &o.requests
                    : opt == 't' ? &o.timeout_ms
                    : opt == 'd' ? &o.detect_ms
                                 : NULL;
        if (opt == 'h')
            usage(stdout, 0);
        if (opt == 'm') {
            one = true;
            for (o.mode = 0; o.mode < 4 && strcmp(optarg, mode_names[o.mode]); o.mode++)
                ;
            if (o.mode == 4)
                usage(stderr, 2);
            continue;
        }
        if (!dst || net_parse_int(optarg, 1, opt == 'w' || opt == 'c' ? 64 : 60000, dst) < 0)
            usage(stderr, 2);
    }
    if (optind < argc)
        usage(stderr, 2);
    if (one) {
        printf("%s: %ld threads, %ld requests\n", mode_names[o.mode], o.threads, o.requests);
        return run(&o) ? 1 : 0;
    }

    static const struct {
        enum mode mode;
        long threads, requests;
        bool stalls;
        const char *title;
    } scenarios[] = {
        {WAIT, 1, 1, true, "sync over async: a job waits for a job it queued, 1 thread"},
        {WAIT, 4, 4, true, "the same with 4 threads and 4 requests at once"},
        {CONTINUE, 1, 4, false, "the fix: a completion callback instead of a wait, 1 thread"},
        {LOOP_WAIT, 4, 1, true, "the loop thread waits for a callback only it can run, 4 threads"},
        {LOOP_WORK, 4, 1, false, "the loop thread waits for the work only, 4 threads"},
    };
    int surprises = 0;
    for (int i = 0; i < 5; i++) {
        o.mode = scenarios[i].mode;
        o.threads = scenarios[i].threads;
        o.requests = scenarios[i].requests;
        printf("%d. %s (-m %s -w %ld -c %ld)\n", i + 1, scenarios[i].title, mode_names[o.mode],
               o.threads, o.requests);
        if (run(&o) != scenarios[i].stalls) {
            printf("  UNEXPECTED: this scenario should %s\n",
                   scenarios[i].stalls ? "have stalled" : "not have stalled");
            surprises++;
        }
    }
    printf("%s\n", surprises ? "some scenarios did not behave as described"
                             : "every scenario behaved as described");
    return surprises ? 1 : 0;
}
