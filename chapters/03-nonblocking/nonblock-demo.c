/* SPDX-License-Identifier: MIT */
/* nonblock-demo.c: O_NONBLOCK and EAGAIN, one step at a time, on a real
 * loopback TCP connection.
 *
 *     make -C chapters/03-nonblocking
 *     build/chapters/03-nonblocking/nonblock-demo [-d DIR]
 *
 * A non-blocking fd never puts the caller to sleep. When the kernel cannot do
 * any of the work right now, the call fails at once with EAGAIN (the same
 * number as EWOULDBLOCK on Linux); when it can do only part of it, it does
 * that part and says how much. The steps:
 *
 *   1. read() with nothing to read: -1 EAGAIN, immediately.
 *   2. write() to a peer that never reads: accepted until the kernel's buffers
 *      are full (the byte count printed is what this kernel really took), then
 *      EAGAIN, and poll() says "not writable".
 *   3. The peer reads; poll() reports POLLOUT; a write larger than the free
 *      space returns a short count.
 *   4. connect() returns EINPROGRESS; the socket turns writable when the
 *      handshake is over, and SO_ERROR says whether it succeeded.
 *   5. A regular file is always "ready" for poll(), even when its data is on
 *      the disk and read() will wait for it. DIR (default /var/tmp) holds the
 *      temporary file; use one on a real disk.
 *
 * Every step checks that the kernel did what the text says; if it did not,
 * the program says so and exits 1.
 */
#include "clock.h"
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHUNK      (64 * 1024)
#define BIG_WRITE  (64 * 1024 * 1024) /* more than any socket buffer can hold */
#define FILE_BYTES (1024 * 1024)

static char chunk[CHUNK];

static const char *errname(int err)
{
    const char *name = strerrorname_np(err);
    return name ? name : "?";
}

