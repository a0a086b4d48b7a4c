/* uring-allowed.c: can this process use io_uring? Exit 0 yes, 77 no (why on stdout).
 *
 * It calls io_uring_setup(2) directly, without liburing, so it also answers on
 * machines without liburing-dev. Containers and hardened kernels often refuse
 * io_uring: seccomp (Docker's default profile) gives EPERM, the
 * kernel.io_uring_disabled sysctl gives EPERM, kernels older than 5.1 ENOSYS.
 */
#include <errno.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    struct io_uring_params p;
    long fd;

    memset(&p, 0, sizeof(p));
    fd = syscall(__NR_io_uring_setup, 4, &p);
    if (fd >= 0) {
        close((int)fd);
        printf("io_uring_setup works here (features 0x%x).\n", p.features);
        return 0;
    }
    switch (errno) {
    case ENOSYS:
        printf("io_uring_setup: ENOSYS: this kernel has no io_uring (needs 5.1+).\n");
        break;
    case EPERM:
        printf("io_uring_setup: EPERM: io_uring is forbidden here (sysctl "
               "kernel.io_uring_disabled, or a seccomp filter as in Docker's default profile).\n");
        break;
    default:
        printf("io_uring_setup: %s.\n", strerror(errno));
    }
    return 77;
}
