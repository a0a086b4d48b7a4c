/* SPDX-License-Identifier: MIT */
/* file-job.c: resolve, open and read one requested file. See file-job.h.
 *
 * Everything here blocks, and nothing here touches a connection: the job
 * gets a path and returns a reply buffer. That separation is what lets it run
 * on any thread.
 */
#include "file-job.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/openat2.h>
#endif

#define READ_CHUNK (256 * 1024) /* bytes per pread(): also the unit of the -s delay */
#define HEAD_ROOM  32           /* room in front of the bytes for "OK <size>\n" */

int file_root_open(struct file_root *root, const char *root_path)
{
    int err;

    root->dirfd = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root->dirfd < 0)
        return -errno;
    if (!realpath(root_path, root->real)) {
        err = -errno;
        close(root->dirfd);
        return err;
    }
    return 0;
}

void file_root_close(struct file_root *root)
{
    close(root->dirfd);
}

void file_reply_error(struct buf *b, const char *code, const char *fmt, ...)
{
    char line[FILE_PATH_MAX + 128];
    int n = snprintf(line, sizeof(line), "ERR %s ", code);
    va_list ap;

    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    buf_append(b, line, (size_t)n); /* out of memory: the client sees the connection close */
}

/* snippet: beneath */
/* Open `path` for reading only if it resolves to something inside the root.
 * Checking the string for ".." is not enough: a symlink inside the root can
 * point anywhere. openat2(RESOLVE_BENEATH) (Linux 5.6) has the kernel refuse,
 * with EXDEV, any step of the walk that would leave the directory: "..",
 * an absolute symlink, a symlink that climbs out. Where openat2 is missing
 * (older kernels, some container sandboxes: ENOSYS), realpath() and a prefix
 * check do the same, with a window in which a symlink could be swapped. */
static int file__open_beneath(const struct file_root *root, const char *path)
{
    /* O_NONBLOCK so that opening a FIFO returns at once instead of waiting
     * for a writer (the fstat() below then refuses it). On a regular file
     * it changes nothing: reads from the disk block regardless. */
    int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, fd;
    char full[PATH_MAX + FILE_PATH_MAX + 2], real[PATH_MAX];
    size_t n = strlen(root->real);
#ifdef SYS_openat2
    struct open_how how = {.flags = (uint64_t)flags,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
    long ret;

    while ((ret = syscall(SYS_openat2, root->dirfd, path, &how, sizeof(how))) < 0 &&
           (errno == EINTR || errno == EAGAIN))
        ;
    if (ret >= 0)
        return (int)ret;
    if (errno != ENOSYS)
        return -errno;
#endif
    snprintf(full, sizeof(full), "%s/%s", root->real, path);
    if (!realpath(full, real))
        return -errno;
    if (n > 1 && (strncmp(real, root->real, n) != 0 || (real[n] != '/' && real[n] != '\0')))
        return -EXDEV;
    fd = open(real, flags);
    return fd < 0 ? -errno : fd;
}
/* end snippet */

static void file__reply_errno(struct buf *b, const char *path, int err)
{
    switch (err) {
    case EXDEV:
        file_reply_error(b, "FORBIDDEN", "%s: outside the served root", path);
        break;
    case ENOENT:
    case ENOTDIR:
        file_reply_error(b, "NOTFOUND", "%s: %s", path, strerror(err));
        break;
    case EACCES:
    case EPERM:
        file_reply_error(b, "DENIED", "%s: %s", path, strerror(err));
        break;
    default:
        file_reply_error(b, "IO", "%s: %s", path, strerror(err));
    }
}

/* The -s option: a disk that reads `ns_per_mib` per MiB, so a large file is
 * slow and a small one is not. Sleeping stands in for the wait inside a
 * read() from a slow disk or a network filesystem: the thread is blocked,
 * and uses no CPU. */
static void file__disk_delay(long long ns_per_mib, size_t bytes)
{
    long long ns = (long long)((double)ns_per_mib * (double)bytes / (1024.0 * 1024.0));
    struct timespec ts = {ns / 1000000000LL, ns % 1000000000LL};

    while (ns > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* snippet: read */
static void file__read_all(struct file_job *job, int fd, size_t size)
{
    struct buf *b = &job->reply;
    size_t got = 0;
    char head[HEAD_ROOM];
    int hlen;

    if (!(b->data = malloc(HEAD_ROOM + size + 1))) {
        file_reply_error(b, "IO", "%s: %s", job->path, strerror(ENOMEM));
        return;
    }
    b->cap = HEAD_ROOM + size + 1;
    while (got < size) {
        size_t want = size - got < READ_CHUNK ? size - got : READ_CHUNK;
        ssize_t n = pread(fd, b->data + HEAD_ROOM + got, want, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int err = errno;
            buf_free(b);
            file__reply_errno(b, job->path, err);
            return;
        }
        if (n == 0)
            break; /* the file shrank since fstat(): send what is there */
        got += (size_t)n;
        file__disk_delay(job->root->disk_ns_per_mib, (size_t)n);
    }
    /* The header goes right in front of the bytes, so the reply is one
     * contiguous buffer and nothing is copied. */
    hlen = snprintf(head, sizeof(head), "OK %zu\n", got);
    memcpy(b->data + HEAD_ROOM - hlen, head, (size_t)hlen);
    b->start = HEAD_ROOM - (size_t)hlen;
    b->end = HEAD_ROOM + got;
}
/* end snippet */

void file_job_run(struct file_job *job)
{
    struct stat st;
    int fd;

    buf_init(&job->reply);
    if (job->path[0] == '/') {
        file_reply_error(&job->reply, "FORBIDDEN",
                         "%s: absolute path; paths are relative to the root", job->path);
        return;
    }
    if ((fd = file__open_beneath(job->root, job->path)) < 0) {
        file__reply_errno(&job->reply, job->path, -fd);
        return;
    }
    if (fstat(fd, &st) < 0)
        file__reply_errno(&job->reply, job->path, errno);
    else if (!S_ISREG(st.st_mode))
        file_reply_error(&job->reply, "NOTFILE", "%s: not a regular file", job->path);
    else if ((unsigned long long)st.st_size > job->root->max_size)
        file_reply_error(&job->reply, "TOOBIG", "%s: %lld bytes, over the limit of %zu", job->path,
                         (long long)st.st_size, job->root->max_size);
    else
        file__read_all(job, fd, (size_t)st.st_size);
    close(fd);
}
