/* SPDX-License-Identifier: MIT */
/* pool-check.c: the pool's contract, checked one promise at a time.
 *
 * The loop thread here is main(): it submits jobs and waits in epoll_wait()
 * on pool_fd(), like file-server does. Each check prints "ok - what" or
 * "FAIL - what: expected ..., got ...". Exit status 0 when every check
 * passed, 1 otherwise.
 *
 *     make -C chapters/10-threadpool
 *     build/chapters/10-threadpool/pool-check [-n JOBS]
 *
 * The exercise (exercises/10-threadpool/handoff) is tested with it: every
 * check goes through pool__complete() and pool_drain().
 */
#include "clock.h"
#include "net.h"
#include "pool.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

struct job {
    struct pool_job pj; /* first */
    int id;
    int done_calls; /* how many times done ran for this job: must end at 1 */
    int status;
    bool ran;         /* work ran (set on the pool thread, read after a join) */
    pthread_t ran_on; /* the thread that ran it */
};

static pthread_t loop_thread;
static int done_total, done_off_loop, failures;
static bool stalled;      /* a run_loop() ended without every done call it waited for */
static int block_fd = -1; /* read end of a pipe: block_work() waits on it */
static struct pool *chain_pool;
static int chain_left;

static void check(bool ok, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void check(bool ok, const char *what, const char *fmt, ...)
{
    va_list ap;

    printf("%s - %s", ok ? "ok" : "FAIL", what);
    if (!ok) {
        printf(": ");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        failures++;
    }
    printf("\n");
    fflush(stdout);
}

static void quick_work(struct pool_job *pj)
{
    ((struct job *)pj)->ran_on = pthread_self();
    ((struct job *)pj)->ran = true;
}

static void block_work(struct pool_job *pj)
{
    char c;

    ((struct job *)pj)->ran_on = pthread_self();
    ((struct job *)pj)->ran = true;
    /* A blocking read(): the thread sleeps until main() writes a byte. */
    while (read(block_fd, &c, 1) < 0 && errno == EINTR)
        ;
}

static void sleep_work(struct pool_job *pj)
{
    struct timespec ts = {0, 200 * 1000000L};

    ((struct job *)pj)->ran_on = pthread_self();
    ((struct job *)pj)->ran = true;
    nanosleep(&ts, NULL);
}

static void on_done(struct pool_job *pj, int status)
{
    struct job *j = (struct job *)pj;

    j->done_calls++;
    j->status = status;
    done_total++;
    if (!pthread_equal(pthread_self(), loop_thread))
        done_off_loop++;
}

/* A done callback that submits the next job: callbacks must run with no
 * pool lock held, or this would deadlock. */
static void on_chain_done(struct pool_job *pj, int status)
{
    on_done(pj, status);
    if (--chain_left > 0 && pool_submit(chain_pool, pj, quick_work, on_chain_done) < 0)
        chain_left = -1;
}

/* The loop: wait on pool_fd() and drain until `want` done calls in total,
 * or `ms` milliseconds. Returns the largest count one pool_drain() returned. */
static size_t run_loop(struct pool *p, int want, int ms)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN}, out;
    long long deadline = clock_now_ns() + ms * 1000000LL;
    size_t most = 0;

    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, pool_fd(p), &ev) < 0)
        net_die(errno, "epoll(pool_fd=%d)", pool_fd(p));
    while (done_total < want) {
        long long left = (deadline - clock_now_ns()) / 1000000;
        int n = left > 0 ? epoll_wait(ep, &out, 1, (int)left) : 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        size_t got = pool_drain(p);
        most = got > most ? got : most;
    }
    stalled |= done_total < want;
    close(ep);
    return most;
}

/* Is pool_fd() readable within ms? (It should not be, once all is drained.) */
static bool fd_readable_within(int fd, int ms)
{
    int ep = epoll_create1(EPOLL_CLOEXEC), n;
    struct epoll_event ev = {.events = EPOLLIN}, out;

    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
        net_die(errno, "epoll(fd=%d)", fd);
    while ((n = epoll_wait(ep, &out, 1, ms)) < 0 && errno == EINTR)
        ;
    close(ep);
    return n > 0;
}

static void wait_busy(struct pool *p, int busy)
{
    struct pool_stats st;

    for (int i = 0; i < 500; i++) {
        pool_get_stats(p, &st);
        if (st.busy == busy)
            return;
        usleep(10000);
    }
}

static void check_many(int n)
{
    struct pool p;
    struct job *jobs = calloc((size_t)n, sizeof(*jobs));
    int once = 0, err;
    long long t0;

    if (!jobs || (err = pool_init(&p, 4, (size_t)n)) < 0)
        net_die(jobs ? -err : ENOMEM, "pool_init(4, %d)", n);
    done_total = done_off_loop = 0;
    t0 = clock_now_ns();
    for (int i = 0; i < n; i++)
        if ((err = pool_submit(&p, &jobs[i].pj, quick_work, on_done)) < 0)
            net_die(-err, "pool_submit(job %d)", i);
    run_loop(&p, n, 5000);
    double ms = (double)(clock_now_ns() - t0) / 1e6;
    for (int i = 0; i < n; i++)
        once += jobs[i].done_calls == 1;
    check(done_total == n && once == n, "every job's done callback runs exactly once",
          "%d jobs, %d done calls, %d jobs with exactly one (after 5 s)", n, done_total, once);
    check(done_total > 0 && done_off_loop == 0, "every done callback runs on the loop thread",
          "%d of %d ran on another thread", done_off_loop, done_total);
    printf("   %d jobs submitted, run on 4 threads and handed back in %.1f ms (%.2f us per job)\n",
           n, ms, ms * 1000 / n);
    pool_shutdown(&p, POOL_FINISH);
    free(jobs);
}

