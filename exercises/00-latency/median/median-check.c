/* SPDX-License-Identifier: MIT */
/* median-check: the promises of bench_median() (chapters/00-latency/bench.c),
 * checked one by one, and what they are for: bench_batch_ns() keeps the
 * median of its runs, so one slow run must not move a figure.
 *
 * Exists for exercise 00-latency/median alone. Prints "ok - CHECK" or
 * "not ok - CHECK: what went wrong" per check; exit 0 when all pass, 1
 * otherwise.
 *
 *     make -C exercises/00-latency/median
 *     build/exercises/00-latency/median/median-check
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "latency.h"

static int failures;

static void check(int ok, const char *what, const char *fmt, double got, double want)
{
    if (ok) {
        printf("ok - %s\n", what);
        return;
    }
    printf("not ok - %s: ", what);
    printf(fmt, got, want);
    printf("\n");
    failures++;
}

static void check_median(const char *what, double *values, size_t n, double want)
{
    double got = bench_median(values, n);

    check(fabs(got - want) < 1e-9, what, "got %g, expected %g", got, want);
}

/* A batch whose runs take `run_ns` each, except run number `slow_run`,
 * which takes `slow_ns`: an interrupt, or another process on the CPU. */
struct fake_batch {
    int run;
    int slow_run;
    int64_t run_ns, slow_ns;
};

static void fake_batch(void *ctx, long iters)
{
    struct fake_batch *b = ctx;
    int64_t until = clock_now_ns() + (b->run == b->slow_run ? b->slow_ns : b->run_ns);

    (void)iters;
    b->run++;
    while (clock_now_ns() < until)
        ;
}

int main(void)
{
    double one[] = {7};
    double three[] = {5, 1, 3};
    double four[] = {4, 1, 3, 2};
    double spike[] = {10, 10, 1000000, 10, 10};
    double dup[] = {2, 2, 9, 9, 2, 9};
    /* ns per iteration, as bench_batch_ns() hands them over: apart by less than 1 */
    double near[] = {2.5, 2.2, 2.9, 2.1, 2.7};
    double inplace[] = {9, 1, 8, 2, 7, 3};
    double big[1001];
    uint64_t rng = 42;

    check_median("no value: -1", one, 0, -1);
    check_median("one value: that value", one, 1, 7);
    check_median("3 values, unsorted: the middle one once sorted", three, 3, 3);
    check_median("4 values, unsorted: the mean of the two middle ones", four, 4, 2.5);
    check_median("one huge value among 5 does not move the median", spike, 5, 10);
    check_median("6 values with repeats: the mean of the two middle ones", dup, 6, 5.5);
    check_median("5 values less than 1 apart: the middle one once sorted", near, 5, 2.5);
    bench_median(inplace, 6);
    int sorted = 1;
    for (size_t i = 1; i < 6; i++)
        sorted &= inplace[i - 1] <= inplace[i];
    check(sorted, "the values are sorted in place, as latency.h promises",
          "got %g first, %g last: not sorted", inplace[0], inplace[5]);
    /* 0..1000 shuffled: the median is 500 */
    for (size_t i = 0; i < 1001; i++)
        big[i] = (double)i;
    for (size_t i = 1000; i > 0; i--) {
        size_t j = bench_rand_below(&rng, i + 1);
        double t = big[i];
        big[i] = big[j];
        big[j] = t;
    }
    check_median("1001 shuffled values 0..1000: 500", big, 1001, 500);

    /* bench_batch_ns(): 5 runs of 2 ms over 1000 iterations (2000 ns each),
     * one of which takes 400 ms. The mean would say at least 81,600 ns; the
     * median, about 2000. A loaded machine stretches every run by however
     * long the process waits for a CPU (tens of milliseconds, with four
     * test files on two cores), so the bound is not a fixed figure: it is
     * what a median cannot exceed. The whole call took `total`; the slow
     * run at least 400 ms of it; the median of 5 runs is the third
     * shortest, at most half the sum of the four shortest, so at most
     * (total - 400 ms) / 2. The mean, total / 5, is above that bound
     * whenever the four short runs took less than 266 ms in all. */
    struct fake_batch b = {.slow_run = 2, .run_ns = 2000000, .slow_ns = 400000000};
    int64_t t0 = clock_now_ns();
    double ns = bench_batch_ns(fake_batch, &b, 1000, 5);
    double total = (double)(clock_now_ns() - t0);
    double bound = (total - (double)b.slow_ns) / 2 / 1000; /* per iteration */
    check(ns >= 1900 && ns <= bound,
          "bench_batch_ns: one run 200 times slower than the others does not move the figure",
          "got %.0f ns per iteration; a median of these runs is at most %.0f", ns, bound);

    return failures ? 1 : 0;
}
