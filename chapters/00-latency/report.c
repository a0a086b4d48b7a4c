/* SPDX-License-Identifier: MIT */
/* report.c: print the measurements as a table or as CSV.
 *
 * Nothing is measured here. The text table gives each time with its ratio to
 * one RAM access, then the memory an idle thread costs, then the ratios in
 * words and the usual folklore figures next to what this machine showed.
 */
#include <stdio.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "report.h"

static const struct {
    const char *key;   /* CSV name: stable, tests and scripts rely on it */
    const char *label; /* table text */
} report__rows[ROW_COUNT] = {
    [ROW_CLOCK] = {"clock_gettime", "clock_gettime (vDSO, no syscall)"},
    [ROW_L1] = {"l1_hit", "L1 hit (chase in 16 KiB)"},
    [ROW_RAM] = {"ram_access", "RAM access (chase in %zu MiB, 4 KiB pages)"},
    [ROW_RAM_HUGE] = {"ram_access_huge", "RAM access (chase in %zu MiB, 2 MiB pages)"},
    [ROW_SYSCALL] = {"syscall", "syscall (getppid)"},
    [ROW_CACHED] = {"page_cache_read", "page-cache read (4 KiB)"},
    [ROW_SWITCH] = {"thread_switch", "thread switch (pipe ping-pong, one way)"},
    [ROW_LOOPBACK] = {"loopback_rtt", "loopback TCP round trip (1 byte)"},
    [ROW_CREATE] = {"thread_create", "thread create + join"},
    [ROW_UNCACHED] = {"uncached_read", "uncached read (4 KiB)"},
};

/* "AMD EPYC, 2 CPUs, Linux 6.1.0 x86_64, 23.5 GiB RAM" */
static void report__machine(char *buf, size_t size)
{
    char model[128] = "unknown CPU", line[256];
    struct utsname u;
    struct sysinfo si;
    double ram = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");

    while (f && fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');
        if (colon && strncmp(line, "model name", 10) == 0) {
            snprintf(model, sizeof(model), "%s", colon + 2);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    }
    if (f)
        fclose(f);
    if (uname(&u) < 0)
        memset(&u, 0, sizeof(u));
    if (sysinfo(&si) == 0)
        ram = (double)si.totalram * si.mem_unit / (1 << 30);
    snprintf(buf, size, "%s, %ld CPUs, %s %s %s, %.1f GiB RAM", model,
             sysconf(_SC_NPROCESSORS_ONLN), u.sysname, u.release, u.machine, ram);
}

static const char *report__time(char *buf, size_t size, double ns)
{
    static const char *units[] = {"ns", "µs", "ms", "s"};
    int u = 0;

    while (ns >= 1000 && u < 3) {
        ns /= 1000;
        u++;
    }
    snprintf(buf, size, ns < 10 ? "%.1f %s" : "%.0f %s", ns, units[u]);
    return buf;
}

static const char *report__bytes(char *buf, size_t size, double bytes)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = bytes < 0 ? -bytes : bytes;
    int u = 0;

    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, size, v < 10 && u > 0 ? "%.1f %s" : "%.0f %s", bytes < 0 ? -v : v, units[u]);
    return buf;
}

/* 0.004, 0.08, 1.8, 1,100: enough digits to compare, no more. */
static const char *report__ratio(char *buf, size_t size, double x)
{
    long n = (long)(x + 0.5);

    if (x < 0.01)
        snprintf(buf, size, "%.3f", x);
    else if (x < 0.1)
        snprintf(buf, size, "%.2f", x);
    else if (x < 10)
        snprintf(buf, size, "%.1f", x);
    else if (n < 1000)
        snprintf(buf, size, "%ld", n);
    else if (n < 1000000)
        snprintf(buf, size, "%ld,%03ld", n / 1000, n % 1000);
    else
        snprintf(buf, size, "%ld,%03ld,%03ld", n / 1000000, n / 1000 % 1000, n % 1000);
    return buf;
}

/* printf's widths count bytes; "µs" is 3 bytes and 2 columns. */
static void report__pad(FILE *out, const char *s, int width, int right)
{
    int cols = 0;

    for (const char *p = s; *p; p++)
        cols += ((unsigned char)*p & 0xc0) != 0x80;
    if (right)
        fprintf(out, "%*s%s", width > cols ? width - cols : 0, "", s);
    else
        fprintf(out, "%s%*s", s, width > cols ? width - cols : 0, "");
}

