/* SPDX-License-Identifier: MIT */
/* echo-uring.c: an io_uring echo server with multishot requests and a provided
 * buffer ring.
 *
 * One multishot accept serves every client. Each connection has one
 * multishot recv, which takes a buffer from a shared pool only when bytes
 * arrive; that very buffer is sent back, and returns to the pool when the
 * send completes. The loop submits and reaps in batches: under load, one
 * io_uring_enter() call covers many messages. The server is in
 * uring-server.c, shared with echo-uring-sqpoll.
 *
 *     make -C chapters/08-io_uring-echo
 *     build/chapters/08-io_uring-echo/echo-uring -p 0 [-B COUNT] [-s BYTES] [-v]
 *     build/common/tools/echo-client -p PORT hello      (from another terminal)
 *
 * Linux 6.0 or newer (multishot recv; multishot accept and buffer rings
 * are 5.19). On an older kernel it says which feature is missing and exits
 * with status 77; -K only checks.
 */
#include "uring-server.h"

int main(int argc, char **argv)
{
    return userver_main(argc, argv, "echo-uring",
                        "An io_uring echo server: multishot accept and recv, a provided buffer "
                        "ring, batched submission.",
                        0);
}
