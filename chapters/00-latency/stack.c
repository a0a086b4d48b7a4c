/* SPDX-License-Identifier: MIT */
/* stack.c: what an idle thread costs in memory.
 *
 * A thread's stack is reserved as address space (8 MiB by default on Linux)
 * but the kernel gives it physical pages only when they are first touched.
 * A thread that blocks in read() right away touches a few pages of it. So we
 * start N threads that block on a pipe, the way a thread-per-connection server
 * parks one thread per idle client, and compare the process's VmSize (address
 * space) and VmRSS (resident memory) before and after. The kernel also keeps
 * a stack of its own for every thread; that one shows up in /proc/meminfo
 * (KernelStack), not in the process's RSS.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "latency.h"
#include "net.h"

/* ThreadSanitizer runs out of its own memory at about 8,000 live threads. */
#if defined(__SANITIZE_THREAD__)
#define STACK_MAX_THREADS 1000
#else
#define STACK_MAX_THREADS 10000
#endif

struct stack_park {
    int pipe[2];
    atomic_long started;
};

/* snippet: parked */
static void *stack__parked_thread(void *arg)
{
    struct stack_park *park = arg;
    char b;

    atomic_fetch_add(&park->started, 1);
    /* Blocks until main closes the write end: then read() returns 0. */
    while (read(park->pipe[0], &b, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}
/* end snippet */

void stack_measure(const struct lat_cfg *cfg, struct stack_cost *out)
{
    struct stack_park park;
    pthread_attr_t attr;
    struct rlimit rl;
    pthread_t *tids;
    double size0, rss0, kstack0;
    long n = cfg->quick ? 200 : STACK_MAX_THREADS;

    memset(out, 0, sizeof(*out));
    /* glibc takes the default stack size from RLIMIT_STACK at start-up
     * (`ulimit -s`), so the two usually agree. */
    if (pthread_getattr_default_np(&attr) == 0) {
        pthread_attr_getstacksize(&attr, &out->default_stack);
        pthread_attr_destroy(&attr);
    }
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        out->rlimit_stack = rl.rlim_cur;

    out->threads_wanted = n;
    tids = calloc((size_t)n, sizeof(*tids));
    if (!tids)
        net_die(ENOMEM, "calloc(%ld thread ids)", n);
    if (pipe(park.pipe) < 0)
        net_die(errno, "pipe()");
    atomic_init(&park.started, 0);

    size0 = bench_proc_bytes("/proc/self/status", "VmSize");
    rss0 = bench_proc_bytes("/proc/self/status", "VmRSS");
    kstack0 = bench_proc_bytes("/proc/meminfo", "KernelStack");
    for (out->threads = 0; out->threads < n; out->threads++) {
        int err = pthread_create(&tids[out->threads], NULL, stack__parked_thread, &park);

        if (err != 0) {
            /* ulimit -u, kernel.threads-max or memory: report what we got. */
            out->create_error = err;
            break;
        }
    }
    while (atomic_load(&park.started) < out->threads)
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    out->vmsize_delta = bench_proc_bytes("/proc/self/status", "VmSize") - size0;
    out->vmrss_delta = bench_proc_bytes("/proc/self/status", "VmRSS") - rss0;
    out->kstack_delta =
        kstack0 < 0 ? -1 : bench_proc_bytes("/proc/meminfo", "KernelStack") - kstack0;

    close(park.pipe[1]);
    for (long i = 0; i < out->threads; i++)
        pthread_join(tids[i], NULL);
    close(park.pipe[0]);
    free(tids);
}
