/* SPDX-License-Identifier: MIT */
/* net.h: the helpers every server and client in the course uses.
 *
 * The server contract (every chapter, every solution):
 *   -b ADDR   address to bind, default 127.0.0.1 (never 0.0.0.0 unless asked)
 *   -p PORT   port, default 8080; 0 lets the kernel pick a free one
 *   -h        usage on stdout, exit 0
 *   The first line on stdout, flushed, is "listening on ADDR:PORT" with the real port.
 *   SIGINT/SIGTERM: close the listener and every connection, exit 0.
 *   Bad arguments: usage on stderr, exit 2.
 *
 * Library-style functions return -errno on failure, like the kernel's own
 * io_uring completions do, so callers can print strerror(-ret).
 */
#ifndef COURSE_NET_H
#define COURSE_NET_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#ifdef __linux__
#include <sys/signalfd.h> /* SFD_NONBLOCK, for net_signalfd() */
#endif

#define NET_DEFAULT_ADDR "127.0.0.1"
#define NET_DEFAULT_PORT 8080

struct net_cli {
    const char *addr; /* -b */
    int port;         /* -p */
};

/* Extra options a program adds to -b/-p/-h. `optstring` uses getopt(3) syntax
 * ("w:" for -w N); `usage` is appended to the usage text, one line per option;
 * `on_opt` returns 0 if it accepted the option, -1 to print usage and exit 2. */
struct net_cli_extra {
    const char *optstring;
    const char *usage;
    int (*on_opt)(int opt, const char *arg, void *ctx);
    void *ctx;
};

/* Parse the server contract's options. Exits 0 on -h, 2 on bad arguments
 * (with the usage on stderr). `extra` may be NULL. Positional arguments are
 * refused. */
void net_cli_parse(struct net_cli *cli, int argc, char **argv, const char *summary,
                   const struct net_cli_extra *extra);

/* The command line of a demonstration that takes no argument: returns when
 * there is none; with -h, prints "usage: PROG" and `summary` (one line) on
 * stdout and exits 0; with anything else, the same on stderr and exits 2. */
void net_cli_none(int argc, char **argv, const char *summary);

/* Parse a decimal integer in [min, max]; returns 0 or -EINVAL. */
int net_parse_int(const char *s, long min, long max, long *out);

/* socket + SO_REUSEADDR + bind + listen. Returns the listening fd or -errno. */
int net_listen(const char *addr, int port, int backlog);

/* Blocking connect to addr:port. Returns the fd or -errno. */
int net_connect(const char *addr, int port);

/* The port a bound socket really got (useful after binding port 0), or -errno. */
int net_local_port(int fd);

/* Print "listening on ADDR:PORT" for a listening socket and flush stdout. */
void net_announce(int listen_fd);

/* net_listen() then net_announce(), or print the error on stderr and exit 1. */
int net_listen_or_die(const struct net_cli *cli, int backlog);

int net_set_nonblocking(int fd);
int net_set_nodelay(int fd);

/* Write all `len` bytes, retrying short writes and EINTR. On a non-blocking
 * fd it also waits (with poll) when the kernel says EAGAIN. Returns len or
 * -errno. Once a shutdown signal has set net_stop_requested, an interrupted
 * write is not retried: it returns -EINTR, so a server blocked writing to a
 * client that never reads can still stop. */
ssize_t net_write_all(int fd, const void *data, size_t len);

/* Read exactly `len` bytes unless EOF comes first, retrying short reads and
 * EINTR (but not after a shutdown signal: then -EINTR). Returns the number
 * read (less than len only at EOF) or -errno. */
ssize_t net_read_exact(int fd, void *data, size_t len);

/* Shutdown signals.
 *
 * net_on_shutdown_signals() installs a handler for SIGINT and SIGTERM that sets
 * net_stop_requested, WITHOUT SA_RESTART, so a blocking accept()/read() returns
 * -1/EINTR and the program can look at the flag. It also ignores SIGPIPE, so a
 * write to a reset connection fails with EPIPE instead of killing the server.
 *
 * The flag is a lock-free atomic rather than the classic volatile sig_atomic_t:
 * both are safe to set in a handler, but only the atomic is also safe to read
 * from other threads (volatile gives no ordering between threads). */
extern atomic_int net_stop_requested;
void net_on_shutdown_signals(void);

/* A flag alone cannot stop a thread that sleeps in accept(), read() or
 * write(): a signal that lands after the loop tested the flag and before
 * the thread entered the call sets the flag, and the call then sleeps on
 * (chapter 01's stop-race shows it). So the handler also shuts down the
 * sockets given here: on Linux, accept() on a listener shut down fails at
 * once with EINVAL, read() on a connection shut down returns 0 once the
 * bytes already queued are read, and write() fails with EPIPE, whether the
 * thread is in the call already or enters it later. For servers whose one
 * thread serves one connection at a time (chapters 01 and 12).
 *
 * net_stop_set_listener(fd): the listener, before its port is printed.
 * net_stop_set_client(fd): the connection being served, as soon as accept()
 *   returns, and -1 before it is closed (a closed number is soon another
 *   file's). Returns false when a stop was requested before fd was set: the
 *   handler could not shut it down, so the caller must stop now. */
void net_stop_set_listener(int fd);
bool net_stop_set_client(int fd);

/* net_listen_or_die() for such a server: the listener is handed to the
 * handler (net_stop_set_listener) before its port is printed, since a
 * signal may follow the port at once. */
int net_listen_stoppable_or_die(const struct net_cli *cli, int backlog);

/* A self-pipe: after net_stop_pipe(), the returned fd becomes readable when
 * SIGINT or SIGTERM arrives (and net_stop_requested is set). Event loops put
 * it in their poll/select set, which closes the race between testing the flag
 * and blocking. Returns the read end (non-blocking, close-on-exec) or -errno. */
int net_stop_pipe(void);
/* Close both ends of the stop pipe (on the way out, so no fd is left open). */
void net_stop_pipe_close(int rfd);

#ifdef __linux__
/* SIGINT and SIGTERM as a readable fd (Linux's signalfd(2); chapter 04 builds
 * it step by step). Blocks both in the calling thread, so call it before
 * starting any thread: threads inherit the mask, and one that left SIGTERM
 * unblocked would take it with the default action (exit, no cleanup) instead
 * of the fd. Blocked, the signals only queue for the fd: no handler runs in
 * the middle of anything, and no flag-then-sleep race exists, since the loop
 * sleeps on the fd itself. Also ignores SIGPIPE, like
 * net_on_shutdown_signals(). flags: 0 or SFD_NONBLOCK (close-on-exec is
 * always set). Returns the fd, or -errno. */
int net_signalfd(int flags);
/* net_signalfd(), or exit 1 with the reason. */
int net_signalfd_or_die(int flags);
#endif

/* Print "what: strerror(err)" on stderr and exit 1. err is a positive errno. */
_Noreturn void net_die(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A tour (a program that shows a mechanism step by step and checks every
 * step) saw what it did not expect: flush stdout, so that the steps so far
 * come first, print "unexpected: " and the message on stderr, exit 1. */
_Noreturn void net_unexpected(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
