/* SPDX-License-Identifier: MIT */
/* uring-probe.c: what io_uring can do on this machine, in plain words.
 *
 * io_uring grows with every kernel release, and containers often forbid it
 * altogether, so a program that uses it must ask before it relies on
 * anything. Three sources answer:
 *   - whether io_uring_setup() works at all: the sysctl
 *     kernel.io_uring_disabled (6.6+), a seccomp filter (Docker's default
 *     profile refuses the io_uring calls since Docker 25), or a kernel older
 *     than 5.1 (ENOSYS);
 *   - io_uring_params.features, filled in by io_uring_setup(): one bit per
 *     behaviour the kernel guarantees;
 *   - io_uring_get_probe() (IORING_REGISTER_PROBE, 5.6+): which opcodes this
 *     kernel knows.
 * Some capabilities are neither a feature bit nor an opcode (multishot
 * accept and recv are flags on ACCEPT and RECV), so probe-try.c tries them
 * for real, on a loopback socket and a socketpair.
 *
 * The words for a refusal (probe__refusal()) are worked out here, where
 * io_uring is taught, and they are an exercise (probe-refusal). The later
 * chapters and `make doctor` say the same with common/uring-why.c, the one
 * copy that grew from this one (it also knows SQPOLL before 5.11 and ENOMEM
 * before 5.12); this file keeps its own, because writing it is the lesson.
 *
 * Build and run, from the repository root:
 *     make -C chapters/07-io_uring-basics
 *     build/chapters/07-io_uring-basics/uring-probe
 *     build/chapters/07-io_uring-basics/uring-probe --check   # exit 0 usable, 77 not
 *
 * Exit status: 0 io_uring works here, 77 it is refused (the reason on
 * stdout), 1 another error, 2 bad arguments.
 */
#include "probe-try.h"

#include <errno.h>
#include <getopt.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define PROBE_SKIP 77

/* Opcode names, in the kernel's order (include/uapi/linux/io_uring.h), each
 * with the release that added it. Newer kernels know more than this list.
 * (Laid out in columns by hand: clang-format would put one a line.) */
/* clang-format off */
static const struct {
    const char *name, *since;
} probe__ops[] = {
    {"NOP", "5.1"},              {"READV", "5.1"},            {"WRITEV", "5.1"},
    {"FSYNC", "5.1"},            {"READ_FIXED", "5.1"},       {"WRITE_FIXED", "5.1"},
    {"POLL_ADD", "5.1"},         {"POLL_REMOVE", "5.1"},      {"SYNC_FILE_RANGE", "5.2"},
    {"SENDMSG", "5.3"},          {"RECVMSG", "5.3"},          {"TIMEOUT", "5.4"},
    {"TIMEOUT_REMOVE", "5.5"},   {"ACCEPT", "5.5"},           {"ASYNC_CANCEL", "5.5"},
    {"LINK_TIMEOUT", "5.5"},     {"CONNECT", "5.5"},          {"FALLOCATE", "5.6"},
    {"OPENAT", "5.6"},           {"CLOSE", "5.6"},            {"FILES_UPDATE", "5.6"},
    {"STATX", "5.6"},            {"READ", "5.6"},             {"WRITE", "5.6"},
    {"FADVISE", "5.6"},          {"MADVISE", "5.6"},          {"SEND", "5.6"},
    {"RECV", "5.6"},             {"OPENAT2", "5.6"},          {"EPOLL_CTL", "5.6"},
    {"SPLICE", "5.7"},           {"PROVIDE_BUFFERS", "5.7"},  {"REMOVE_BUFFERS", "5.7"},
    {"TEE", "5.8"},              {"SHUTDOWN", "5.11"},        {"RENAMEAT", "5.11"},
    {"UNLINKAT", "5.11"},        {"MKDIRAT", "5.15"},         {"SYMLINKAT", "5.15"},
    {"LINKAT", "5.15"},          {"MSG_RING", "5.18"},        {"FSETXATTR", "5.19"},
    {"SETXATTR", "5.19"},        {"FGETXATTR", "5.19"},       {"GETXATTR", "5.19"},
    {"SOCKET", "5.19"},          {"URING_CMD", "5.19"},       {"SEND_ZC", "6.0"},
    {"SENDMSG_ZC", "6.1"},       {"READ_MULTISHOT", "6.7"},   {"WAITID", "6.7"},
    {"FUTEX_WAIT", "6.7"},       {"FUTEX_WAKE", "6.7"},       {"FUTEX_WAITV", "6.7"},
    {"FIXED_FD_INSTALL", "6.8"}, {"FTRUNCATE", "6.9"},        {"BIND", "6.11"},
    {"LISTEN", "6.11"},          {"RECV_ZC", "6.15"},         {"EPOLL_WAIT", "6.15"},
    {"READV_FIXED", "6.15"},     {"WRITEV_FIXED", "6.15"},    {"PIPE", "6.16"},
};
/* clang-format on */
#define PROBE_NOPS (sizeof(probe__ops) / sizeof(probe__ops[0]))

