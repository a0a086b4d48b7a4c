/* SPDX-License-Identifier: MIT */
/* iocp-read.c: overlapped ReadFile and a completion port, one step at a time.
 *
 * The main thread opens FILE with FILE_FLAG_OVERLAPPED, ties it to a new
 * completion port, and issues one ReadFile per block of the file (plus one
 * past its end), each with its own OVERLAPPED holding the offset. It does
 * not wait for any of them. A small pool of threads sleeps in
 * GetQueuedCompletionStatus() on the port; each completion packet wakes one
 * of them, which prints the block: offset, bytes, first bytes, and which
 * thread it was. Each ReadFile either
 *   - returns FALSE with ERROR_IO_PENDING: the read goes on without us, or
 *   - returns TRUE: it finished at once (cached data often does). A packet is
 *     queued to the port all the same, so the pool still sees it;
 *   - or fails at once (past the end: ERROR_HANDLE_EOF): no packet at all.
 * Then it does the same through a second handle set to
 * FILE_SKIP_COMPLETION_PORT_ON_SUCCESS: a read that finishes at once queues
 * no packet, and the thread that issued it handles it inline.
 *
 *     make -C chapters/09-iocp
 *     wine64 build/chapters/09-iocp/iocp-read.exe chapters/09-iocp/README.md
 *
 * -t N threads in the pool (default 3), -s SIZE bytes per read (default
 * 65536), -n N blocks at most (default 16), -u FILE_FLAG_NO_BUFFERING (SIZE
 * must then be a multiple of the disk's sector size).
 * Windows Vista or later (SetFileCompletionNotificationModes).
 */
#include "win.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_FILE  1
#define KEY_QUIT  2
#define MAX_READS 64

struct read_op {
    OVERLAPPED ov; /* first: the OVERLAPPED* from the port is the read_op* */
    long long offset;
    char *buf;
};

struct opts {
    int threads, size, max_reads, unbuffered;
    const char *path;
};

struct pool {
    HANDLE port;
    HANDLE done; /* a semaphore: released once per completion handled */
    struct read_op reads[MAX_READS + 1];
    int nreads;
};

static const char *usage_text =
    "usage: %s [-t THREADS] [-s SIZE] [-n BLOCKS] [-u] FILE\n"
    "Overlapped ReadFile on FILE, completions on a port.\n"
    "  -t THREADS  threads waiting on the port (1-16, default 3)\n"
    "  -s SIZE     bytes per read (512-1048576, default 65536)\n"
    "  -n BLOCKS   blocks to read at most (1-64, default 16); one more read at the end\n"
    "  -u          FILE_FLAG_NO_BUFFERING (SIZE: a multiple of 4096)\n"
    "  -h          show this help\n";

/* Print one finished read: the thread that runs this is the one the port woke. */
static void report(const char *who, const struct read_op *r, DWORD bytes, DWORD err)
{
    char why[256];

    if (err != 0) {
        printf("  [%s tid %lu] offset %lld: %s\n", who, GetCurrentThreadId(), r->offset,
               win_strerror(err, why, sizeof(why)));
    } else {
        const unsigned char *b = (const unsigned char *)r->buf;
        printf("  [%s tid %lu] offset %lld: %lu bytes, first bytes %02x %02x %02x %02x\n", who,
               GetCurrentThreadId(), r->offset, (unsigned long)bytes, b[0], b[1], b[2], b[3]);
    }
    fflush(stdout);
}

/* snippet: pool-thread */
static DWORD WINAPI pool_thread(void *arg)
{
    struct pool *p = arg;

    printf("  pool thread tid %lu waits in GetQueuedCompletionStatus\n", GetCurrentThreadId());
    fflush(stdout);
    for (;;) {
        DWORD bytes = 0, err = 0;
        ULONG_PTR key = 0;
        OVERLAPPED *ov = NULL;

        /* FALSE with ov set: a packet for a read that failed; FALSE with ov
         * NULL: no packet at all (the port itself failed). */
        if (!GetQueuedCompletionStatus(p->port, &bytes, &key, &ov, INFINITE)) {
            err = GetLastError();
            if (!ov)
                win_die(err, "GetQueuedCompletionStatus");
        }
        if (key == KEY_QUIT)
            return 0;
        report("pool", CONTAINING_RECORD(ov, struct read_op, ov), bytes, err);
        ReleaseSemaphore(p->done, 1, NULL);
    }
}
/* end snippet */

