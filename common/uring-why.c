/* SPDX-License-Identifier: MIT */
/* uring-why.c: see uring-why.h. */
#include "uring-why.h"

#include <errno.h>
#include <linux/io_uring.h> /* IORING_SETUP_SQPOLL: the kernel's header, not liburing's */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

/* The number after `prefix` on the first line of a /proc file that starts
 * with it ("": the first line); -1 when there is none, or no such file. */
static int uring_why__proc_int(const char *path, const char *prefix)
{
    char line[256];
    size_t n = strlen(prefix);
    FILE *f = fopen(path, "r");
    int v = -1;

    while (f && fgets(line, sizeof(line), f)) {
        if (strncmp(line, prefix, n) == 0) {
            if (sscanf(line + n, "%d", &v) != 1)
                v = -1;
            break;
        }
    }
    if (f)
        fclose(f);
    return v;
}

/* The running kernel is older than major.minor (false when it cannot tell). */
static bool uring_why__before(const char *release, int major, int minor)
{
    int ma, mi;

    if (sscanf(release, "%d.%d", &ma, &mi) != 2)
        return false;
    return ma < major || (ma == major && mi < minor);
}

const char *uring_why(int err, unsigned entries, unsigned flags, char *why, size_t len)
{
    struct utsname u;
    const char *release = uname(&u) == 0 ? u.release : "?";
    int sysctl, seccomp;

    seccomp = uring_why__proc_int("/proc/self/status", "Seccomp:"); /* 2: a filter */
    if (err == -ENOSYS && seccomp == 2 && !uring_why__before(release, 5, 1)) {
        snprintf(why, len,
                 "io_uring_setup: ENOSYS: this kernel (%s) has io_uring, but a seccomp filter "
                 "answers ENOSYS for it (Podman's default profile does: run with "
                 "--security-opt seccomp=PROFILE that allows io_uring_*)",
                 release);
        return why;
    }
    if (err == -ENOSYS) {
        snprintf(why, len,
                 "io_uring_setup: ENOSYS: this kernel (%s) has no io_uring (it needs 5.1 or newer, "
                 "built with CONFIG_IO_URING)",
                 release);
        return why;
    }
    if (err == -ENOMEM && uring_why__before(release, 5, 12)) {
        snprintf(why, len,
                 "io_uring_setup(%u entries): ENOMEM: before Linux 5.12 the rings count against "
                 "the locked-memory limit (this is %s): raise ulimit -l",
                 entries, release);
        return why;
    }
    if (err != -EPERM) {
        snprintf(why, len, "io_uring_setup(%u entries, flags 0x%x): %s", entries, flags,
                 strerror(-err));
        return why;
    }
    /* EPERM: the most specific cause this process can see, first. */
    sysctl = uring_why__proc_int("/proc/sys/kernel/io_uring_disabled", ""); /* 6.6+ */
    if (sysctl == 1 || sysctl == 2)
        snprintf(why, len,
                 "io_uring_setup: EPERM: the sysctl kernel.io_uring_disabled is %d, which "
                 "forbids io_uring %s",
                 sysctl,
                 sysctl == 2 ? "to every process"
                             : "to processes without CAP_SYS_ADMIN outside kernel.io_uring_group");
    else if (seccomp == 2)
        snprintf(why, len,
                 "io_uring_setup: EPERM: a seccomp filter forbids it (Docker's default profile "
                 "does, since Docker 25: run with --security-opt seccomp=PROFILE that allows "
                 "io_uring_*)");
    else if ((flags & IORING_SETUP_SQPOLL) && uring_why__before(release, 5, 11))
        snprintf(why, len,
                 "io_uring_setup(IORING_SETUP_SQPOLL): EPERM: before Linux 5.11 SQPOLL needs "
                 "CAP_SYS_ADMIN (this is %s)",
                 release);
    else
        snprintf(why, len,
                 "io_uring_setup: EPERM: a security module or a sandbox forbids io_uring here");
    return why;
}