static void report__label(const struct report *rep, int row, char *buf, size_t size)
{
    if (row == ROW_RAM || row == ROW_RAM_HUGE)
        snprintf(buf, size, report__rows[row].label, rep->ram_bytes >> 20);
    else if (row == ROW_CACHED)
        snprintf(buf, size, "page-cache read (4 KiB of a %zu MiB file)",
                 rep->disk.file_bytes >> 20);
    else if (row == ROW_UNCACHED && rep->ns[row] >= 0)
        snprintf(buf, size, "uncached read (4 KiB, %s)", rep->disk.method);
    else
        snprintf(buf, size, "%s", report__rows[row].label);
}

static void report__words(const struct report *rep, FILE *out)
{
    const double *ns = rep->ns;
    const struct stack_cost *s = &rep->stack;
    char a[32], b[32], c[32];
    double per = s->threads > 0 ? 1.0 / (double)s->threads : 0;

    fprintf(out, "\nwhat the ratios say\n");
    fprintf(out, "  a syscall costs %s RAM accesses; a thread switch costs %s syscalls\n",
            report__ratio(a, sizeof(a), ns[ROW_SYSCALL] / ns[ROW_RAM]),
            report__ratio(b, sizeof(b), ns[ROW_SWITCH] / ns[ROW_SYSCALL]));
    fprintf(out, "  a loopback round trip costs %s syscalls; a new thread costs %s syscalls\n",
            report__ratio(a, sizeof(a), ns[ROW_LOOPBACK] / ns[ROW_SYSCALL]),
            report__ratio(b, sizeof(b), ns[ROW_CREATE] / ns[ROW_SYSCALL]));
    if (ns[ROW_UNCACHED] >= 0)
        fprintf(out, "  a thread blocked on one uncached read (%s) could have made %s syscalls\n",
                report__time(a, sizeof(a), ns[ROW_UNCACHED]),
                report__ratio(b, sizeof(b), ns[ROW_UNCACHED] / ns[ROW_SYSCALL]));
    fprintf(out, "  10,000 idle threads: %s of address space, %s resident",
            report__bytes(a, sizeof(a), s->vmsize_delta * per * 10000),
            report__bytes(b, sizeof(b), s->vmrss_delta * per * 10000));
    if (s->kstack_delta >= 0)
        fprintf(out, ", %s of kernel stacks",
                report__bytes(c, sizeof(c), s->kstack_delta * per * 10000));
    fprintf(out, "%s\n", s->threads == 10000 ? "" : " (scaled)");

    fprintf(out, "\nfolklore vs this machine\n");
    fprintf(out, "  \"RAM ~100 ns\"      here %s for a random access",
            report__time(a, sizeof(a), ns[ROW_RAM]));
    if (ns[ROW_RAM_HUGE] >= 0)
        fprintf(out, ", %s with fewer TLB misses (2 MiB pages)",
                report__time(b, sizeof(b), ns[ROW_RAM_HUGE]));
    fprintf(out, "\n");
    if (ns[ROW_UNCACHED] >= 0)
        fprintf(out, "  \"SSD ~100 µs\"      here %s (4 KiB read from this disk, %s)\n",
                report__time(a, sizeof(a), ns[ROW_UNCACHED]), rep->disk.method);
    else
        fprintf(out, "  \"SSD ~100 µs\"      not measured here (see the uncached read row)\n");
    fprintf(out,
            "  \"network ~100 ms\"  here %s over loopback; 100 ms is distance (light in fibre\n"
            "                     needs 1 ms per 100 km there and back), not the network stack\n",
            report__time(a, sizeof(a), ns[ROW_LOOPBACK]));
}

static void report__mem_line(FILE *out, const struct stack_cost *s, const char *what, double bytes,
                             const char *suffix)
{
    char label[96], count[32], total[32], each[32];

    snprintf(label, sizeof(label), "%s idle threads: %s",
             report__ratio(count, sizeof(count), (double)s->threads), what);
    report__pad(out, label, 44, 0);
    report__pad(out, report__bytes(total, sizeof(total), bytes), 10, 1);
    report__pad(out, report__bytes(each, sizeof(each), s->threads ? bytes / s->threads : 0), 12, 1);
    fprintf(out, "%s\n", suffix);
}