/* Is fd writable within ms milliseconds? */
static int writable_within(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int n;

    while ((n = poll(&p, 1, ms)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        net_die(errno, "poll(fd=%d, POLLOUT)", fd);
    return n == 1 && (p.revents & POLLOUT);
}

/* snippet: read-eagain */
static void step_read_empty(int fd)
{
    char byte;
    long long t0 = clock_now_us();
    ssize_t n = read(fd, &byte, 1);
    int err = errno;
    long long took = clock_now_us() - t0;

    if (n != -1 || err != EAGAIN)
        net_unexpected("read() on an empty non-blocking socket returned %zd (%s)", n,
                       n < 0 ? errname(err) : "data");
    printf("  read(fd=%d, 1) = -1 %s after %lld us: nothing to read, and the call did not wait\n",
           fd, errname(err), took);
}
/* end snippet */

/* snippet: fill */
/* Write until the kernel refuses. Returns the bytes it took. */
static size_t step_fill(int fd)
{
    size_t total = 0, calls = 0, last = 0;
    ssize_t n;

    for (int round = 0; round < 20; round++) {
        while ((n = write(fd, chunk, sizeof(chunk))) > 0 || (n < 0 && errno == EINTR)) {
            if (n > 0) {
                total += (size_t)n;
                calls++;
                last = (size_t)n;
            }
        }
        if (errno != EAGAIN)
            net_die(errno, "write(fd=%d, %d)", fd, CHUNK);
        /* EAGAIN: full. Unless an ACK freed room meanwhile, poll() agrees. */
        if (!writable_within(fd, 200)) {
            printf("  write() took %zu bytes in %zu calls (the last one %zu of %d), then -1 %s\n",
                   total, calls, last, CHUNK, errname(EAGAIN));
            printf("  poll(POLLOUT, 200 ms) = 0: not writable while the peer reads nothing\n");
            return total;
        }
    }
    net_unexpected("the socket stayed writable after %zu bytes to a peer that does not read",
                   total);
}
/* end snippet */

static void print_buffer_sizes(int fd, int peer)
{
    int snd = 0, rcv = 0;
    socklen_t len = sizeof(int);

    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, &len);
    len = sizeof(int);
    getsockopt(peer, SOL_SOCKET, SO_RCVBUF, &rcv, &len);
    printf("  the bytes wait in our send buffer (SO_SNDBUF %d) and the peer's receive buffer\n"
           "  (SO_RCVBUF %d); both sizes count the kernel's bookkeeping too, and grow with use\n",
           snd, rcv);
}

/* snippet: short-write */
static void step_drain_then_short_write(int fd, int peer, size_t filled)
{
    size_t drained = 0;
    char *big;
    ssize_t n;

    /* The peer reads, 64 KiB at a time, until poll() says we may write. */
    while (!writable_within(fd, 10)) {
        if ((n = read(peer, chunk, sizeof(chunk))) <= 0)
            net_die(n < 0 ? errno : EIO, "read(fd=%d)", peer);
        drained += (size_t)n;
        if (drained >= filled)
            net_unexpected("the peer read all %zu bytes and poll() never reported POLLOUT",
                           drained);
    }
    printf("  the peer read %zu bytes, then poll() reported POLLOUT\n", drained);

    if (!(big = calloc(1, BIG_WRITE)))
        net_die(ENOMEM, "calloc(%d)", BIG_WRITE);
    while ((n = write(fd, big, BIG_WRITE)) < 0 && errno == EINTR)
        ;
    if (n <= 0 || n >= BIG_WRITE)
        net_unexpected("write(fd=%d, %d) after POLLOUT returned %zd (%s)", fd, BIG_WRITE, n,
                       n < 0 ? errname(errno) : "expected a short count");
    printf("  write(fd=%d, %d) = %zd: a short write; the kernel took what fit\n", fd, BIG_WRITE, n);
    n = write(fd, big, BIG_WRITE);
    printf("  write(fd=%d, %d) again = %zd %s: full again\n", fd, BIG_WRITE, n,
           n < 0 ? errname(errno) : "");
    free(big);
    if (n >= 0)
        net_unexpected("a write right after a short write succeeded");
}
/* end snippet */

/* snippet: connect */
/* connect() on a non-blocking socket returns before the handshake is done.
 * Writable means "finished", not "succeeded": SO_ERROR tells which. */
static void step_connect(int port, int expect_err)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    long long t0;
    int err = 0, ok;
    socklen_t len = sizeof(err);

    if (fd < 0)
        net_die(errno, "socket()");
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    t0 = clock_now_us();
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno != EINPROGRESS)
        net_unexpected("non-blocking connect(127.0.0.1:%d) did not return EINPROGRESS", port);
    printf("  connect(fd=%d, 127.0.0.1:%d) = -1 %s: the handshake goes on without us\n", fd, port,
           errname(errno));
    ok = writable_within(fd, 5000);
    if (!ok || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        net_unexpected("the connecting socket did not become writable within 5 s");
    printf("  poll(POLLOUT): writable after %lld us; getsockopt(SO_ERROR) = %s\n",
           clock_now_us() - t0, err ? errname(err) : "0 (connected)");
    close(fd);
    if (err != expect_err)
        net_unexpected("SO_ERROR was %s, expected %s", errname(err), errname(expect_err));
}
/* end snippet */

/* A port where nothing listens: a socket bound to it (so no one else takes
 * it) but not listening. A SYN to it is answered with a reset. */
static int closed_port(int *holder)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        net_die(errno, "socket/bind(127.0.0.1:0)");
    *holder = fd;
    return net_local_port(fd);
}

static size_t resident_pages(int fd, size_t len)
{
    size_t pages = (len + 4095) / 4096, in = 0;
    unsigned char *vec = malloc(pages);
    void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);

    if (!vec || map == MAP_FAILED || mincore(map, len, vec) < 0)
        net_die(errno ? errno : ENOMEM, "mmap/mincore(fd=%d)", fd);
    for (size_t i = 0; i < pages; i++)
        in += vec[i] & 1;
    munmap(map, len);
    free(vec);
    return in;
}