/* snippet: issue */
/* Issue every read from this thread and count how each one started.
 * Returns how many completion packets to expect on the port. */
static int issue_reads(struct pool *p, HANDLE file, int skip_on_success)
{
    int packets = 0, pending = 0, at_once = 0;

    for (int i = 0; i < p->nreads; i++) {
        struct read_op *r = &p->reads[i];
        DWORD bytes = 0, err;
        BOOL ok;

        memset(&r->ov, 0, sizeof(r->ov));
        r->ov.Offset = (DWORD)(r->offset & 0xffffffff);
        r->ov.OffsetHigh = (DWORD)(r->offset >> 32);
        ok = ReadFile(file, r->buf, (DWORD)(p->reads[1].offset - p->reads[0].offset), NULL, &r->ov);
        err = ok ? 0 : GetLastError();
        if (err == ERROR_IO_PENDING) {
            printf("ReadFile(offset=%lld) = FALSE, ERROR_IO_PENDING: the read goes on, "
                   "this thread goes on\n",
                   r->offset);
            pending++;
            packets++;
        } else if (ok && !skip_on_success) {
            printf("ReadFile(offset=%lld) = TRUE: finished at once; its packet is queued "
                   "anyway\n",
                   r->offset);
            at_once++;
            packets++;
        } else if (ok) {
            /* FILE_SKIP_COMPLETION_PORT_ON_SUCCESS: no packet will come; the
             * result is in the OVERLAPPED now, and this thread handles it. */
            GetOverlappedResult(file, &r->ov, &bytes, FALSE);
            printf("ReadFile(offset=%lld) = TRUE: finished at once; no packet, handled "
                   "inline:\n",
                   r->offset);
            report("inline", r, bytes, 0);
            at_once++;
        } else {
            printf("ReadFile(offset=%lld) = FALSE, failed at once; no packet:\n", r->offset);
            report("inline", r, 0, err);
        }
        fflush(stdout);
    }
    printf("issued %d reads from tid %lu: %d pending, %d finished at once, %d failed; "
           "%d packets to come\n",
           p->nreads, GetCurrentThreadId(), pending, at_once, p->nreads - pending - at_once,
           packets);
    fflush(stdout);
    return packets;
}
/* end snippet */

static HANDLE open_overlapped(const struct opts *o, HANDLE port)
{
    DWORD flags = FILE_FLAG_OVERLAPPED | (o->unbuffered ? FILE_FLAG_NO_BUFFERING : 0);
    HANDLE f =
        CreateFileA(o->path, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING, flags, NULL);

    if (f == INVALID_HANDLE_VALUE)
        win_die(GetLastError(), "CreateFile(%s, FILE_FLAG_OVERLAPPED)", o->path);
    /* Tie the file to the port: from now on its overlapped I/O ends as a
     * packet there, with KEY_FILE as the completion key. */
    if (!CreateIoCompletionPort(f, port, KEY_FILE, 0))
        win_die(GetLastError(), "CreateIoCompletionPort(%s)", o->path);
    return f;
}

static void wait_packets(struct pool *p, int packets)
{
    for (int i = 0; i < packets; i++)
        if (WaitForSingleObject(p->done, 30000) != WAIT_OBJECT_0)
            win_die(WAIT_TIMEOUT, "waiting for completion packet %d of %d", i + 1, packets);
}

