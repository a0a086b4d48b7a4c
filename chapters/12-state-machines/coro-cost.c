/* SPDX-License-Identifier: MIT */
/* coro-cost.c: what a suspended task costs, stackless against stackful.
 *
 *     make -C chapters/12-state-machines
 *     build/chapters/12-state-machines/coro-cost                 # 10,000 tasks of each kind
 *     build/chapters/12-state-machines/coro-cost -n 100000 -s 16 # more tasks, 16 KiB stacks
 *
 * Memory: it creates N tasks of each kind and runs each to its first
 * suspension, then reads the process's resident memory (/proc/self/statm)
 * before and after. A stackless task is its frame, a malloc'd struct. A
 * stackful task is a struct fiber (two ucontext_t: the registers, the
 * signal mask, the floating point state) and a stack reserved whole (-s,
 * 64 KiB by default, plus a guard page), of which only the pages the task
 * touched become resident.
 *
 * Time: resume + suspend, a round trip, R times (-r) per run, the median
 * of K runs (-k): once with one task resumed over and over (everything in
 * cache), once with all N resumed in turn. Stackless: an indirect call into
 * the coroutine and its return. Stackful: two swapcontext() calls, each of
 * which also saves and restores the signal mask with a system call
 * (rt_sigprocmask): `strace -c -e trace=rt_sigprocmask` shows them.
 */
#include "clock.h"
#include "coro.h"
#include "fiber.h"
#include "net.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cost_opts {
    long tasks, stack_kib, rounds, runs;
};

/* ---- the two kinds of task: count, suspend, until told to stop ---------- */

/* snippet: tasks */
struct tick_co { /* stackless: this struct is the whole suspended task */
    int line;
    bool stop;
    unsigned long count;
};

static void tick_co(void *frame)
{
    struct tick_co *co = frame;

    ASYNC_BEGIN(co);
    while (!co->stop) {
        co->count++;
        AWAIT(co, (void)0); /* the caller resumes it */
    }
    ASYNC_END(co);
}

struct tick_fiber { /* stackful: the struct, and a stack */
    struct fiber fiber;
    bool stop;
    unsigned long count;
};

static void tick_fiber(void *arg)
{
    struct tick_fiber *t = arg;

    while (!t->stop) {
        t->count++;
        fiber_suspend(&t->fiber);
    }
}
/* end snippet */

/* ---- measuring ------------------------------------------------------------ */

