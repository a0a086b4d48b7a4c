/* SPDX-License-Identifier: MIT */
/* kernel.c: what crossing into the kernel costs.
 *
 * Four figures, from cheapest to dearest: reading the clock (no kernel entry
 * at all, thanks to the vDSO), a syscall that does nothing, a switch from one
 * thread to another, and creating and joining a thread.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "latency.h"
#include "net.h"

static void kernel__clock_loop(void *ctx, long iters)
{
    unsigned long *sink = ctx; /* keeps every call's result live */
    struct timespec ts;

    for (long i = 0; i < iters; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        *sink += (unsigned long)ts.tv_nsec;
    }
}

double kernel_clock_ns(const struct lat_cfg *cfg)
{
    unsigned long sink = 0;

    return bench_batch_ns(kernel__clock_loop, &sink, cfg->quick ? 100000 : 1000000, cfg->reps);
}

/* snippet: syscall */
static void kernel__syscall_loop(void *ctx, long iters)
{
    long *sink = ctx;

    /* syscall(SYS_getppid), not getppid(): the raw call goes to the kernel
     * every time, whatever a C library might cache. getppid does no work in
     * the kernel, so this is the price of the round trip alone: save the
     * registers, switch to the kernel stack, dispatch, apply the speculative-
     * execution mitigations, and come back. */
    for (long i = 0; i < iters; i++)
        *sink += syscall(SYS_getppid);
}
/* end snippet */

double kernel_syscall_ns(const struct lat_cfg *cfg)
{
    long sink = 0;

    return bench_batch_ns(kernel__syscall_loop, &sink, cfg->quick ? 100000 : 1000000, cfg->reps);
}

/* Pin the calling thread to the CPU it is running on; threads it creates
 * inherit the mask. Returns 1 if pinned (and *saved holds the old mask). */
static int kernel__pin_here(cpu_set_t *saved)
{
    cpu_set_t one;
    int cpu = sched_getcpu();

    if (cpu < 0 || sched_getaffinity(0, sizeof(*saved), saved) < 0)
        return 0;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof(one), &one) == 0;
}

static void kernel__unpin(int pinned, const cpu_set_t *saved)
{
    if (pinned)
        sched_setaffinity(0, sizeof(*saved), saved);
}

/* Thread switch: two threads pass one byte back and forth over two pipes.
 *
 *     main                       peer
 *     write(ping[1]) ─────────▶  read(ping[0]) returns
 *     read(pong[0]) blocks       write(pong[1])
 *     read(pong[0]) returns ◀──
 *
 * One round trip is two switches, each made of a write() that wakes the other
 * thread, the switch itself, and the read() returning on the other side. Both
 * threads are pinned to one CPU so that what we time is a switch on that CPU,
 * not an interrupt sent to wake another core. */
struct kernel_pingpong {
    int ping[2];
    int pong[2];
};

static void *kernel__pong(void *arg)
{
    struct kernel_pingpong *pp = arg;
    char b;

    /* Until main closes its end of ping: read() returns 0 and we are done. */
    while (net_read_exact(pp->ping[0], &b, 1) == 1)
        if (net_write_all(pp->pong[1], &b, 1) < 0)
            break;
    return NULL;
}

/* snippet: pingpong */
static void kernel__ping_loop(void *ctx, long round_trips)
{
    struct kernel_pingpong *pp = ctx;
    char b = 'x';

    for (long i = 0; i < round_trips; i++) {
        ssize_t w = net_write_all(pp->ping[1], &b, 1);

        if (w < 0)
            net_die((int)-w, "write(fd=%d)", pp->ping[1]);
        if (net_read_exact(pp->pong[0], &b, 1) != 1)
            net_die(EPIPE, "read(fd=%d)", pp->pong[0]);
    }
}
/* end snippet */

double kernel_switch_ns(const struct lat_cfg *cfg, int *pinned)
{
    struct kernel_pingpong pp;
    cpu_set_t saved;
    pthread_t peer;
    long trips = cfg->quick ? 5000 : 20000;
    double ns;
    int err;

    if (pipe(pp.ping) < 0 || pipe(pp.pong) < 0)
        net_die(errno, "pipe()");
    *pinned = kernel__pin_here(&saved);
    if ((err = pthread_create(&peer, NULL, kernel__pong, &pp)) != 0)
        net_die(err, "pthread_create(pipe peer)");

    kernel__ping_loop(&pp, trips / 10); /* both threads running, caches warm */
    ns = bench_batch_ns(kernel__ping_loop, &pp, trips, cfg->reps) / 2;

    close(pp.ping[1]);
    pthread_join(peer, NULL);
    close(pp.ping[0]);
    close(pp.pong[0]);
    close(pp.pong[1]);
    kernel__unpin(*pinned, &saved);
    return ns;
}

static void *kernel__nothing(void *arg)
{
    return arg;
}

static void kernel__create_loop(void *ctx, long iters)
{
    (void)ctx;
    for (long i = 0; i < iters; i++) {
        pthread_t t;
        int err = pthread_create(&t, NULL, kernel__nothing, NULL);

        if (err != 0)
            net_die(err, "pthread_create(thread %ld)", i);
        pthread_join(t, NULL);
    }
}

double kernel_thread_create_ns(const struct lat_cfg *cfg, int *pinned)
{
    cpu_set_t saved;
    double ns;

    /* glibc keeps the stacks of joined threads in a cache and reuses them, so
     * after the first thread this is clone() + scheduling + exit + join, not
     * a fresh 8 MiB mmap each time: the cheapest a new thread ever gets.
     * Pinned, like the switch: left free, the new thread starts on another
     * CPU, and waking an idle CPU (an idle virtual CPU, in a VM) can cost far
     * more than the thread itself. */
    *pinned = kernel__pin_here(&saved);
    ns = bench_batch_ns(kernel__create_loop, NULL, cfg->quick ? 200 : 2000, cfg->reps);
    kernel__unpin(*pinned, &saved);
    return ns;
}
