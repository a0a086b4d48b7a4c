/* SPDX-License-Identifier: MIT */
/* uring-allowed.c: can this process use io_uring? Exit 0 yes, 77 no (why on stdout).
 *
 * It calls io_uring_setup(2) directly, without liburing, so it also answers on
 * machines without liburing-dev. Containers and hardened kernels often refuse
 * io_uring: why, in words, is common/uring-why.c's to say. doctor.sh and the
 * tests compile this file alone with a bare `gcc FILE`, so it takes that
 * diagnosis in as source rather than from the course's library.
 */
#include "../uring-why.c"

#include <errno.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    struct io_uring_params p;
    char why[512];
    long fd;

    memset(&p, 0, sizeof(p));
    fd = syscall(__NR_io_uring_setup, 4, &p);
    if (fd >= 0) {
        close((int)fd);
        printf("io_uring_setup works here (features 0x%x).\n", p.features);
        return 0;
    }
    printf("%s\n", uring_why(-errno, 4, 0, why, sizeof(why)));
    return 77;
}
