/* SPDX-License-Identifier: MIT */
/* aio-test-os.c: see aio-test-os.h. One version of each function for
 * Windows (Winsock, an overlapped temporary file), one for POSIX (net.c).
 */
#include "aio-test-os.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef _WIN32
#include "net.h"
#include <unistd.h>
#endif

#ifdef _WIN32
void os_sleep_ms(int ms)
{
    Sleep((DWORD)ms);
}

_Noreturn void os_die(const char *what)
{
    char text[256];

    fprintf(stderr, "aio-test: %s: %s\n", what,
            win_strerror(WSAGetLastError(), text, sizeof(text)));
    exit(1);
}

/* A listener on 127.0.0.1, any port: *port says which. */
sock os_listen_any(int *port)
{
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int len = sizeof(sin);
    sock s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);

    if (s == INVALID_SOCKET || bind(s, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
        listen(s, 4) != 0 || getsockname(s, (struct sockaddr *)&sin, &len) != 0)
        os_die("a listener on 127.0.0.1");
    *port = ntohs(sin.sin_port);
    return s;
}

sock os_connect_to(int port)
{
    struct sockaddr_in sin = {.sin_family = AF_INET,
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                              .sin_port = htons((u_short)port)};
    sock s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);

    if (s == INVALID_SOCKET || connect(s, (struct sockaddr *)&sin, sizeof(sin)) != 0)
        os_die("connect(127.0.0.1)");
    return s;
}

int os_write(sock s, const void *p, int n)
{
    return send(s, p, n, 0);
}
int os_read(sock s, void *p, int n)
{
    return recv(s, p, n, 0);
}
void os_close(sock s)
{
    closesocket(s);
}
void os_nonblocking(sock s)
{
    u_long on = 1;

    ioctlsocket(s, FIONBIO, &on);
}

/* A temporary file holding data[0..n), opened for overlapped reads (the
 * only kind a completion port reports) and deleted when closed. */
cio_fd os_temp_file(const void *data, size_t n)
{
    char dir[MAX_PATH], path[MAX_PATH];
    OVERLAPPED ov = {0};
    DWORD wrote = 0;
    HANDLE h;

    if (!GetTempPathA(sizeof(dir), dir) || !GetTempFileNameA(dir, "aio", 0, path))
        os_die("a temporary file name");
    h = CreateFileA(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, CREATE_ALWAYS,
                    FILE_ATTRIBUTE_TEMPORARY | FILE_FLAG_DELETE_ON_CLOSE | FILE_FLAG_OVERLAPPED,
                    NULL);
    if (h == INVALID_HANDLE_VALUE)
        os_die("CreateFile(a temporary file)");
    /* An overlapped handle writes through an OVERLAPPED too; wait for it
     * here, before the handle is tied to the loop's port. */
    if (!(ov.hEvent = CreateEventA(NULL, TRUE, FALSE, NULL)) ||
        (!WriteFile(h, data, (DWORD)n, NULL, &ov) && GetLastError() != ERROR_IO_PENDING) ||
        !GetOverlappedResult(h, &ov, &wrote, TRUE) || wrote != (DWORD)n)
        os_die("WriteFile(the temporary file)");
    CloseHandle(ov.hEvent);
    return (cio_fd)h;
}

void os_file_close(cio_fd fd)
{
    CloseHandle((HANDLE)fd);
}
#else
void os_sleep_ms(int ms)
{
    usleep((useconds_t)ms * 1000);
}

_Noreturn void os_die(const char *what)
{
    fprintf(stderr, "aio-test: %s: %s\n", what, strerror(errno));
    exit(1);
}

sock os_listen_any(int *port)
{
    sock s = net_listen("127.0.0.1", 0, 4);

    if (s < 0 || (*port = net_local_port(s)) < 0)
        os_die("a listener on 127.0.0.1");
    return s;
}

sock os_connect_to(int port)
{
    sock s = net_connect("127.0.0.1", port);

    if (s < 0)
        os_die("connect(127.0.0.1)");
    return s;
}

int os_write(sock s, const void *p, int n)
{
    return (int)write(s, p, (size_t)n);
}
int os_read(sock s, void *p, int n)
{
    return (int)read(s, p, (size_t)n);
}
void os_close(sock s)
{
    close(s);
}
void os_nonblocking(sock s)
{
    net_set_nonblocking(s);
}

/* A temporary file holding data[0..n), already unlinked. */
cio_fd os_temp_file(const void *data, size_t n)
{
    char path[] = "/tmp/aio-test.XXXXXX";
    int fd = mkstemp(path);

    if (fd < 0 || write(fd, data, n) != (ssize_t)n)
        os_die("a temporary file");
    unlink(path);
    return fd;
}

void os_file_close(cio_fd fd)
{
    close(fd);
}
#endif

/* A result's text: strerror(), except that Windows' C runtime has none for
 * ETIME or ECANCELED ("Unknown error"), so there the two are named here. */
const char *os_res_text(int res)
{
#ifdef _WIN32
    if (res == -ETIME || res == -ECANCELED)
        return res == -ETIME ? "timer expired" : "cancelled";
#endif
    return strerror(-res);
}