/* io_uring_params.features, bit by bit (io_uring_setup(2)). */
static const struct {
    const char *name, *since, *meaning;
} probe__feats[] = {
    {"SINGLE_MMAP", "5.4", "the SQ and CQ rings share one mmap"},
    {"NODROP", "5.5", "a full CQ keeps completions for later instead of dropping them"},
    {"SUBMIT_STABLE", "5.5", "what an SQE points to (iovecs...) may be reused after submit"},
    {"RW_CUR_POS", "5.6", "offset -1 means the file position, as read() and write() use"},
    {"CUR_PERSONALITY", "5.6", "requests run with the credentials of the submitter"},
    {"FAST_POLL", "5.7", "a socket request that would block waits in the kernel, no thread"},
    {"POLL_32BITS", "5.9", "POLL_ADD takes all 32 epoll bits (EPOLLEXCLUSIVE)"},
    {"SQPOLL_NONFIXED", "5.11", "SQPOLL works with ordinary file descriptors"},
    {"EXT_ARG", "5.11", "io_uring_enter() can wait with a timeout"},
    {"NATIVE_WORKERS", "5.12", "async work runs on threads of this process (io-wq)"},
    {"RSRC_TAGS", "5.13", "registered files and buffers can be updated in place"},
    {"CQE_SKIP", "5.17", "IOSQE_CQE_SKIP_SUCCESS: no CQE for a request that succeeds"},
    {"LINKED_FILE", "5.17", "a linked request looks up its fd when it starts"},
    {"REG_REG_RING", "6.3", "io_uring_register() takes a registered ring fd"},
    {"RECVSEND_BUNDLE", "6.10", "one recv or send can use several provided buffers"},
    {"MIN_TIMEOUT", "6.12", "wait for a batch, but no longer than a minimum time"},
    {"RW_ATTR", "6.13", "reads and writes can carry attributes (integrity data)"},
    {"NO_IOWAIT", "6.15", "time spent waiting need not count as iowait"},
};
#define PROBE_NFEATS (sizeof(probe__feats) / sizeof(probe__feats[0]))

static void probe__usage(FILE *to)
{
    fprintf(to, "usage: uring-probe [--check]\n"
                "Print what io_uring can do here: the sysctl, the feature bits, the opcodes,\n"
                "and a few capabilities tried for real. Exit 0 if io_uring works, 77 if not.\n"
                "  -c, --check  only say whether io_uring_setup() works (exit 0 or 77)\n"
                "  -h, --help   show this help\n");
}

/* The first word after `prefix` on the first line of a /proc file that
 * starts with it, or "" when there is none (or no such file). */
static void probe__read_line(const char *path, const char *prefix, char *out, size_t len)
{
    char line[256];
    FILE *f = fopen(path, "r");

    out[0] = '\0';
    while (f && fgets(line, sizeof(line), f)) {
        if (strncmp(line, prefix, strlen(prefix)) == 0) {
            snprintf(out, len, "%s", line + strlen(prefix) + strspn(line + strlen(prefix), " \t"));
            out[strcspn(out, " \t\n")] = '\0';
            break;
        }
    }
    if (f)
        fclose(f);
}