void report_text(const struct report *rep, FILE *out)
{
    const struct stack_cost *s = &rep->stack;
    char machine[256], label[96], t[32], r[32];

    report__machine(machine, sizeof(machine));
    fprintf(out, "machine  %s\n", machine);
    fprintf(out, "files    %s (%s)\n", rep->cfg->dir, disk_fs_name(rep->cfg->dir));
    fprintf(out, "mode     %s, median of %d runs\n\n", rep->cfg->quick ? "quick" : "full",
            rep->cfg->reps);

    report__pad(out, "", 44, 0);
    fprintf(out, "      time  RAM accesses\n");
    for (int row = 0; row < ROW_COUNT; row++) {
        report__label(rep, row, label, sizeof(label));
        report__pad(out, label, 44, 0);
        if (rep->ns[row] < 0) {
            fprintf(out, "  not measurable here (%s)\n", rep->why[row]);
            continue;
        }
        report__pad(out, report__time(t, sizeof(t), rep->ns[row]), 10, 1);
        report__pad(out, report__ratio(r, sizeof(r), rep->ns[row] / rep->ns[ROW_RAM]), 14, 1);
        fprintf(out, "%s\n",
                (row == ROW_SWITCH || row == ROW_CREATE) && !rep->pinned[row] ? "  (not pinned)"
                                                                              : "");
    }

    fprintf(out, "\n");
    report__pad(out, "memory", 44, 0);
    fprintf(out, "      size  per thread\n");
    report__pad(out, "default thread stack (virtual)", 44, 0);
    report__pad(out, report__bytes(t, sizeof(t), (double)s->default_stack), 10, 1);
    fprintf(out, "  (RLIMIT_STACK %s)\n",
            s->rlimit_stack ? report__bytes(r, sizeof(r), (double)s->rlimit_stack) : "unlimited");
    report__mem_line(out, s, "address space (VmSize)", s->vmsize_delta, "");
    report__mem_line(out, s, "resident (VmRSS)", s->vmrss_delta, "");
    if (s->kstack_delta >= 0)
        report__mem_line(out, s, "kernel stacks", s->kstack_delta, "  (system-wide)");
    if (s->create_error)
        fprintf(out, "(only %ld of %ld threads started: pthread_create: %s)\n", s->threads,
                s->threads_wanted, strerror(s->create_error));
    report__words(rep, out);
}

/* CSV fields never contain a comma: notes use ';' instead. */
static void report__csv_row(FILE *out, const char *name, double value, const char *unit,
                            double x_ram, const char *note)
{
    char clean[256];

    snprintf(clean, sizeof(clean), "%s", note ? note : "");
    for (char *p = clean; *p; p++)
        if (*p == ',' || *p == '\n' || *p == '"')
            *p = ';';
    fprintf(out, "%s,", name);
    if (value >= 0)
        fprintf(out, strcmp(unit, "ns") == 0 ? "%.2f" : "%.0f", value);
    fprintf(out, ",%s,", unit);
    if (x_ram >= 0)
        fprintf(out, "%.4f", x_ram);
    fprintf(out, ",%s\n", clean);
}

void report_csv(const struct report *rep, FILE *out)
{
    const struct stack_cost *s = &rep->stack;
    double per = s->threads > 0 ? 1.0 / (double)s->threads : 0;
    char machine[256], label[96], note[256];

    report__machine(machine, sizeof(machine));
    fprintf(out, "name,value,unit,x_ram,note\n");
    report__csv_row(out, "machine", -1, "text", -1, machine);
    for (int row = 0; row < ROW_COUNT; row++) {
        double ns = rep->ns[row];

        report__label(rep, row, label, sizeof(label));
        if (ns < 0)
            snprintf(note, sizeof(note), "not measurable here (%s)", rep->why[row]);
        else
            snprintf(note, sizeof(note), "%s", label);
        report__csv_row(out, report__rows[row].key, ns, "ns", ns < 0 ? -1 : ns / rep->ns[ROW_RAM],
                        note);
    }
    report__csv_row(out, "default_stack", (double)s->default_stack, "bytes", -1,
                    "pthread default stack size (virtual)");
    report__csv_row(out, "rlimit_stack", s->rlimit_stack ? (double)s->rlimit_stack : -1, "bytes",
                    -1, s->rlimit_stack ? "RLIMIT_STACK soft limit" : "RLIMIT_STACK unlimited");
    snprintf(note, sizeof(note), "%s", s->create_error ? strerror(s->create_error) : "");
    report__csv_row(out, "idle_threads", (double)s->threads, "count", -1, note);
    report__csv_row(out, "idle_vmsize_per_thread", s->vmsize_delta * per, "bytes", -1,
                    "address space added per idle thread (VmSize)");
    report__csv_row(out, "idle_vmrss_per_thread", s->vmrss_delta * per, "bytes", -1,
                    "resident memory added per idle thread (VmRSS)");
    report__csv_row(out, "idle_kstack_per_thread", s->kstack_delta * per, "bytes", -1,
                    "kernel stack per thread (KernelStack in /proc/meminfo; system-wide)");
}
