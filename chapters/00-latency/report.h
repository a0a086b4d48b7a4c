/* SPDX-License-Identifier: MIT */
/* report.h: the table `latency` prints, as text or CSV. */
#ifndef REPORT_H
#define REPORT_H

#include <stdio.h>

#include "latency.h"

#define REPORT_L1_BYTES  (16u << 10)  /* fits in any L1 data cache (32 KiB and up) */
#define REPORT_RAM_BYTES (256u << 20) /* larger than the L3 caches of today */
#define REPORT_RAM_QUICK (64u << 20)  /* still twice most L3s, four times faster to set up */

/* The rows, in the order of the table: roughly from fastest to slowest. */
enum report_row {
    ROW_CLOCK,
    ROW_L1,
    ROW_RAM,
    ROW_RAM_HUGE,
    ROW_SYSCALL,
    ROW_CACHED,
    ROW_SWITCH,
    ROW_LOOPBACK,
    ROW_CREATE,
    ROW_UNCACHED,
    ROW_COUNT
};

struct report {
    const struct lat_cfg *cfg;
    size_t ram_bytes;     /* working set of the RAM rows */
    double ns[ROW_COUNT]; /* < 0: not measurable, and why[row] says why */
    char why[ROW_COUNT][160];
    int pinned[ROW_COUNT]; /* thread rows: both threads ran on one CPU */
    struct disk_cost disk;
    struct stack_cost stack;
};

void report_text(const struct report *rep, FILE *out);
void report_csv(const struct report *rep, FILE *out);

#endif