/* Why io_uring_setup() failed, in words, from its error and what we know. */
static const char *probe__refusal(int err, const char *sysctl, const char *seccomp)
{
    /* EXERCISE BEGIN probe-refusal: say in words why io_uring_setup() failed, and what to do */
    if (err == ENOSYS && strcmp(seccomp, "2") == 0)
        return "ENOSYS: a seccomp filter answers for the kernel (Podman's default profile "
               "refuses io_uring this way: run with --security-opt seccomp=PROFILE that "
               "allows io_uring_*)";
    if (err == ENOSYS)
        return "ENOSYS: this kernel has no io_uring (it needs 5.1 or newer, built with "
               "CONFIG_IO_URING)";
    if (err == EPERM && (strcmp(sysctl, "1") == 0 || strcmp(sysctl, "2") == 0))
        return "EPERM: the sysctl kernel.io_uring_disabled forbids it (1: only CAP_SYS_ADMIN "
               "and members of kernel.io_uring_group; 2: nobody)";
    if (err == EPERM && strcmp(seccomp, "2") == 0)
        return "EPERM: a seccomp filter forbids it (Docker's default profile does, since "
               "Docker 25: run with --security-opt seccomp=PROFILE that allows io_uring_*)";
    if (err == EPERM)
        return "EPERM: forbidden here (a security module or a sandbox)";
    return strerror(err);
    /* EXERCISE END */
}

static void probe__yes_no(const char *what, const char *since, int res, const char *how)
{
    printf("  %-44s %-5s %s", what, since, res == 0 ? "yes" : "no");
    if (how && res == 0)
        printf(" (%s)", how);
    else if (res < 0)
        printf(" (%s: %s)", how ? how : "refused", strerror(-res));
    printf("\n");
}

static void probe_capabilities(struct io_uring *ring, const struct io_uring_probe *probe)
{
    int buf_ring, recv;

#define OP(op) (probe && io_uring_opcode_supported(probe, op) ? 0 : -EINVAL)
    printf("\nwhat you can use here (\"tried\": done for real just now)\n");
    probe__yes_no("read/write at an offset (OP_READ, OP_WRITE)", "5.6",
                  OP(IORING_OP_READ) | OP(IORING_OP_WRITE), NULL);
    probe__yes_no("linked requests (IOSQE_IO_LINK)", "5.3", probe_try_link(ring), "tried");
    probe__yes_no("registered buffers (READ_FIXED, WRITE_FIXED)", "5.1",
                  probe_try_registered_buffers(ring), "tried");
    probe_try_multishot_recv(&buf_ring, &recv);
    probe__yes_no("provided buffer rings (chapter 08)", "5.19", buf_ring, "tried");
    probe__yes_no("multishot accept (chapter 08)", "5.19", probe_try_multishot_accept(),
                  "tried on a loopback socket");
    probe__yes_no("multishot recv (chapter 08)", "6.0", buf_ring < 0 ? buf_ring : recv,
                  "tried on a socketpair");
    probe__yes_no("accept, connect, send, recv as requests", "5.6",
                  OP(IORING_OP_ACCEPT) | OP(IORING_OP_CONNECT) | OP(IORING_OP_SEND) |
                      OP(IORING_OP_RECV),
                  NULL);
    probe__yes_no("zero-copy send (OP_SEND_ZC)", "6.0", OP(IORING_OP_SEND_ZC), NULL);
#undef OP
}

static void probe_features(unsigned features)
{
    unsigned known = 0;

    printf("\nfeatures (io_uring_params.features = 0x%x)\n", features);
    for (unsigned i = 0; i < PROBE_NFEATS; i++) {
        printf("  %-16s %-5s %-3s  %s\n", probe__feats[i].name, probe__feats[i].since,
               features & (1u << i) ? "yes" : "no", probe__feats[i].meaning);
        known |= 1u << i;
    }
    if (features & ~known)
        printf("  and bits 0x%x, newer than this program\n", features & ~known);
}

