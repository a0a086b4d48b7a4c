/* SPDX-License-Identifier: MIT */
/* echo-uring-sqpoll.c: echo-uring with a kernel thread polling the submission
 * queue (IORING_SETUP_SQPOLL).
 *
 * The same server (uring-server.c) with one setup flag. A kernel thread,
 * iou-sqp-PID, watches the submission queue and picks up new SQEs by
 * itself, so submitting costs no system call; the program enters the kernel
 * only to sleep when no completion is waiting. The price: the thread spins
 * on a CPU for sq_thread_idle milliseconds (-I, 1000 by default) after the
 * last request before it sleeps, and that CPU time is this process's.
 *
 *     make -C chapters/08-io_uring-echo
 *     build/chapters/08-io_uring-echo/echo-uring-sqpoll -p 0 [-I MS] [-v]
 *     ps -L -o tid,comm,time -p PID        the iou-sqp thread and its CPU time
 *
 * Linux 6.0 or newer, like echo-uring (SQPOLL itself works without
 * privileges since 5.11); -K only checks.
 */
#include "uring-server.h"

#include <liburing.h>

int main(int argc, char **argv)
{
    return userver_main(argc, argv, "echo-uring-sqpoll",
                        "echo-uring with a kernel thread polling the submission queue (SQPOLL).",
                        IORING_SETUP_SQPOLL);
}