/* snippet: file */
static void step_regular_file(const char *dir)
{
    char path[4096];
    struct pollfd p = {.events = POLLIN | POLLOUT};
    long long t0;
    size_t in;
    int n;

    snprintf(path, sizeof(path), "%s/nonblock-demo.XXXXXX", dir);
    if ((p.fd = mkostemp(path, O_CLOEXEC)) < 0)
        net_die(errno, "mkstemp(%s)", path);
    unlink(path);
    for (int i = 0; i < FILE_BYTES / CHUNK; i++)
        if (net_write_all(p.fd, chunk, CHUNK) < 0)
            net_die(errno, "write(%s)", path);
    /* Push the data to the disk and drop it from the page cache. */
    if (fdatasync(p.fd) < 0 || posix_fadvise(p.fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
        net_die(errno, "fdatasync/posix_fadvise(%s)", path);
    in = resident_pages(p.fd, FILE_BYTES);
    fcntl(p.fd, F_SETFL, O_NONBLOCK); /* accepted, and ignored for regular files */

    t0 = clock_now_us();
    n = poll(&p, 1, 5000);
    printf("  poll(file, POLLIN|POLLOUT, 5 s) = %d, revents%s%s, after %lld us; %zu of %d pages\n"
           "  of the file were in memory (%s)\n",
           n, p.revents & POLLIN ? " POLLIN" : "", p.revents & POLLOUT ? " POLLOUT" : "",
           clock_now_us() - t0, in, FILE_BYTES / 4096, dir);
    if (n != 1 || (p.revents & (POLLIN | POLLOUT)) != (POLLIN | POLLOUT))
        net_unexpected("poll() on a regular file did not report it ready at once");
    for (int i = 0; i < 2; i++) {
        t0 = clock_now_us();
        if (pread(p.fd, chunk, CHUNK, 0) != CHUNK)
            net_die(errno, "pread(%s)", path);
        printf("  pread(file, %d) %s took %lld us: %s\n", CHUNK, i ? "again" : "then",
               clock_now_us() - t0,
               i ? "from memory this time" : "O_NONBLOCK or not, it never says EAGAIN");
    }
    close(p.fd);
}
/* end snippet */

static int on_opt(int opt, const char *arg, void *ctx)
{
    if (opt != 'd')
        return -1;
    *(const char **)ctx = arg;
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = "/var/tmp";
    struct net_cli_extra extra = {
        .optstring = "d:",
        .usage = "  -d DIR    folder for the step 5 temporary file (default /var/tmp)\n",
        .on_opt = on_opt,
        .ctx = &dir,
    };
    struct net_cli cli;
    int lfd, fd, peer, holder, err;
    size_t filled;

    net_cli_parse(&cli, argc, argv, "Shows O_NONBLOCK, EAGAIN, short writes and EINPROGRESS.",
                  &extra);
    signal(SIGPIPE, SIG_IGN);
    if ((lfd = net_listen("127.0.0.1", 0, 16)) < 0)
        net_die(-lfd, "listen(127.0.0.1:0)");
    if ((fd = net_connect("127.0.0.1", net_local_port(lfd))) < 0)
        net_die(-fd, "connect(127.0.0.1:%d)", net_local_port(lfd));
    if ((peer = accept(lfd, NULL, NULL)) < 0)
        net_die(errno, "accept(fd=%d)", lfd);
    if ((err = net_set_nonblocking(fd)) < 0)
        net_die(-err, "fcntl(fd=%d, F_SETFL, O_NONBLOCK)", fd);
    printf("a loopback TCP connection: our end fd=%d (O_NONBLOCK), the peer's end fd=%d\n", fd,
           peer);

    printf("step 1: read() on a non-blocking socket with nothing to read\n");
    step_read_empty(fd);
    printf("step 2: write() to a peer that never reads\n");
    filled = step_fill(fd);
    print_buffer_sizes(fd, peer);
    printf("step 3: the peer reads some; the socket is writable again, with limited room\n");
    step_drain_then_short_write(fd, peer, filled);
    close(fd);
    close(peer);

    printf("step 4: connect() on a non-blocking socket\n");
    step_connect(net_local_port(lfd), 0);
    printf("  and to a port where nothing listens:\n");
    step_connect(closed_port(&holder), ECONNREFUSED);
    close(holder);
    close(lfd);

    printf("step 5: poll() on a regular file\n");
    step_regular_file(dir);
    printf("every step behaved as described\n");
    return 0;
}
