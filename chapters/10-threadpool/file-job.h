/* SPDX-License-Identifier: MIT */
/* file-job.h: one file request of file-server, the part that blocks.
 *
 * file_job_run() resolves a client's path beneath the served root, opens the
 * file, reads all of it and builds the whole reply in memory. It may take as
 * long as the disk likes: file-server runs it on a pool thread (or, with
 * -w 0, on the loop thread, to show what that costs).
 *
 * The protocol, one request per line, any number of requests per connection:
 *
 *   client: GET <path>\n      path relative to the root, at most 4095 bytes
 *   server: OK <size>\n       then exactly <size> bytes of the file
 *       or: ERR <CODE> <text>\n
 *
 *   client: STATS\n
 *   server: OK <size>\n       then <size> bytes of "name value" lines (the pool's counters)
 *
 * CODE is one of BADREQ (not a request), FORBIDDEN (the path leaves the root:
 * absolute, "..", or a symlink pointing out), NOTFOUND, DENIED (no permission),
 * NOTFILE (a directory, a FIFO, a device), TOOBIG (over the -m limit), BUSY
 * (the pool's queue is full: try again), IO (any other error). After ERR
 * BADREQ the server closes the connection; after any other reply it reads
 * the next request.
 */
#ifndef CH10_FILE_JOB_H
#define CH10_FILE_JOB_H

#include "buf.h"
#include "pool.h"

#include <limits.h>

#define FILE_PATH_MAX 4096 /* a request line, newline included, is at most this long */

/* What every request of one server shares (read-only once serving). */
struct file_root {
    int dirfd;                 /* the served root, opened O_PATH | O_DIRECTORY */
    char real[PATH_MAX];       /* its canonical path, for the non-openat2 check */
    size_t max_size;           /* TOOBIG above this */
    long long disk_ns_per_mib; /* -s: sleep this long per MiB read (0: no delay) */
};

struct file_job {
    struct pool_job job; /* first: the pool hands back &job, which is the file_job */
    const struct file_root *root;
    char path[FILE_PATH_MAX];
    struct buf reply; /* built by file_job_run(): the header, then the file's bytes */
};

/* Open root_path as the served root. Returns 0 or -errno. */
int file_root_open(struct file_root *root, const char *root_path);
void file_root_close(struct file_root *root);

/* Blocking: fill job->reply with "OK <size>\n" and the file, or an ERR line. */
void file_job_run(struct file_job *job);

/* Append one "ERR CODE text\n" line to b. */
void file_reply_error(struct buf *b, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
