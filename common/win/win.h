/* SPDX-License-Identifier: MIT */
/* win.h: the small Windows helpers of chapters 09 and 11.
 *
 * common/net.c is POSIX (getopt over argv, BSD sockets, signals), so the
 * Windows programs get their own copy of the same contract here:
 *   -b ADDR (default 127.0.0.1), -p PORT (default 8080, 0 = any), -h;
 *   "listening on ADDR:PORT", flushed, as the first line on stdout;
 *   Ctrl-C, Ctrl-Break and closing the console: a clean shutdown, exit 0;
 *   bad arguments: usage on stderr, exit 2.
 *
 * Errors: Windows has two error channels, GetLastError() for the kernel32
 * calls and WSAGetLastError() for Winsock (the same thread-local slot in
 * practice, but documented apart). Both are DWORD codes that FormatMessage()
 * turns into text; win_strerror() is the one place that does it, like
 * wepoll's one error-mapping file.
 */
#ifndef COURSE_WIN_H
#define COURSE_WIN_H

/* Windows Vista is the first with GetQueuedCompletionStatusEx, CancelIoEx,
 * SetFileCompletionNotificationModes and inet_ntop; say so before any
 * Windows header decides for us. */
#ifndef _WIN32_WINNT
#define _WIN32_WINNT 0x0600
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif

#include <winsock2.h>

#include <mswsock.h>
#include <windows.h>
#include <ws2tcpip.h>

#include <stdarg.h>
#include <stddef.h>

/* printf-style format checking where the compiler has it (not MSVC). */
#if defined(__GNUC__)
#define WIN_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define WIN_PRINTF(fmt, args)
#endif

#define WIN_DEFAULT_ADDR "127.0.0.1"
#define WIN_DEFAULT_PORT 8080

struct win_cli {
    const char *addr; /* -b */
    int port;         /* -p */
};

/* Extra options on top of -b/-p/-h, as in common/net.h: `optstring` in
 * getopt(3) syntax, `usage` one line per option, `on_opt` returns 0 to
 * accept an option, -1 to refuse it (usage, exit 2). */
struct win_cli_extra {
    const char *optstring;
    const char *usage;
    int (*on_opt)(int opt, const char *arg, void *ctx);
    void *ctx;
};

/* getopt(3) is not part of the Windows C runtime (MSVC has none), so the
 * options are parsed by this small stand-in: single letters, "-p 80" or
 * "-p80", "--" ends the options. Returns the letter, '?' for an unknown
 * option, ':' for a missing value (o->opt holds the letter in both cases),
 * -1 at the first non-option (o->index is its position). */
struct win_opt {
    int index;       /* next argv[] to look at; start at 1 */
    int opt;         /* the option letter just read */
    const char *arg; /* its value, for a letter followed by ':' in optstring */
};
int win_opt_next(struct win_opt *o, int argc, char **argv, const char *optstring);

/* argv[0] without its folder and ".exe", into buf. */
const char *win_prog_name(const char *argv0, char *buf, size_t len);

void win_cli_parse(struct win_cli *cli, int argc, char **argv, const char *summary,
                   const struct win_cli_extra *extra);

/* Parse a decimal integer in [min, max]; 0 on success, -1 otherwise. */
int win_parse_int(const char *s, long min, long max, long *out);

/* The text of a GetLastError()/WSAGetLastError() code, with the number:
 * "An existing connection was forcibly closed by the remote host (error 10054)".
 * Writes into buf (thread-safe) and returns it. */
const char *win_strerror(DWORD err, char *buf, size_t len);

/* "what: text (error N)" on stderr; win_die() then exits 1. */
void win_warn(DWORD err, const char *fmt, ...) WIN_PRINTF(2, 3);
_Noreturn void win_die(DWORD err, const char *fmt, ...) WIN_PRINTF(2, 3);

/* Put stdout and stderr in binary mode. The C runtime on Windows opens them
 * in text mode, which writes every "\n" as "\r\n": a test (or any Unix
 * tool under Wine) reading "listening on ADDR:PORT" would see a stray \r. */
void win_stdio_binary(void);

/* WSAStartup(2.2), or die. Pair with WSACleanup() on the way out. */
void win_sockets_start(void);

/* An overlapped TCP listener on cli's address, announced on stdout
 * ("listening on ADDR:PORT", flushed), or die. */
SOCKET win_listen_or_die(const struct win_cli *cli, int backlog);

/* Load an extension function of Winsock (AcceptEx and friends are not
 * exported by ws2_32.dll; the provider hands out their addresses). */
void *win_extension(SOCKET s, GUID guid, const char *name);

/* Console control events: Ctrl-C, Ctrl-Break, closing the console window,
 * log-off and shutdown all set the returned manual-reset event. */
HANDLE win_stop_event(void);

/* The number of logical processors (the port's default concurrency). */
int win_cpu_count(void);

#endif
