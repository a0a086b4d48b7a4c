/* SPDX-License-Identifier: MIT */
/* chase.c: one memory access, timed by pointer chasing.
 *
 * Timing one load is impossible: it takes a nanosecond and reading the clock
 * takes tens of them. So we time millions of loads in a row and divide. The trap is
 * that a modern CPU overlaps independent loads and a prefetcher fetches the
 * next cache lines before they are asked for: walk an array in order and you
 * measure memory bandwidth, not latency.
 *
 * Pointer chasing defeats both. Every node holds the address of the next one,
 * so the CPU cannot start load N+1 before load N has returned its value: the
 * loads are strictly one after another. The nodes are linked in a random
 * order, so there is no stride for a prefetcher to learn. And the order is a
 * single cycle through every node (Sattolo's algorithm), so the walk touches
 * the whole working set instead of looping in a short cycle that fits in cache.
 *
 * Each node fills one 64-byte cache line, so every hop is a different line.
 *
 * A random hop in 256 MiB also misses the TLB, the CPU's small cache of
 * virtual-to-physical translations, and must walk the page tables first. With
 * 2 MiB pages there are 512 times fewer translations to cache, so the second
 * RAM row (MADV_HUGEPAGE) shows how much of the first was the TLB.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "latency.h"
#include "net.h"

#define CHASE_LINE 64
#define CHASE_HUGE ((uintptr_t)2 << 20)

struct chase_node {
    struct chase_node *next;
    char pad[CHASE_LINE - sizeof(struct chase_node *)];
};

struct chase {
    struct chase_node *nodes;
    size_t n;
    struct chase_node *pos; /* where the walk is; stored so the loads stay live */
};

/* snippet: sattolo */
/* A random order with exactly one cycle: next[i] is the slot after slot i.
 * Sattolo's algorithm is the Fisher-Yates shuffle with one change: j is drawn
 * below i, never equal to it, and that turns "any permutation" into "one
 * cycle through every slot". */
static void chase__one_cycle(uint32_t *next, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        next[i] = (uint32_t)i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = bench_rand_below(&seed, i);
        uint32_t tmp = next[i];

        next[i] = next[j];
        next[j] = tmp;
    }
}
/* end snippet */

/* snippet: walk */
static void chase__walk(void *ctx, long hops)
{
    struct chase *c = ctx;
    struct chase_node *p = c->pos;

    /* Each load's address is the previous load's result: no overlap possible. */
    for (long i = 0; i < hops; i++)
        p = p->next;
    c->pos = p;
}
/* end snippet */

/* Bytes of this process's anonymous memory that sit in 2 MiB pages. */
static double chase__huge_bytes(void)
{
    return bench_proc_bytes("/proc/self/smaps_rollup", "AnonHugePages");
}

double chase_ns(const struct lat_cfg *cfg, size_t working_set_bytes, int huge, char *why,
                size_t why_size)
{
    struct chase c;
    size_t bytes = working_set_bytes / CHASE_LINE * CHASE_LINE;
    size_t map_bytes = bytes + (huge ? CHASE_HUGE : 0);
    double huge0 = huge ? chase__huge_bytes() : 0, ns = -1;
    uint32_t *order;
    char *map;
    long hops;

    /* mmap, not malloc: the memory goes back to the kernel at munmap, so a
     * 256 MiB walk does not stay in the process afterwards. */
    map = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        net_die(errno, "mmap(%zu bytes)", map_bytes);
    c.nodes = (struct chase_node *)map;
    if (huge) /* transparent huge pages come only in aligned 2 MiB blocks */
        c.nodes = (struct chase_node *)(((uintptr_t)map + CHASE_HUGE - 1) & ~(CHASE_HUGE - 1));
    /* Ask for one page size or the other: with THP set to "always" the kernel
     * would otherwise pick 2 MiB pages on its own. */
    madvise(c.nodes, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    c.n = bytes / CHASE_LINE;
    order = malloc(c.n * sizeof(*order));
    if (!order)
        net_die(ENOMEM, "malloc(%zu slots)", c.n);
    /* Shuffle a compact index array (4 bytes a slot, mostly cache-resident),
     * then link the nodes in that order in one sequential pass. */
    chase__one_cycle(order, c.n, 42);
    for (size_t i = 0; i < c.n; i++)
        c.nodes[i].next = &c.nodes[order[i]];
    free(order);
    c.pos = &c.nodes[0];

    if (huge && chase__huge_bytes() - huge0 < (double)bytes / 2) {
        snprintf(why, why_size,
                 "the kernel gave no 2 MiB pages: see "
                 "/sys/kernel/mm/transparent_hugepage/enabled");
        goto out;
    }
    /* A small working set is walked many times over, so it is in L1 after the
     * first lap; a big one is never cached, warm-up or not. */
    hops = bytes <= (1u << 20) ? 4000000 : 1000000;
    if (cfg->quick)
        hops /= 8;
    chase__walk(&c, (long)c.n < hops ? (long)c.n : hops);
    ns = bench_batch_ns(chase__walk, &c, hops, cfg->reps);
out:
    munmap(map, map_bytes);
    return ns;
}
