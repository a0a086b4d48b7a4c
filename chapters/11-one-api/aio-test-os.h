/* SPDX-License-Identifier: MIT */
/* aio-test-os.h: what aio-test needs that differs between POSIX and
 * Windows, so that aio-test.c itself is the same on both: a socket's type,
 * a loopback connection, reads and writes on it, a temporary file, sleeping,
 * dying with the system's reason, and the text of a result. aio-test-os.c
 * has one version of each for each system.
 */
#ifndef CH11_AIO_TEST_OS_H
#define CH11_AIO_TEST_OS_H

#include "cio/cio.h"

#include <stddef.h>

#ifdef _WIN32
typedef SOCKET sock; /* cio.h brought in common/win/win.h, and with it Winsock */
#define SHUT_WR SD_SEND
#else
#include <sys/socket.h>
typedef int sock;
#endif

void os_sleep_ms(int ms);
/* "aio-test: what: the system's reason" on stderr, exit 1. */
_Noreturn void os_die(const char *what);
/* A listener on 127.0.0.1, any port: *port says which. */
sock os_listen_any(int *port);
sock os_connect_to(int port);
int os_write(sock s, const void *p, int n);
int os_read(sock s, void *p, int n);
void os_close(sock s);
void os_nonblocking(sock s);
/* A temporary file holding data[0..n), gone once closed (on Windows
 * opened for overlapped reads, the only kind a completion port reports). */
cio_fd os_temp_file(const void *data, size_t n);
void os_file_close(cio_fd fd);
/* A result's text: strerror(-res), with names for the two that Windows' C
 * runtime lacks. */
const char *os_res_text(int res);

#endif
