/* SPDX-License-Identifier: MIT */
/* latency.h: what the measuring files of `latency` share.
 *
 * Each measurement lives in its own file (chase.c, kernel.c, stack.c, disk.c,
 * loopback.c) and returns nanoseconds, or bytes for the memory figures. The
 * timing helpers below, on common/clock.h's clock_now_ns(), are the only
 * clock the program uses.
 */
#ifndef LATENCY_H
#define LATENCY_H

#include <stddef.h>
#include <stdint.h>

/* How hard to try: full mode for the table in the README, quick mode (-q) for
 * the tests. Every measurement reports the median of `reps` repetitions. */
struct lat_cfg {
    int quick;
    int reps;
    const char *dir; /* -d: where the file for the disk figures goes */
};

/* --- bench.c: medians, timed batches, a small random generator --- */

double bench_median(double *values, size_t n); /* sorts values in place */

/* Runs fn(ctx, iters) `reps` times, times each run, returns the median of the
 * per-iteration times in ns. fn runs a whole batch, so the measured loop is a
 * tight loop with no indirect call per iteration. */
typedef void (*bench_fn)(void *ctx, long iters);
double bench_batch_ns(bench_fn fn, void *ctx, long iters, int reps);

/* splitmix64: tiny, fast, good enough to shuffle; the seed makes runs repeatable. */
uint64_t bench_rand(uint64_t *state);
size_t bench_rand_below(uint64_t *state, size_t bound); /* in [0, bound) */

/* The number on the "key:  123 kB" line of a /proc file, in bytes; -1 if absent. */
double bench_proc_bytes(const char *path, const char *key);

/* --- the measurements --- */

/* chase.c: ns per dependent load. huge asks for 2 MiB pages; when the kernel
 * does not give them, returns -1 and says why. */
double chase_ns(const struct lat_cfg *cfg, size_t working_set_bytes, int huge, char *why,
                size_t why_size);

double kernel_clock_ns(const struct lat_cfg *cfg);   /* kernel.c: clock_gettime */
double kernel_syscall_ns(const struct lat_cfg *cfg); /* a real syscall */
/* One-way thread switch over a pair of pipes, and thread create + join, both
 * on one CPU; *pinned says whether pinning the threads to it worked. */
double kernel_switch_ns(const struct lat_cfg *cfg, int *pinned);
double kernel_thread_create_ns(const struct lat_cfg *cfg, int *pinned);

struct stack_cost {
    size_t default_stack; /* pthread default stack size, bytes */
    size_t rlimit_stack;  /* RLIMIT_STACK soft limit, bytes (0: unlimited) */
    long threads;         /* idle threads actually started */
    long threads_wanted;  /* how many were asked for */
    int create_error;     /* errno of the pthread_create that stopped us, or 0 */
    double vmsize_delta;  /* bytes of address space they added */
    double vmrss_delta;   /* bytes of resident memory they added */
    double kstack_delta;  /* bytes of kernel stacks (system-wide /proc/meminfo) */
};
void stack_measure(const struct lat_cfg *cfg, struct stack_cost *out); /* stack.c */

struct disk_cost {
    size_t file_bytes;  /* size of the test file */
    size_t read_bytes;  /* size of each timed read */
    double cached_ns;   /* pread from the page cache */
    double uncached_ns; /* pread that goes to the device; < 0 when not measurable */
    char method[64];    /* how the uncached read avoided the cache */
    char why[160];      /* why it could not, when uncached_ns < 0 */
};
void disk_measure(const struct lat_cfg *cfg, struct disk_cost *out); /* disk.c */
const char *disk_fs_name(const char *dir);                           /* "ext4", "tmpfs", ... */

double loopback_rtt_ns(const struct lat_cfg *cfg); /* loopback.c */

#endif
