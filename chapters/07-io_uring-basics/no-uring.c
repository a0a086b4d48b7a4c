/* SPDX-License-Identifier: MIT */
/* no-uring.c: run a command where io_uring is forbidden, as in a container.
 *
 * Docker's default seccomp profile (since Docker 25), many sandboxes and the
 * sysctl kernel.io_uring_disabled make io_uring_setup(2) fail with EPERM. A
 * program that uses io_uring must then say so clearly, or fall back to
 * something else. This tool installs the same kind of seccomp filter on
 * itself (io_uring_setup, io_uring_enter, io_uring_register: EPERM; every
 * other system call: allowed) and then runs the command, which inherits it.
 * With -e ENOSYS the filter answers ENOSYS instead, as Podman's default
 * profile does for every system call it does not list (containers/common
 * pull request #573): the program then sees what a kernel without io_uring
 * would say, and only the Seccomp: line of /proc/self/status tells them apart.
 *
 * Build and run, from the repository root:
 *     make -C chapters/07-io_uring-basics
 *     build/chapters/07-io_uring-basics/no-uring build/chapters/07-io_uring-basics/uring-probe
 *
 * A seccomp filter cannot be removed, only added to; PR_SET_NO_NEW_PRIVS
 * (which the kernel requires of an unprivileged process installing one) also
 * stops set-user-ID programs from gaining privileges under it.
 * Exit status: the command's, or 1 if the filter could not be installed or
 * the command not started, 2 bad arguments.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NO_URING_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NO_URING_ARCH AUDIT_ARCH_AARCH64
#else
#define NO_URING_ARCH 0 /* unknown here: no_uring_install() refuses to guess */
#endif

/* snippet: filter */
static int no_uring_install(int err)
{
    struct sock_filter insns[] = {
        /* A call made through another ABI (i386 code on x86-64) has other
         * numbers: this filter is about native calls, so let it through. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NO_URING_ARCH, 0, 5),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_register, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof(insns) / sizeof(insns[0]), .filter = insns};

    if (NO_URING_ARCH == 0)
        return -ENOSYS; /* add this architecture's AUDIT_ARCH_* value above */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -errno;
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
        return -errno;
    return 0;
}
/* end snippet */

int main(int argc, char **argv)
{
    int ret, err = EPERM;

    if (argc == 2 && strcmp(argv[1], "-e") == 0) {
        fprintf(stderr, "no-uring: -e needs EPERM or ENOSYS, then a command\n");
        return 2;
    }
    if (argc >= 3 && strcmp(argv[1], "-e") == 0) {
        if (strcmp(argv[2], "ENOSYS") == 0)
            err = ENOSYS;
        else if (strcmp(argv[2], "EPERM") != 0) {
            fprintf(stderr, "no-uring: -e %s: EPERM or ENOSYS\n", argv[2]);
            return 2;
        }
        argc -= 2;
        argv += 2;
    }
    if (argc < 2 || strcmp(argv[1], "-h") == 0) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: no-uring [-e EPERM|ENOSYS] COMMAND [ARG...]\n"
                "Run COMMAND with io_uring_setup/enter/register failing with EPERM, as under\n"
                "Docker's default seccomp profile (-e ENOSYS: as under Podman's).\n");
        return argc < 2 ? 2 : 0;
    }
    if ((ret = no_uring_install(err)) < 0) {
        fprintf(stderr, "no-uring: installing the seccomp filter: %s\n", strerror(-ret));
        return 1;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "no-uring: %s: %s\n", argv[1], strerror(errno));
    return 1;
}