static void probe_opcodes(const struct io_uring_probe *probe)
{
    unsigned n = 0;

    if (!probe) {
        printf("\nopcodes: this kernel cannot list them (IORING_REGISTER_PROBE needs 5.6)\n");
        return;
    }
    for (unsigned op = 0; op <= probe->last_op; op++)
        n += io_uring_opcode_supported(probe, (int)op) ? 1 : 0;
    printf("\nopcodes (%u supported; the highest this kernel knows is %u)\n", n, probe->last_op);
    for (unsigned op = 0; op <= probe->last_op; op++) {
        bool known = op < PROBE_NOPS;
        printf("  %3u %-18s %-5s %s\n", op, known ? probe__ops[op].name : "(newer)",
               known ? probe__ops[op].since : "",
               io_uring_opcode_supported(probe, (int)op) ? "yes" : "no");
    }
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"check", no_argument, NULL, 'c'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    struct io_uring_params p = {0};
    struct io_uring_probe *probe;
    struct io_uring ring;
    struct utsname u;
    char sysctl[16], seccomp[16];
    bool check = false;
    int opt, ret;

    opterr = 0;
    while ((opt = getopt_long(argc, argv, "ch", longopts, NULL)) != -1) {
        if (opt == 'c') {
            check = true;
        } else if (opt == 'h') {
            probe__usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "uring-probe: unknown option %s\n", argv[optind - 1]);
            probe__usage(stderr);
            return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "uring-probe: unexpected argument %s\n", argv[optind]);
        probe__usage(stderr);
        return 2;
    }
    uname(&u);
    probe__read_line("/proc/sys/kernel/io_uring_disabled", "", sysctl, sizeof(sysctl));
    probe__read_line("/proc/self/status", "Seccomp:", seccomp, sizeof(seccomp));
    ret = io_uring_queue_init_params(8, &ring, &p);
    if (check) {
        /* EXERCISE BEGIN probe-refusal: one line: refused (and why, exit 77) or works (exit 0) */
        if (ret < 0) {
            printf("io_uring is not usable here: io_uring_setup: %s\n",
                   probe__refusal(-ret, sysctl, seccomp));
            return PROBE_SKIP;
        }
        printf("io_uring works here (Linux %s, features 0x%x)\n", u.release, p.features);
        io_uring_queue_exit(&ring);
        return 0;
        /* EXERCISE END */
    }

    printf("io_uring on this machine\n");
    printf("  kernel:                   Linux %s %s\n", u.release, u.machine);
    if (*sysctl)
        printf("  kernel.io_uring_disabled: %s (%s)\n", sysctl,
               strcmp(sysctl, "0") == 0   ? "every process may create rings"
               : strcmp(sysctl, "1") == 0 ? "only CAP_SYS_ADMIN and kernel.io_uring_group"
                                          : "nobody may create rings");
    else
        printf("  kernel.io_uring_disabled: absent (the switch exists since 6.6)\n");
    printf("  seccomp of this process:  %s (%s)\n", *seccomp ? seccomp : "?",
           strcmp(seccomp, "0") == 0 ? "no filter" : "a filter decides which calls are allowed");
    if (ret < 0) {
        printf("  io_uring_setup():         refused: %s\n", probe__refusal(-ret, sysctl, seccomp));
        return PROBE_SKIP;
    }
    printf("  io_uring_setup():         works: %u SQ entries, %u CQ entries\n", p.sq_entries,
           p.cq_entries);
    probe_features(p.features);
    probe = io_uring_get_probe_ring(&ring);
    probe_capabilities(&ring, probe);
    probe_opcodes(probe);
    if (probe)
        io_uring_free_probe(probe);
    io_uring_queue_exit(&ring);
    return 0;
}
