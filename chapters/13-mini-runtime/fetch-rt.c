/* SPDX-License-Identifier: MIT */
/* fetch-rt.c: HttpClient.GetStringAsync on the runtime. Fetches every URL
 * given, all at once (one task each, awaited together with when_all), or
 * one after another with -s; prints the status, the size and the time of
 * each, and the total.
 *
 *     make -C chapters/13-mini-runtime
 *     build/chapters/13-mini-runtime/http-rt -p 8080 -r chapters/13-mini-runtime &
 *     build/chapters/13-mini-runtime/fetch-rt http://127.0.0.1:8080/README.md \
 *         http://127.0.0.1:8080/rt/rt.h http://127.0.0.1:8080/missing
 *
 * Options: -s one at a time; -t MS give up after MS for everything (a token
 * with cancel_after: the operations in flight complete with -ECANCELED);
 * -o write the bodies to stdout, in the order of the URLs, and the report
 * to stderr. Only http:// with a numeric IPv4 address. Exit 0 when every
 * URL got a response whose body matched its Content-Length, 1 otherwise.
 */
#include "clock.h"
#include "http-req.h"
#include "rt.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define URLS_MAX 64

/* snippet: fetch */
struct fetch {
    struct rt_task task;
    const char *url;
    char host[64], path[512], req[700];
    int port, status;
    long fd, n;
    char *data; /* the whole response: head and body */
    size_t len, cap;
    int64_t ms;
};

static void fetch_step(void *frame)
{
    struct fetch *co = frame;
    struct rt *rt = co->task.f.rt;

    RT_BEGIN(co);
    co->ms = clock_now_ms();
    RT_AWAIT(co, rt_connect(rt, co->host, co->port, co->task.token), co->fd);
    if (co->fd < 0)
        RT_RETURN(co, co->fd);
    snprintf(co->req, sizeof(co->req),
             "GET %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n", co->path, co->host,
             co->port);
    RT_AWAIT(co, rt_send(rt, (int)co->fd, co->req, strlen(co->req), co->task.token), co->n);
    while (co->n > 0) { /* read until the server closes */
        if (co->cap - co->len < 16384 &&
            !(co->data = realloc(co->data, co->cap = co->cap ? 2 * co->cap : 65536))) {
            co->n = -ENOMEM;
            break;
        }
        RT_AWAIT(co,
                 rt_recv(rt, (int)co->fd, co->data + co->len, co->cap - co->len, co->task.token),
                 co->n);
        if (co->n > 0)
            co->len += (size_t)co->n;
    }
    rt_close(rt, (int)co->fd);
    co->ms = clock_now_ms() - co->ms;
    RT_RETURN(co, co->n);
    ASYNC_END(&co->task);
}
/* end snippet */

static int fetch_parse_url(struct fetch *f, const char *url)
{
    const char *hp = url + 7, *slash;
    char port[8] = "80";

    f->url = url;
    if (strncmp(url, "http://", 7) != 0)
        return -1;
    slash = strchr(hp, '/');
    size_t hlen = slash ? (size_t)(slash - hp) : strlen(hp);
    const char *colon = memchr(hp, ':', hlen);
    if (hlen == 0 || hlen >= sizeof(f->host))
        return -1;
    if (colon) {
        if ((size_t)(hp + hlen - colon - 1) >= sizeof(port))
            return -1;
        snprintf(port, sizeof(port), "%.*s", (int)(hp + hlen - colon - 1), colon + 1);
        hlen = (size_t)(colon - hp);
    }
    snprintf(f->host, sizeof(f->host), "%.*s", (int)hlen, hp);
    snprintf(f->path, sizeof(f->path), "%s", slash ? slash : "/");
    f->port = atoi(port);
    return f->port > 0 && f->port < 65536 ? 0 : -1;
}

/* Check what came back; print one line. 0 if it is a whole response. */
static int fetch_report(struct fetch *f, long res, FILE *report, bool bodies)
{
    size_t head = f->data ? http_head_len(f->data, f->len) : 0;
    long long clen = head ? http_content_length(f->data, head) : -1;

    if (res < 0) {
        fprintf(report, "%s: %s\n", f->url, res == -ECANCELED ? "timed out" : strerror((int)-res));
        return -1;
    }
    if (!head || (f->status = http_parse_status(f->data, head)) < 0 ||
        (clen >= 0 && (size_t)clen != f->len - head)) {
        fprintf(report, "%s: a malformed or truncated response (%zu bytes)\n", f->url, f->len);
        return -1;
    }
    fprintf(report, "%d %s: %zu bytes in %lld ms\n", f->status, f->url, f->len - head,
            (long long)f->ms);
    if (bodies)
        fwrite(f->data + head, 1, f->len - head, stdout);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: fetch-rt [-s] [-t MS] [-o] http://ADDR:PORT/PATH...\n");
    exit(2);
}

int main(int argc, char **argv)
{
    struct fetch *f[URLS_MAX];
    struct rt_future *fut[URLS_MAX];
    bool sequential = false, bodies = false;
    long timeout_ms = 0;
    int opt, n, failed = 0, err;
    char why[256];
    struct rt *rt;
    struct rt_token *tok;
    int64_t t0;
    FILE *report;

    while ((opt = getopt(argc, argv, "st:o")) != -1) {
        if (opt == 's')
            sequential = true;
        else if (opt == 'o')
            bodies = true;
        else if (opt == 't' && (timeout_ms = atol(optarg)) > 0)
            continue;
        else
            usage();
    }
    report = bodies ? stderr : stdout;
    n = argc - optind;
    if (n < 1 || n > URLS_MAX)
        usage();
    if (!(rt = rt_create(&err, why, sizeof(why)))) {
        fprintf(stderr, "fetch-rt: %s\n", why);
        return err == -EINVAL ? 2 : 77;
    }
    tok = rt_token_new(rt, rt_root_token(rt));
    if (timeout_ms > 0)
        rt_token_cancel_after(tok, (unsigned)timeout_ms);
    t0 = clock_now_ms();
    for (int i = 0; i < n; i++) {
        f[i] = RT_TASK_NEW(rt, struct fetch, fetch_step);
        if (fetch_parse_url(f[i], argv[optind + i]) < 0) {
            fprintf(stderr, "fetch-rt: %s: not http://ADDR:PORT/PATH\n", argv[optind + i]);
            return 2;
        }
    }
    /* snippet: main */
    for (int i = 0; i < n; i++) {
        fut[i] = rt_task_start(&f[i]->task, tok); /* kept: the frame's fields are read below */
        if (sequential)
            rt_block_on(rt, rt_future_ref(fut[i])); /* await it before starting the next */
    }
    rt_block_on(rt, rt_when_all(rt, fut, (size_t)n));
    /* end snippet */
    for (int i = 0; i < n; i++) {
        if (fetch_report(f[i], rt_future_result(fut[i]), report, bodies) < 0)
            failed++;
        free(f[i]->data);
        rt_future_release(fut[i]);
    }
    fprintf(report, "%d URLs fetched %s in %lld ms, %d failed\n", n,
            sequential ? "one by one" : "at once", (long long)(clock_now_ms() - t0), failed);
    rt_token_free(tok);
    rt_destroy(rt);
    return failed ? 1 : 0;
}
