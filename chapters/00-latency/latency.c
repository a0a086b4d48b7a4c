/* SPDX-License-Identifier: MIT */
/* latency.c: measure the time scales of this machine.
 *
 * Prints one table: an L1 cache hit, a RAM access, a syscall, a thread switch,
 * a read from the page cache and one from the device, a loopback TCP round
 * trip, a thread creation, each with its ratio to one RAM access; then what an
 * idle thread costs in memory. Every later chapter leans on these figures:
 * they are why a blocked thread is waste and why 10,000 threads hurt.
 *
 * Build and run (from the repository root):
 *
 *     make -C chapters/00-latency
 *     build/chapters/00-latency/latency            # about 15 s
 *     build/chapters/00-latency/latency -q         # quick: fewer iterations
 *     build/chapters/00-latency/latency -d /var/tmp --csv
 *
 * -d DIR picks where the test file for the disk figures goes (default: the
 * current directory). It must be on a real disk for the uncached read: /tmp
 * is tmpfs on many systems, and tmpfs has no device to read from.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "latency.h"
#include "net.h"
#include "report.h"

static void latency__usage(FILE *out)
{
    fprintf(out, "usage: latency [-q] [-d DIR] [--csv] [-h]\n"
                 "Measures memory, syscall, thread, disk and loopback latencies on this machine.\n"
                 "  -q, --quick    fewer iterations (about 2 s instead of 15)\n"
                 "  -d, --dir DIR  directory for the disk test file (default: .);\n"
                 "                 on tmpfs (often /tmp) no uncached read is possible\n"
                 "      --csv      machine-readable output: name,value,unit,x_ram,note\n"
                 "  -h, --help     this help\n");
}

static void latency__parse(int argc, char **argv, struct lat_cfg *cfg, int *csv)
{
    static const struct option longopts[] = {
        {"quick", no_argument, NULL, 'q'},
        {"dir", required_argument, NULL, 'd'},
        {"csv", no_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct stat st;
    int opt;

    cfg->quick = 0;
    cfg->dir = ".";
    *csv = 0;
    while ((opt = getopt_long(argc, argv, "qd:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'q':
            cfg->quick = 1;
            break;
        case 'd':
            cfg->dir = optarg;
            break;
        case 'c':
            *csv = 1;
            break;
        case 'h':
            latency__usage(stdout);
            exit(0);
        default:
            latency__usage(stderr);
            exit(2);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "latency: unexpected argument '%s'\n", argv[optind]);
        latency__usage(stderr);
        exit(2);
    }
    cfg->reps = cfg->quick ? 3 : 7;

    /* Check the directory now, not after ten seconds of measuring. */
    if (stat(cfg->dir, &st) < 0)
        net_die(errno, "latency: -d %s", cfg->dir);
    if (!S_ISDIR(st.st_mode))
        net_die(ENOTDIR, "latency: -d %s", cfg->dir);
    if (access(cfg->dir, W_OK | X_OK) < 0)
        net_die(errno, "latency: -d %s: cannot create the test file there", cfg->dir);
}

/* Say what is being measured when someone is watching the terminal. */
static void latency__progress(const char *what)
{
    static int tty = -1;

    if (tty < 0)
        tty = isatty(STDERR_FILENO);
    if (tty)
        fprintf(stderr, "\r\033[Kmeasuring %s...", what ? what : "");
    if (tty && !what)
        fprintf(stderr, "\r\033[K");
}

int main(int argc, char **argv)
{
    struct lat_cfg cfg;
    struct report rep;
    int csv;

    latency__parse(argc, argv, &cfg, &csv);
    signal(SIGPIPE, SIG_IGN); /* a dead peer must give EPIPE, not kill us */
    memset(&rep, 0, sizeof(rep));
    rep.cfg = &cfg;

    latency__progress("the clock");
    rep.ns[ROW_CLOCK] = kernel_clock_ns(&cfg);
    latency__progress("L1 hits");
    rep.ns[ROW_L1] = chase_ns(&cfg, REPORT_L1_BYTES, 0, rep.why[ROW_L1], sizeof(rep.why[0]));
    latency__progress("RAM accesses");
    rep.ram_bytes = cfg.quick ? REPORT_RAM_QUICK : REPORT_RAM_BYTES;
    rep.ns[ROW_RAM] = chase_ns(&cfg, rep.ram_bytes, 0, rep.why[ROW_RAM], sizeof(rep.why[0]));
    rep.ns[ROW_RAM_HUGE] =
        chase_ns(&cfg, rep.ram_bytes, 1, rep.why[ROW_RAM_HUGE], sizeof(rep.why[0]));
    latency__progress("syscalls");
    rep.ns[ROW_SYSCALL] = kernel_syscall_ns(&cfg);
    latency__progress("thread switches");
    rep.ns[ROW_SWITCH] = kernel_switch_ns(&cfg, &rep.pinned[ROW_SWITCH]);
    latency__progress("thread creation");
    rep.ns[ROW_CREATE] = kernel_thread_create_ns(&cfg, &rep.pinned[ROW_CREATE]);
    latency__progress("file reads");
    disk_measure(&cfg, &rep.disk);
    rep.ns[ROW_CACHED] = rep.disk.cached_ns;
    rep.ns[ROW_UNCACHED] = rep.disk.uncached_ns;
    snprintf(rep.why[ROW_UNCACHED], sizeof(rep.why[0]), "%s", rep.disk.why);
    latency__progress("loopback TCP");
    rep.ns[ROW_LOOPBACK] = loopback_rtt_ns(&cfg);
    latency__progress("idle threads");
    stack_measure(&cfg, &rep.stack);
    latency__progress(NULL);

    if (csv)
        report_csv(&rep, stdout);
    else
        report_text(&rep, stdout);
    return fflush(stdout) == 0 ? 0 : 1;
}
