/* SPDX-License-Identifier: MIT */
/* bench.c: medians, timed batches and the random generator.
 *
 * Every figure `latency` prints goes through bench_batch_ns() or
 * bench_median(): time a batch with clock_now_ns() (common/clock.h says why
 * that clock, and why reading it is cheap), repeat it, keep the median. The
 * median, not the mean, because a loaded machine adds noise in one direction
 * only: an interrupt or another process can make a run slower, never faster,
 * and one slow run drags a mean but not a median.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "todo.h"
#include "clock.h"
#include "latency.h"

static int bench__cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double bench_median(double *values, size_t n)
{
    TODO("sort the values, return the middle one (two middles: their mean)");
}

double bench_batch_ns(bench_fn fn, void *ctx, long iters, int reps)
{
    double per_iter[32] = {0};

    if (reps < 1)
        reps = 1;
    if (reps > 32)
        reps = 32;
    for (int r = 0; r < reps; r++) {
        int64_t t0 = clock_now_ns();
        fn(ctx, iters);
        per_iter[r] = (double)(clock_now_ns() - t0) / (double)iters;
    }
    return bench_median(per_iter, (size_t)reps);
}

uint64_t bench_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

size_t bench_rand_below(uint64_t *state, size_t bound)
{
    /* The modulo bias is below bound / 2^64: invisible at these sizes. */
    return (size_t)(bench_rand(state) % bound);
}

double bench_proc_bytes(const char *path, const char *key)
{
    char line[256];
    size_t klen = strlen(key);
    double kb = -1;
    FILE *f = fopen(path, "r");

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            kb = strtod(line + klen + 1, NULL);
            break;
        }
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}
