/* SPDX-License-Identifier: MIT */
/* win.c: see win.h. */
#include "win.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void win__usage(FILE *to, const char *prog, const char *summary,
                       const struct win_cli_extra *extra)
{
    fprintf(to, "usage: %s [-b ADDR] [-p PORT]%s\n", prog, extra ? " [options]" : "");
    if (summary)
        fprintf(to, "%s\n", summary);
    fprintf(to,
            "  -b ADDR   address to listen on (default %s)\n"
            "  -p PORT   port to listen on, 0 for any free port (default %d)\n",
            WIN_DEFAULT_ADDR, WIN_DEFAULT_PORT);
    if (extra && extra->usage)
        fputs(extra->usage, to);
    fprintf(to, "  -h        show this help\n");
}

int win_parse_int(const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    if (!s || !(isdigit((unsigned char)*s) || (*s == '-' && min < 0)))
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Either slash: Wine passes Unix-style paths through, Windows uses backslashes. */
const char *win_prog_name(const char *argv0, char *buf, size_t len)
{
    const char *p = argv0;
    size_t n;

    for (const char *q = argv0; *q; q++)
        if (*q == '/' || *q == '\\')
            p = q + 1;
    snprintf(buf, len, "%s", p);
    n = strlen(buf);
    if (n > 4 && _stricmp(buf + n - 4, ".exe") == 0)
        buf[n - 4] = '\0';
    return buf;
}

int win_opt_next(struct win_opt *o, int argc, char **argv, const char *optstring)
{
    const char *a, *spec;

    if (o->index >= argc)
        return -1;
    a = argv[o->index];
    if (strcmp(a, "--") == 0) {
        o->index++;
        return -1;
    }
    if (a[0] != '-' || a[1] == '\0')
        return -1;
    o->index++;
    o->opt = a[1];
    o->arg = NULL;
    if (a[1] == ':' || !(spec = strchr(optstring, a[1])))
        return '?';
    if (spec[1] != ':')
        return a[2] ? '?' : a[1];
    if (a[2])
        o->arg = a + 2;
    else if (o->index < argc)
        o->arg = argv[o->index++];
    else
        return ':';
    return a[1];
}

void win_cli_parse(struct win_cli *cli, int argc, char **argv, const char *summary,
                   const struct win_cli_extra *extra)
{
    char optstring[64] = "b:p:h", namebuf[64];
    const char *prog = win_prog_name(argc > 0 ? argv[0] : "server", namebuf, sizeof(namebuf));
    struct win_opt o = {.index = 1};
    struct in_addr probe;
    long port;
    int opt;

    cli->addr = WIN_DEFAULT_ADDR;
    cli->port = WIN_DEFAULT_PORT;
    if (extra && extra->optstring)
        strncat(optstring, extra->optstring, sizeof(optstring) - strlen(optstring) - 1);

    while ((opt = win_opt_next(&o, argc, argv, optstring)) != -1) {
        switch (opt) {
        case 'b':
            if (inet_pton(AF_INET, o.arg, &probe) != 1) {
                fprintf(stderr, "%s: -b %s: not an IPv4 address\n", prog, o.arg);
                goto bad;
            }
            cli->addr = o.arg;
            break;
        case 'p':
            if (win_parse_int(o.arg, 0, 65535, &port) < 0) {
                fprintf(stderr, "%s: -p %s: not a port number (0-65535)\n", prog, o.arg);
                goto bad;
            }
            cli->port = (int)port;
            break;
        case 'h':
            win__usage(stdout, prog, summary, extra);
            exit(0);
        case ':':
            fprintf(stderr, "%s: -%c needs a value\n", prog, o.opt);
            goto bad;
        case '?':
            fprintf(stderr, "%s: unknown option -%c\n", prog, o.opt);
            goto bad;
        default:
            if (extra && extra->on_opt && extra->on_opt(opt, o.arg, extra->ctx) == 0)
                break;
            goto bad;
        }
    }
    if (o.index < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[o.index]);
        goto bad;
    }
    return;
bad:
    win__usage(stderr, prog, summary, extra);
    exit(2);
}

/* snippet: strerror */
const char *win_strerror(DWORD err, char *buf, size_t len)
{
    char text[256];
    DWORD n =
        FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, err,
                       MAKELANGID(LANG_ENGLISH, SUBLANG_DEFAULT), text, (DWORD)sizeof(text), NULL);
    if (n == 0) /* no English text installed: the system's own language */
        n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, err, 0,
                           text, (DWORD)sizeof(text), NULL);
    /* The messages end in ".\r\n"; an error line reads better without. */
    while (n > 0 &&
           (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == '.' || text[n - 1] == ' '))
        n--;
    text[n] = '\0';
    snprintf(buf, len, "%s (error %lu)", n ? text : "unknown error", (unsigned long)err);
    return buf;
}
/* end snippet */

