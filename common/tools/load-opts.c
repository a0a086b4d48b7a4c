/* SPDX-License-Identifier: MIT */
/* load-opts.c: echo-load's command line; see load-opts.h and echo-load --help. */
#include "load-opts.h"
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char load__usage_text[] =
    "usage: echo-load [-b ADDR] -p PORT [-c CONNS] [-n REQUESTS | -d SECONDS] [-l LEN] [-D DEPTH]\n"
    "                 [--vary SEED] [--eager] [--csv] [--idle] [-t TIMEOUT]\n"
    "Measures an echo server: throughput and latency, every echoed byte checked.\n"
    "  -b ADDR       server address (default 127.0.0.1)\n"
    "  -p PORT       server port (required)\n"
    "  -c CONNS      connections, all opened before measuring (default 1)\n"
    "  -n REQUESTS   messages per connection (default 1000)\n"
    "  -d SECONDS    run for SECONDS instead of a number of messages\n"
    "  -l LEN        message length in bytes, K and M suffixes allowed (default 128, max 16M)\n"
    "  -D DEPTH      messages in flight per connection (default 1: ping-pong; max 1024)\n"
    "  -t TIMEOUT    give up after TIMEOUT seconds; unfinished messages are errors\n"
    "                (default 60, or SECONDS + 60 with -d)\n"
    "  --vary SEED   each connection's messages have a length of their own, from 1 to\n"
    "                LEN, drawn from SEED and the connection's number (many clients\n"
    "                of different sizes in one process)\n"
    "  --eager       each connection starts sending once it is connected, not once all\n"
    "                are (a server that serves one client at a time keeps the others\n"
    "                waiting in its backlog; the latencies then include that wait)\n"
    "  --csv         print a CSV header line and one data line instead of the text report\n"
    "  --idle        check each connection with one echo, print \"holding N connections\",\n"
    "                then hold them idle for -d SECONDS (default: until SIGINT/SIGTERM)\n"
    "  -h, --help    show this help\n"
    "Exit status: 0 no errors, 1 errors, 2 bad arguments.\n";

static _Noreturn void load__usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static _Noreturn void load__usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs("echo-load: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fputs(load__usage_text, stderr);
    exit(2);
}

static int load__parse_seconds(const char *s, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || !(v > 0 && v <= 1e6)) /* the negation also refuses NaN */
        return -EINVAL;
    *out = v;
    return 0;
}

static int load__parse_size(const char *s, size_t max, size_t *out)
{
    unsigned long long v, mult = 1;
    char *end;

    if (*s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        mult = 1024, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1024 * 1024, end++;
    if (errno || *end || v == 0 || v > max / mult)
        return -EINVAL;
    *out = (size_t)(v * mult);
    return 0;
}

void load_opts_parse(struct load_opts *o, int argc, char **argv)
{
    enum { OPT_CSV = 256, OPT_IDLE, OPT_VARY, OPT_EAGER };
    static const struct option longopts[] = {
        {"csv", no_argument, NULL, OPT_CSV},
        {"idle", no_argument, NULL, OPT_IDLE},
        {"vary", required_argument, NULL, OPT_VARY},
        {"eager", no_argument, NULL, OPT_EAGER},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool got_n = false, got_depth = false, got_t = false;
    struct in_addr probe;
    long v;
    int opt;

    *o = (struct load_opts){.addr = NET_DEFAULT_ADDR,
                            .port = -1,
                            .conns = 1,
                            .requests = 1000,
                            .len = 128,
                            .depth = 1,
                            .timeout_s = 60};
    while ((opt = getopt_long(argc, argv, ":b:p:c:n:d:l:D:t:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'b':
            if (inet_pton(AF_INET, optarg, &probe) != 1)
                load__usage_error("-b %s: not an IPv4 address", optarg);
            o->addr = optarg;
            break;
        case 'p':
            if (net_parse_int(optarg, 1, 65535, &v) < 0)
                load__usage_error("-p %s: not a port number (1-65535)", optarg);
            o->port = (int)v;
            break;
        case 'c':
            if (net_parse_int(optarg, 1, 1000000, &v) < 0)
                load__usage_error("-c %s: not a number of connections (1-1000000)", optarg);
            o->conns = (unsigned)v;
            break;
        case 'n':
            if (net_parse_int(optarg, 1, 1000000000000L, &v) < 0)
                load__usage_error("-n %s: not a number of requests (1-10^12)", optarg);
            o->requests = (uint64_t)v;
            got_n = true;
            break;
        case 'd':
            if (load__parse_seconds(optarg, &o->duration_s) < 0)
                load__usage_error("-d %s: not a number of seconds", optarg);
            break;
        case 'l':
            if (load__parse_size(optarg, LOAD_MAX_LEN, &o->len) < 0)
                load__usage_error("-l %s: not a length from 1 to 16M", optarg);
            break;
        case 'D':
            if (net_parse_int(optarg, 1, 1024, &v) < 0)
                load__usage_error("-D %s: not a depth (1-1024)", optarg);
            o->depth = (unsigned)v;
            got_depth = true;
            break;
        case 't':
            if (load__parse_seconds(optarg, &o->timeout_s) < 0)
                load__usage_error("-t %s: not a number of seconds", optarg);
            got_t = true;
            break;
        case OPT_CSV:
            o->csv = true;
            break;
        case OPT_IDLE:
            o->idle = true;
            break;
        case OPT_EAGER:
            o->eager = true;
            break;
        case OPT_VARY:
            if (net_parse_int(optarg, 0, 2147483647L, &v) < 0)
                load__usage_error("--vary %s: not a seed (0-2147483647)", optarg);
            o->vary_seed = (uint64_t)v;
            o->vary = true;
            break;
        case 'h':
            fputs(load__usage_text, stdout);
            exit(0);
        case ':':
            if (optopt > 0 && optopt < 128)
                load__usage_error("-%c needs a value", optopt);
            load__usage_error("%s needs a value", argv[optind - 1]);
        default:
            if (optopt)
                load__usage_error("unknown option -%c", optopt);
            load__usage_error("unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc)
        load__usage_error("unexpected argument '%s'", argv[optind]);
    if (o->port < 0)
        load__usage_error("-p PORT is required");
    if (o->idle && (got_n || got_depth || o->csv || o->eager))
        load__usage_error(
            "--idle sends one message per connection: -n, -D, --eager and --csv do not apply");
    if (o->idle)
        o->requests = 1; /* the check; -d is then how long to hold */
    else if (got_n && o->duration_s > 0)
        load__usage_error("give -n REQUESTS or -d SECONDS, not both");
    else if (o->duration_s > 0)
        o->requests = 0;
    if (!got_t && !o->idle && o->duration_s > 0)
        o->timeout_s = o->duration_s + 60;
}