static void check_burst(void)
{
    struct pool p;
    struct job jobs[8] = {0};
    struct timespec pause = {0, 300 * 1000000L};
    size_t most;

    if (pool_init(&p, 4, 64) < 0)
        net_die(EIO, "pool_init");
    done_total = done_off_loop = 0;
    for (int i = 0; i < 8; i++)
        pool_submit(&p, &jobs[i].pj, quick_work, on_done);
    nanosleep(&pause, NULL); /* the loop is busy elsewhere: all 8 finish meanwhile */
    most = run_loop(&p, 8, 3000);
    check(done_total == 8 && most == 8,
          "8 jobs that finished while the loop was busy come back in one pool_drain()",
          "%d of 8 done calls within 3 s, at most %zu from one pool_drain()", done_total, most);
    check(!fd_readable_within(pool_fd(&p), 200),
          "once everything is drained, pool_fd() is not readable (the loop can sleep)",
          "pool_fd() is still readable: a level-triggered loop would spin");
    chain_pool = &p;
    chain_left = 100;
    done_total = 0;
    pool_submit(&p, &jobs[0].pj, quick_work, on_chain_done);
    run_loop(&p, 100, 3000);
    check(done_total == 100 && chain_left == 0,
          "a done callback can submit the next job (100 in a chain)",
          "%d of 100 done calls within 3 s", done_total);
    pool_shutdown(&p, POOL_FINISH);
}

static void check_full_and_stop(enum pool_stop how)
{
    struct pool p;
    struct job jobs[4] = {0};
    struct pool_stats st;
    int fds[2], err, cancelled = 0, ran = 0, once = 0;

    if (pipe(fds) < 0 || pool_init(&p, 1, 2) < 0)
        net_die(errno, "pipe/pool_init");
    block_fd = fds[0];
    done_total = done_off_loop = 0;
    pool_submit(&p, &jobs[0].pj, block_work, on_done);
    wait_busy(&p, 1); /* the only thread is now blocked in read() */
    pool_submit(&p, &jobs[1].pj, sleep_work, on_done);
    pool_submit(&p, &jobs[2].pj, quick_work, on_done);
    err = pool_submit(&p, &jobs[3].pj, quick_work, on_done);
    usleep(100000);
    pool_get_stats(&p, &st);
    if (how == POOL_CANCEL) {
        check(err == -EAGAIN && st.rejected == 1, "a full queue refuses a job with -EAGAIN",
              "pool_submit() = %d, rejected %llu", err, (unsigned long long)st.rejected);
        check(st.busy == 1 && st.idle == 0 && st.queued == 2 && st.oldest_queued_ns >= 50000000,
              "the counters show 1 busy, 0 idle, 2 queued, the oldest waiting >= 50 ms",
              "busy %d idle %d queued %zu oldest %.1f ms", st.busy, st.idle, st.queued,
              (double)st.oldest_queued_ns / 1e6);
    }
    if (write(fds[1], "x", 1) != 1) /* release the blocked thread */
        net_die(errno, "write(pipe)");
    run_loop(&p, 1, 3000); /* the blocker's done */
    wait_busy(&p, 1);      /* the sleeper has started; the quick job waits */
    pool_shutdown(&p, how);
    for (int i = 0; i < 3; i++) {
        once += jobs[i].done_calls == 1;
        cancelled += jobs[i].status == -ECANCELED;
        ran += jobs[i].ran && jobs[i].status == 0;
    }
    if (how == POOL_CANCEL)
        check(once == 3 && ran == 2 && cancelled == 1 && done_off_loop == 0,
              "POOL_CANCEL: the running job finishes, the queued one gets -ECANCELED, on the loop "
              "thread",
              "%d of 3 done once, %d ran, %d cancelled, %d off the loop thread", once, ran,
              cancelled, done_off_loop);
    else
        check(once == 3 && ran == 3 && done_off_loop == 0,
              "POOL_FINISH: every queued job runs before shutdown returns",
              "%d of 3 done once, %d ran, %d off the loop thread", once, ran, done_off_loop);
    close(fds[0]);
    close(fds[1]);
}

int main(int argc, char **argv)
{
    long n = 20000;
    int opt;

    while ((opt = getopt(argc, argv, "n:h")) != -1) {
        if (opt == 'n' && net_parse_int(optarg, 1, 10000000, &n) == 0)
            continue;
        fprintf(opt == 'h' ? stdout : stderr,
                "usage: pool-check [-n JOBS]\nCheck the thread pool's promises (default 20000 "
                "jobs for the first check).\n");
        return opt == 'h' ? 0 : 2;
    }
    if (optind < argc) {
        fprintf(stderr, "pool-check: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    loop_thread = pthread_self();
    /* Once completions go missing, the later checks would only wait for
     * them too: stop at the first stall. */
    check_many((int)n);
    if (!stalled)
        check_burst();
    if (!stalled)
        check_full_and_stop(POOL_CANCEL);
    if (!stalled)
        check_full_and_stop(POOL_FINISH);
    if (stalled)
        printf("FAIL - done callbacks went missing: the remaining checks were not run\n");
    printf("%s\n", failures ? "some promises were broken" : "every promise was kept");
    return failures ? 1 : 0;
}
