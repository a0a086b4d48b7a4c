/* SPDX-License-Identifier: MIT */
/* pool-starve.c: more blocking work than threads, and what it looks like.
 *
 * Jobs arrive every -r ms; each blocks for -m ms (a sleep standing in for a
 * read from a slow disk or a database call: the thread waits, the CPU does
 * nothing). With -w threads the pool finishes at most w jobs per m ms; when
 * jobs arrive faster than that, the queue grows and every new job waits
 * longer than the last. Every -i ms the loop prints the pool's counters, the
 * numbers a real server should export; at the end, the wall and CPU time.
 *
 *     make -C chapters/10-threadpool
 *     build/chapters/10-threadpool/pool-starve               # 2 threads: starved
 *     build/chapters/10-threadpool/pool-starve -w 12         # enough threads
 */
#include "clock.h"
#include "net.h"
#include "pool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct job {
    struct pool_job pj; /* first */
    long long block_ns;
    long long wait_ns; /* queue wait: started - queued */
    long long done_ns; /* when done ran, on the loop thread */
};

static int jobs_done;

/* snippet: blocking-job */
static void blocking_work(struct pool_job *pj)
{
    struct job *j = (struct job *)pj;
    struct timespec ts = {j->block_ns / 1000000000LL, j->block_ns % 1000000000LL};

    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ; /* asleep in the kernel, like a read() from a slow disk */
}
/* end snippet */

static void on_done(struct pool_job *pj, int status)
{
    struct job *j = (struct job *)pj;

    (void)status;
    j->wait_ns = pj->started_ns - pj->queued_ns;
    j->done_ns = clock_now_ns();
    jobs_done++;
}

static long long cpu_ns(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static _Noreturn void usage(FILE *to, int status)
{
    fprintf(to, "usage: pool-starve [-w THREADS] [-j JOBS] [-m MS] [-r MS] [-i MS]\n"
                "Blocking jobs on a small pool: queue length and wait, wall vs CPU time.\n"
                "  -w N   pool threads (default 2)\n"
                "  -j N   jobs (default 12)\n"
                "  -m MS  each job blocks this long (default 200)\n"
                "  -r MS  a new job every MS (default 50; 0: all at once)\n"
                "  -i MS  print the counters this often (default 100)\n");
    exit(status);
}

int main(int argc, char **argv)
{
    long threads = 2, njobs = 12, block_ms = 200, every_ms = 50, tick_ms = 100;
    struct epoll_event ev = {.events = EPOLLIN}, out;
    struct pool p;
    struct pool_stats st;
    struct job *jobs;
    long long t0, cpu0, next_submit, next_tick, *waits;
    int opt, ep, submitted = 0, err;
    size_t peak_queued = 0;

    while ((opt = getopt(argc, argv, "w:j:m:r:i:h")) != -1) {
        long *dst = opt == 'w'   ? &threads
                    : opt == 'j' ? &njobs
                    : opt == 'm' ? &block_ms
                    : opt == 'r' ? &every_ms
                    : opt == 'i' ? &tick_ms
                                 : NULL;
        if (opt == 'h')
            usage(stdout, 0);
        if (!dst || net_parse_int(optarg, opt == 'r' ? 0 : 1, 100000, dst) < 0)
            usage(stderr, 2);
    }
    if (optind < argc)
        usage(stderr, 2);
    if (!(jobs = calloc((size_t)njobs, sizeof(*jobs))) || !(waits = calloc((size_t)njobs, 8)))
        net_die(ENOMEM, "calloc(%ld jobs)", njobs);
    if ((err = pool_init(&p, (int)threads, (size_t)njobs)) < 0)
        net_die(-err, "pool_init(%ld threads)", threads);
    if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, pool_fd(&p), &ev))
        net_die(errno, "epoll");
    printf("%ld jobs, one every %ld ms, each blocking %ld ms, on %ld threads\n", njobs, every_ms,
           block_ms, threads);
    printf("%8s %5s %5s %7s %12s %12s %5s\n", "t ms", "busy", "idle", "queued", "oldest ms",
           "longest ms", "done");

    t0 = clock_now_ns();
    cpu0 = cpu_ns();
    next_submit = next_tick = t0;
    /* snippet: watch */
    while (jobs_done < njobs) {
        long long now = clock_now_ns(), wake;
        while (submitted < njobs && now >= next_submit) {
            jobs[submitted].block_ns = block_ms * 1000000LL;
            if ((err = pool_submit(&p, &jobs[submitted].pj, blocking_work, on_done)) < 0)
                net_die(-err, "pool_submit(job %d)", submitted);
            submitted++;
            next_submit += every_ms * 1000000LL;
        }
        if (now >= next_tick) { /* what a metrics endpoint would export */
            pool_get_stats(&p, &st);
            peak_queued = st.queued > peak_queued ? st.queued : peak_queued;
            printf("%8.0f %5d %5d %7zu %12.0f %12.0f %5d\n", (double)(now - t0) / 1e6, st.busy,
                   st.idle, st.queued, (double)st.oldest_queued_ns / 1e6,
                   (double)st.longest_wait_ns / 1e6, jobs_done);
            next_tick += tick_ms * 1000000LL;
        }
        wake = submitted < njobs && next_submit < next_tick ? next_submit : next_tick;
        int ms = (int)((wake - clock_now_ns()) / 1000000) + 1;
        if (epoll_wait(ep, &out, 1, ms > 0 ? ms : 0) > 0)
            pool_drain(&p);
    }
    /* end snippet */

    double wall = (double)(clock_now_ns() - t0) / 1e6, cpu = (double)(cpu_ns() - cpu0) / 1e6;
    for (long i = 0; i < njobs; i++)
        waits[i] = jobs[i].wait_ns;
    qsort(waits, (size_t)njobs, sizeof(*waits), cmp_ll);
    pool_get_stats(&p, &st);
    printf("wall time %.0f ms, CPU time %.1f ms (%.1f%% of one core)\n", wall, cpu,
           100.0 * cpu / wall);
    printf("queue wait: min %.0f ms, median %.0f ms, max %.0f ms; peak queue %zu jobs\n",
           (double)waits[0] / 1e6, (double)waits[njobs / 2] / 1e6, (double)waits[njobs - 1] / 1e6,
           peak_queued);
    printf("latency of the last job: %.0f ms for %ld ms of work\n",
           (double)(jobs[njobs - 1].done_ns - jobs[njobs - 1].pj.queued_ns) / 1e6, block_ms);
    if (waits[njobs - 1] > block_ms * 1000000LL)
        printf("starved: jobs waited longer than they ran, every thread was busy, and the CPU "
               "was idle\n");
    else
        printf("not starved: no job waited longer than it ran\n");
    close(ep);
    pool_shutdown(&p, POOL_FINISH);
    free(waits);
    free(jobs);
    return 0;
}