static void parse(struct opts *o, int argc, char **argv)
{
    char namebuf[64];
    const char *prog = win_prog_name(argv[0], namebuf, sizeof(namebuf));
    struct win_opt w = {.index = 1};
    long v;
    int opt;

    *o = (struct opts){.threads = 3, .size = 65536, .max_reads = 16};
    while ((opt = win_opt_next(&w, argc, argv, "t:s:n:uh")) != -1) {
        if (opt == 'h') {
            printf(usage_text, prog);
            exit(0);
        } else if (opt == 't' && win_parse_int(w.arg, 1, 16, &v) == 0) {
            o->threads = (int)v;
        } else if (opt == 's' && win_parse_int(w.arg, 512, 1 << 20, &v) == 0) {
            o->size = (int)v;
        } else if (opt == 'n' && win_parse_int(w.arg, 1, MAX_READS, &v) == 0) {
            o->max_reads = (int)v;
        } else if (opt == 'u') {
            o->unbuffered = 1;
        } else {
            fprintf(stderr, "%s: bad option -%c%s%s\n", prog, w.opt, w.arg ? " " : "",
                    w.arg ? w.arg : "");
            goto bad;
        }
    }
    if (w.index != argc - 1) {
        fprintf(stderr, "%s: expected one FILE\n", prog);
        goto bad;
    }
    o->path = argv[w.index];
    return;
bad:
    fprintf(stderr, usage_text, prog);
    exit(2);
}

int main(int argc, char **argv)
{
    struct opts o;
    static struct pool p;
    HANDLE threads[16], file;
    LARGE_INTEGER size;
    int packets;

    win_stdio_binary();
    parse(&o, argc, argv);
    if (!(p.port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 0)))
        win_die(GetLastError(), "CreateIoCompletionPort(new port)");
    if (!(p.done = CreateSemaphoreW(NULL, 0, MAX_READS + 1, NULL)))
        win_die(GetLastError(), "CreateSemaphore");
    file = open_overlapped(&o, p.port);
    if (!GetFileSizeEx(file, &size))
        win_die(GetLastError(), "GetFileSizeEx(%s)", o.path);

    /* one read per block, at most -n of them, then one at the end of the file */
    p.nreads = (int)((size.QuadPart + o.size - 1) / o.size);
    if (p.nreads > o.max_reads)
        p.nreads = o.max_reads;
    for (int i = 0; i <= p.nreads; i++) {
        p.reads[i].offset = i < p.nreads ? (long long)i * o.size : size.QuadPart;
        /* page-aligned, as FILE_FLAG_NO_BUFFERING requires */
        p.reads[i].buf =
            VirtualAlloc(NULL, (SIZE_T)o.size, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
        if (!p.reads[i].buf)
            win_die(GetLastError(), "VirtualAlloc(%d)", o.size);
    }
    if (o.unbuffered) /* past the end, but on a sector boundary */
        p.reads[p.nreads].offset = (long long)p.nreads * o.size;
    p.nreads++;
    printf("%s: %lld bytes; %d reads of %d bytes%s; main thread tid %lu; %d pool thread%s\n",
           o.path, size.QuadPart, p.nreads, o.size, o.unbuffered ? ", unbuffered" : "",
           GetCurrentThreadId(), o.threads, o.threads == 1 ? "" : "s");
    fflush(stdout);

    for (int i = 0; i < o.threads; i++)
        if (!(threads[i] = CreateThread(NULL, 0, pool_thread, &p, 0, NULL)))
            win_die(GetLastError(), "CreateThread(pool %d)", i + 1);
    Sleep(100); /* let the pool line up on the port before the first packet */

    printf("part 1: every completion through the port\n");
    packets = issue_reads(&p, file, 0);
    wait_packets(&p, packets);
    CloseHandle(file);

    printf("part 2: FILE_SKIP_COMPLETION_PORT_ON_SUCCESS\n");
    file = open_overlapped(&o, p.port);
    /* snippet: skip */
    if (!SetFileCompletionNotificationModes(file, FILE_SKIP_COMPLETION_PORT_ON_SUCCESS))
        win_die(GetLastError(), "SetFileCompletionNotificationModes(%s)", o.path);
    /* end snippet */
    packets = issue_reads(&p, file, 1);
    wait_packets(&p, packets);

    for (int i = 0; i < o.threads; i++)
        PostQueuedCompletionStatus(p.port, 0, KEY_QUIT, NULL);
    WaitForMultipleObjects((DWORD)o.threads, threads, TRUE, INFINITE);
    for (int i = 0; i < o.threads; i++)
        CloseHandle(threads[i]);
    for (int i = 0; i < p.nreads; i++)
        VirtualFree(p.reads[i].buf, 0, MEM_RELEASE);
    CloseHandle(file);
    CloseHandle(p.done);
    CloseHandle(p.port);
    printf("done: every read accounted for\n");
    return 0;
}
