/* SPDX-License-Identifier: MIT */
/* load-hist.c: see load-hist.h. */
#include "load-hist.h"

#include <math.h>

static unsigned load_hist__index(uint64_t v)
{
    unsigned top, shift;

    if (v < LOAD_HIST_SUB)
        return (unsigned)v;
    if (v >> LOAD_HIST_MAX_BITS)
        return LOAD_HIST_BUCKETS - 1;
    /* Keep the top SUB_BITS + 1 bits of v: the highest one picks the power of
     * two (the row), the SUB_BITS below it the bucket within the row. */
    top = 63u - (unsigned)__builtin_clzll(v);
    shift = top - LOAD_HIST_SUB_BITS;
    return (shift + 1) * LOAD_HIST_SUB + (unsigned)((v >> shift) - LOAD_HIST_SUB);
}

/* The middle of bucket i: the inverse of load_hist__index, give or take half a bucket. */
static uint64_t load_hist__value(unsigned i)
{
    unsigned shift;
    uint64_t low;

    if (i < LOAD_HIST_SUB)
        return i;
    shift = i / LOAD_HIST_SUB - 1;
    low = (uint64_t)(LOAD_HIST_SUB + i % LOAD_HIST_SUB) << shift;
    return low + ((1ULL << shift) - 1) / 2;
}

void load_hist_record(struct load_hist *h, uint64_t ns)
{
    h->counts[load_hist__index(ns)]++;
    h->total++;
    if (ns > h->max)
        h->max = ns;
}

uint64_t load_hist_percentile(const struct load_hist *h, double pct)
{
    uint64_t rank, seen = 0;

    if (h->total == 0)
        return 0;
    /* The nearest-rank definition: the smallest sample with at least pct% of
     * the samples at or below it. */
    rank = (uint64_t)ceil(pct / 100.0 * (double)h->total);
    if (rank < 1)
        rank = 1;
    for (unsigned i = 0; i < LOAD_HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t v = load_hist__value(i);
            return v < h->max ? v : h->max;
        }
    }
    return h->max;
}
