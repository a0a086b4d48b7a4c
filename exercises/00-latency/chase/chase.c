/* SPDX-License-Identifier: MIT */
/* solutions/00-latency/chase/chase.c: build the random cycle that pointer chasing walks.
 *
 * `latency` times a RAM access by following a chain of pointers through a big
 * array. The chain must visit the slots in a random order (so the prefetcher
 * cannot guess the next one) and must be ONE cycle through every slot (so the
 * walk covers the whole array and never loops in a corner that fits in cache).
 * This program builds that order, next[i] = the slot after slot i, and lets
 * you look at it, check it, and time a walk through it.
 *
 * Build and run (from the repository root):
 *
 *     make -C solutions/00-latency/chase
 *     build/solutions/00-latency/chase/chase -n 8 --print         # one order
 *     build/solutions/00-latency/chase/chase -n 1000000 --check   # one cycle?
 *     build/solutions/00-latency/chase/chase -n 262144 --time     # 16 MiB walk
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "net.h"
#include "todo.h"

#define CHASE_MAX_SLOTS (1L << 26)

/* splitmix64: a tiny generator; the same seed gives the same order. */
static uint64_t chase_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A uniform random number in [0, bound); bound must be at least 1. */
static size_t chase_rand_below(uint64_t *state, size_t bound)
{
    return (size_t)(chase_rand(state) % bound);
}

/* Fill next[0..n) so that following next[] from any slot visits every slot
 * once and comes back: a single cycle, chosen uniformly at random among the
 * (n-1)! possible ones. Draw random numbers only with chase_rand_below(rng, ...). */
static void chase_one_cycle(uint32_t *next, size_t n, uint64_t *rng)
{
    TODO("fill next[] with one random cycle through all n slots (Sattolo)");
}

/* Walk from slot 0 until we come back to it. Returns the cycle's length, or 0
 * when next[] is not a permutation: the walk leaves the array, or enters a
 * loop that does not pass through slot 0. */
static size_t chase_cycle_length(const uint32_t *next, size_t n)
{
    unsigned char *seen = calloc(n, 1);
    size_t len = 0, at = 0;

    if (!seen)
        net_die(ENOMEM, "calloc(%zu)", n);
    do {
        if (at >= n || seen[at]) {
            len = 0;
            break;
        }
        seen[at] = 1;
        at = next[at];
        len++;
    } while (at != 0);
    free(seen);
    return len;
}

struct chase_node {
    struct chase_node *next;
    char pad[64 - sizeof(struct chase_node *)]; /* one node per cache line */
};

/* Link one 64-byte node per slot in the order of next[] and time the walk:
 * the median of 5 runs of 2 million dependent loads, as `latency` does. */
static double chase_time_ns(const uint32_t *next, size_t n)
{
    struct chase_node *nodes = aligned_alloc(64, n * sizeof(*nodes));
    struct chase_node *p;
    double ns[5];

    if (!nodes)
        net_die(ENOMEM, "aligned_alloc(%zu nodes)", n);
    for (size_t i = 0; i < n; i++)
        nodes[i].next = &nodes[next[i]];
    p = &nodes[0];
    for (int run = -1; run < 5; run++) { /* run -1 warms the caches up */
        int64_t t0 = clock_now_ns();

        for (long i = 0; i < 2000000; i++)
            p = p->next;
        if (run < 0)
            continue;
        ns[run] = (double)(clock_now_ns() - t0) / 2000000;
        for (int k = run; k > 0 && ns[k] < ns[k - 1]; k--) { /* insertion sort */
            double t = ns[k];
            ns[k] = ns[k - 1];
            ns[k - 1] = t;
        }
    }
    free(nodes);
    /* p is used, so the compiler must keep every load of the walk. */
    return p ? ns[2] : -1;
}

static void chase_usage(FILE *out)
{
    fprintf(out,
            "usage: chase [-n SLOTS] [-s SEED] [-r RUNS] [--print | --check | --time]\n"
            "Builds a random single-cycle order next[] over SLOTS slots.\n"
            "  -n SLOTS   number of slots, 1 to %ld (default 1024)\n"
            "  -s SEED    seed of the first order (default 1)\n"
            "  -r RUNS    build RUNS orders, from seeds SEED, SEED+1, ... (default 1)\n"
            "  --print    print each order as one line: next[0] next[1] ...\n"
            "  --check    walk each order and report its cycle (default)\n"
            "  --time     time a pointer chase over SLOTS 64-byte nodes\n",
            CHASE_MAX_SLOTS);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"print", no_argument, NULL, 'P'},
        {"check", no_argument, NULL, 'C'},
        {"time", no_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    long n = 1024, seed = 1, runs = 1;
    int opt, mode = 'C', status = 0;
    uint32_t *next;

    while ((opt = getopt_long(argc, argv, "n:s:r:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'n':
        case 's':
        case 'r':
            if (net_parse_int(optarg, opt == 's' ? 0 : 1, opt == 'n' ? CHASE_MAX_SLOTS : 1000000,
                              opt == 'n'   ? &n
                              : opt == 's' ? &seed
                                           : &runs) < 0) {
                fprintf(stderr, "chase: bad -%c '%s'\n", opt, optarg);
                chase_usage(stderr);
                return 2;
            }
            break;
        case 'P':
        case 'C':
        case 'T':
            mode = opt;
            break;
        case 'h':
            chase_usage(stdout);
            return 0;
        default:
            chase_usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "chase: unexpected argument '%s'\n", argv[optind]);
        chase_usage(stderr);
        return 2;
    }

    next = calloc((size_t)n, sizeof(*next));
    if (!next)
        net_die(ENOMEM, "calloc(%ld slots)", n);
    for (long r = 0; r < runs; r++) {
        uint64_t rng = (uint64_t)(seed + r);
        size_t len;

        chase_one_cycle(next, (size_t)n, &rng);
        if (mode == 'P') {
            for (long i = 0; i < n; i++)
                printf(i ? " %u" : "%u", next[i]);
            printf("\n");
            continue;
        }
        len = chase_cycle_length(next, (size_t)n);
        if (len != (size_t)n) {
            printf("seed %ld: slots %ld, NOT one cycle: %s\n", seed + r, n,
                   len ? "the walk from slot 0 comes back early"
                       : "next[] is not a permutation of the slots");
            status = 1;
            continue;
        }
        if (mode == 'C')
            printf("seed %ld: slots %ld, one cycle of length %zu\n", seed + r, n, len);
        else
            printf("seed %ld: %ld slots (%ld KiB): %.1f ns per hop\n", seed + r, n, n / 16,
                   chase_time_ns(next, (size_t)n));
    }
    free(next);
    return status;
}
