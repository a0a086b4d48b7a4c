/* SPDX-License-Identifier: MIT */
/* load-hist.h: a latency histogram of fixed size, for echo-load.
 *
 * Storing every sample of a long run would take memory without bound (a
 * million requests a second is 8 MB a second), so samples are counted in
 * log-linear buckets instead, the way HdrHistogram does: every power of two
 * is cut into 128 equal buckets. Values below 256 ns are exact; above, a
 * bucket is at most 1/128 of its value wide, and reporting its middle is
 * within 0.4% of any sample in it. 4352 buckets cover 1 ns to 18 minutes in
 * 34 KiB; longer samples count in the last bucket. The maximum is kept exactly.
 */
#ifndef COURSE_LOAD_HIST_H
#define COURSE_LOAD_HIST_H

#include <stdint.h>

#define LOAD_HIST_SUB_BITS 7
#define LOAD_HIST_SUB      (1u << LOAD_HIST_SUB_BITS)
#define LOAD_HIST_MAX_BITS 40 /* 2^40 ns is about 18 minutes */
#define LOAD_HIST_BUCKETS  ((LOAD_HIST_MAX_BITS - LOAD_HIST_SUB_BITS + 1) * LOAD_HIST_SUB)

struct load_hist {
    uint64_t counts[LOAD_HIST_BUCKETS];
    uint64_t total; /* samples recorded */
    uint64_t max;   /* the largest sample, exactly */
};

/* Count one sample (in nanoseconds). A zeroed struct is an empty histogram. */
void load_hist_record(struct load_hist *h, uint64_t ns);

/* The value below which `pct` percent of the samples lie (0 when empty). */
uint64_t load_hist_percentile(const struct load_hist *h, double pct);

#endif