static long rss_bytes(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");

    if (!f || fscanf(f, "%ld %ld", &size, &resident) != 2)
        net_die(errno ? errno : EIO, "reading /proc/self/statm");
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Called through a pointer the compiler cannot see through, as a loop
 * calls a continuation it found in an event. */
static void (*volatile resume_stackless)(void *frame) = tick_co;

/* ns per resume+suspend: the median of o->runs runs of o->rounds each,
 * over `n` tasks in turn (n = 1: one task, again and again). */
static double time_stackless(struct tick_co **cos, long n, const struct cost_opts *o)
{
    double t[16] = {0}; /* runs: at most 15 (-k) */

    for (long k = 0; k < o->runs; k++) {
        int64_t t0 = clock_now_ns();
        for (long r = 0, i = 0; r < o->rounds; r++, i = i + 1 == n ? 0 : i + 1)
            resume_stackless(cos[i]);
        t[k] = (double)(clock_now_ns() - t0) / (double)o->rounds;
    }
    qsort(t, (size_t)o->runs, sizeof(t[0]), cmp_double);
    return t[o->runs / 2];
}

static double time_stackful(struct tick_fiber **fs, long n, const struct cost_opts *o)
{
    double t[16] = {0}; /* runs: at most 15 (-k) */

    for (long k = 0; k < o->runs; k++) {
        int64_t t0 = clock_now_ns();
        for (long r = 0, i = 0; r < o->rounds; r++, i = i + 1 == n ? 0 : i + 1)
            fiber_resume(&fs[i]->fiber);
        t[k] = (double)(clock_now_ns() - t0) / (double)o->rounds;
    }
    qsort(t, (size_t)o->runs, sizeof(t[0]), cmp_double);
    return t[o->runs / 2];
}

static int on_opt(int opt, const char *arg, void *ctx)
{
    struct cost_opts *o = ctx;

    switch (opt) {
    case 'n':
        return net_parse_int(arg, 1, 1000000, &o->tasks);
    case 's':
        return net_parse_int(arg, 8, 8192, &o->stack_kib);
    case 'r':
        return net_parse_int(arg, 1, 1000000000, &o->rounds);
    case 'k':
        return net_parse_int(arg, 1, 15, &o->runs);
    }
    return -1;
}

static void usage(FILE *to, const char *prog)
{
    fprintf(to,
            "usage: %s [-n TASKS] [-s STACK_KIB] [-r ROUNDS] [-k RUNS]\n"
            "Memory per suspended task and resume+suspend time, stackless against stackful.\n"
            "  -n TASKS      suspended tasks of each kind (default 10000)\n"
            "  -s STACK_KIB  stack per stackful task, in KiB (default 64)\n"
            "  -r ROUNDS     resume+suspend round trips per timed run (default 200000)\n"
            "  -k RUNS       timed runs, the median is printed (default 5, at most 15)\n",
            prog);
}

int main(int argc, char **argv)
{
    struct cost_opts o = {10000, 64, 200000, 5};
    struct tick_co **cos;
    struct tick_fiber **fs;
    long before, less_rss, ful_rss, page = sysconf(_SC_PAGESIZE);
    double less_one, less_all, ful_one, ful_all;
    int opt, err;

    while ((opt = getopt(argc, argv, "n:s:r:k:h")) != -1) {
        if (opt == 'h') {
            usage(stdout, argv[0]);
            return 0;
        }
        if (on_opt(opt, optarg, &o) < 0) {
            usage(stderr, argv[0]);
            return 2;
        }
    }
    if (optind != argc) {
        usage(stderr, argv[0]);
        return 2;
    }
    cos = calloc((size_t)o.tasks, sizeof(*cos));
    fs = calloc((size_t)o.tasks, sizeof(*fs));
    if (!cos || !fs)
        net_die(ENOMEM, "calloc(%ld pointers)", o.tasks);

    /* snippet: measure */
    before = rss_bytes();
    for (long i = 0; i < o.tasks; i++) {
        if (!(cos[i] = calloc(1, sizeof(*cos[i]))))
            net_die(ENOMEM, "calloc(%zu)", sizeof(*cos[i]));
        tick_co(cos[i]); /* to its first AWAIT: suspended */
    }
    less_rss = rss_bytes() - before;

    before = rss_bytes();
    for (long i = 0; i < o.tasks; i++) {
        if (!(fs[i] = calloc(1, sizeof(*fs[i]))))
            net_die(ENOMEM, "calloc(%zu)", sizeof(*fs[i]));
        if ((err = fiber_init(&fs[i]->fiber, (size_t)o.stack_kib * 1024, tick_fiber, fs[i])) < 0)
            net_die(-err, "fiber %ld: mmap of a %ld KiB stack", i, o.stack_kib);
        fiber_resume(&fs[i]->fiber); /* to its first fiber_suspend(): suspended */
    }
    ful_rss = rss_bytes() - before;
    /* end snippet */

    less_one = time_stackless(cos, 1, &o);
    less_all = time_stackless(cos, o.tasks, &o);
    ful_one = time_stackful(fs, 1, &o);
    ful_all = time_stackful(fs, o.tasks, &o);

    printf("%ld suspended tasks of each kind; times: median of %ld runs of %ld resumes\n", o.tasks,
           o.runs, o.rounds);
    printf("%-34s %-22s %s\n", "", "stackless (coro.h)", "stackful (ucontext)");
    printf("%-34s %-22zu %ld + %ld guard + %zu struct fiber\n", "declared per task (bytes)",
           sizeof(struct tick_co), o.stack_kib * 1024, page, sizeof(struct tick_fiber));
    printf("%-34s %-22ld %ld\n", "resident per task (bytes, RSS)", less_rss / o.tasks,
           ful_rss / o.tasks);
    printf("%-34s %-22.1f %.1f\n", "resident for all tasks (MiB)", less_rss / 1048576.0,
           ful_rss / 1048576.0);
    printf("%-34s %-22.1f %.1f\n", "resume+suspend, one task (ns)", less_one, ful_one);
    printf("%-34s %-22.1f %.1f\n", "resume+suspend, all in turn (ns)", less_all, ful_all);

    for (long i = 0; i < o.tasks; i++) { /* let every task run to its end, then free it */
        cos[i]->stop = true;
        tick_co(cos[i]);
        free(cos[i]);
        fs[i]->stop = true;
        fiber_resume(&fs[i]->fiber);
        fiber_fini(&fs[i]->fiber);
        free(fs[i]);
    }
    free(cos);
    free(fs);
    return 0;
}