static void win__vreport(DWORD err, const char *fmt, va_list ap)
{
    char what[256], why[320];

    vsnprintf(what, sizeof(what), fmt, ap);
    /* one fprintf: lines from several worker threads do not interleave */
    fprintf(stderr, "%s: %s\n", what, win_strerror(err, why, sizeof(why)));
}

void win_warn(DWORD err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    win__vreport(err, fmt, ap);
    va_end(ap);
}

void win_die(DWORD err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    win__vreport(err, fmt, ap);
    va_end(ap);
    exit(1);
}

void win_stdio_binary(void)
{
    fflush(stdout);
    fflush(stderr);
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
}

void win_sockets_start(void)
{
    WSADATA wsa;
    int err = WSAStartup(MAKEWORD(2, 2), &wsa);

    if (err != 0) /* WSAStartup returns its error; WSAGetLastError needs it done */
        win_die((DWORD)err, "WSAStartup(2.2)");
}

SOCKET win_listen_or_die(const struct win_cli *cli, int backlog)
{
    struct sockaddr_in sa = {0};
    int len = sizeof(sa), one = 1;
    char ip[INET_ADDRSTRLEN] = "?";
    SOCKET s;

    sa.sin_family = AF_INET;
    sa.sin_port = htons((u_short)cli->port);
    if (inet_pton(AF_INET, cli->addr, &sa.sin_addr) != 1)
        win_die(WSAEINVAL, "-b %s", cli->addr);
    /* WSA_FLAG_OVERLAPPED: this socket (and those AcceptEx gives us, which
     * inherit it) may have overlapped operations, the only kind a
     * completion port reports. */
    s = WSASocketW(AF_INET, SOCK_STREAM, IPPROTO_TCP, NULL, 0,
                   WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
    if (s == INVALID_SOCKET)
        win_die(WSAGetLastError(), "WSASocket(AF_INET, SOCK_STREAM)");
    /* On Windows, SO_REUSEADDR would let ANOTHER process bind the same port
     * and steal connections; the Windows way to say "this port is mine" is
     * SO_EXCLUSIVEADDRUSE. (A listener needs no option to bind over old
     * connections in TIME_WAIT there.) */
    if (setsockopt(s, SOL_SOCKET, SO_EXCLUSIVEADDRUSE, (const char *)&one, sizeof(one)) != 0)
        win_die(WSAGetLastError(), "setsockopt(SO_EXCLUSIVEADDRUSE)");
    if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        win_die(WSAGetLastError(), "bind(%s:%d)", cli->addr, cli->port);
    if (listen(s, backlog) != 0)
        win_die(WSAGetLastError(), "listen(%s:%d)", cli->addr, cli->port);
    if (getsockname(s, (struct sockaddr *)&sa, &len) != 0)
        win_die(WSAGetLastError(), "getsockname(listener)");
    inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
    printf("listening on %s:%d\n", ip, ntohs(sa.sin_port));
    fflush(stdout);
    return s;
}

void *win_extension(SOCKET s, GUID guid, const char *name)
{
    void *fn = NULL;
    DWORD bytes;

    if (WSAIoctl(s, SIO_GET_EXTENSION_FUNCTION_POINTER, &guid, sizeof(guid), &fn, sizeof(fn),
                 &bytes, NULL, NULL) != 0)
        win_die(WSAGetLastError(), "WSAIoctl(SIO_GET_EXTENSION_FUNCTION_POINTER, %s)", name);
    return fn;
}

static HANDLE win__stop;

/* snippet: ctrl-handler */
/* Windows calls this on a new thread of its own, not in the middle of
 * another thread's code like a POSIX signal handler: any call is safe here. */
static BOOL WINAPI win__on_console_event(DWORD type)
{
    switch (type) {
    case CTRL_C_EVENT:
    case CTRL_BREAK_EVENT:
        SetEvent(win__stop);
        return TRUE; /* handled: the process goes on and shuts down by itself */
    case CTRL_CLOSE_EVENT:
    case CTRL_LOGOFF_EVENT:
    case CTRL_SHUTDOWN_EVENT:
        /* The process is ended as soon as this handler returns (or after
         * about 5 s), so keep it here while main cleans up and exits. */
        SetEvent(win__stop);
        Sleep(INFINITE);
        return TRUE;
    default:
        return FALSE;
    }
}
/* end snippet */

HANDLE win_stop_event(void)
{
    if (!(win__stop = CreateEventW(NULL, TRUE, FALSE, NULL)))
        win_die(GetLastError(), "CreateEvent(stop)");
    if (!SetConsoleCtrlHandler(win__on_console_event, TRUE))
        win_die(GetLastError(), "SetConsoleCtrlHandler");
    return win__stop;
}

int win_cpu_count(void)
{
    SYSTEM_INFO si;

    GetSystemInfo(&si);
    return si.dwNumberOfProcessors > 0 ? (int)si.dwNumberOfProcessors : 1;
}
