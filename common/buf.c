/* SPDX-License-Identifier: MIT */
/* buf.c: see buf.h. */
#include "buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void buf_init(struct buf *b)
{
    b->data = NULL;
    b->start = b->end = b->cap = 0;
}

void buf_free(struct buf *b)
{
    free(b->data);
    buf_init(b);
}

/* Make room for `extra` more bytes after `end`: first by sliding the pending
 * bytes to the front, then by doubling. */
static int buf__reserve(struct buf *b, size_t extra)
{
    size_t len = buf_len(b), cap;
    char *p;

    if (b->cap - b->end >= extra)
        return 0;
    if (b->start > 0) {
        memmove(b->data, b->data + b->start, len);
        b->start = 0;
        b->end = len;
        if (b->cap - b->end >= extra)
            return 0;
    }
    if (len + extra < len)
        return -ENOMEM; /* overflow */
    cap = b->cap ? b->cap : 4096;
    while (cap < len + extra) {
        if (cap > ((size_t)-1) / 2)
            return -ENOMEM;
        cap *= 2;
    }
    p = realloc(b->data, cap);
    if (!p)
        return -ENOMEM;
    b->data = p;
    b->cap = cap;
    return 0;
}

int buf_append(struct buf *b, const void *data, size_t len)
{
    int err;

    if (len == 0)
        return 0;
    if ((err = buf__reserve(b, len)) < 0)
        return err;
    memcpy(b->data + b->end, data, len);
    b->end += len;
    return 0;
}

void buf_consume(struct buf *b, size_t n)
{
    if (n > buf_len(b))
        n = buf_len(b);
    b->start += n;
    if (b->start == b->end)
        b->start = b->end = 0; /* empty: reuse from the front, no memmove later */
}

ssize_t buf_read_from(struct buf *b, int fd, size_t want)
{
    ssize_t n;
    int err;

    if (want == 0)
        want = 1;
    if ((err = buf__reserve(b, want)) < 0)
        return err;
    do
        n = read(fd, b->data + b->end, b->cap - b->end);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    b->end += (size_t)n;
    return n;
}

int buf_flush(struct buf *b, int fd)
{
    while (buf_len(b) > 0) {
        ssize_t n = write(fd, buf_peek(b), buf_len(b));
        if (n > 0) {
            buf_consume(b, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return -EAGAIN;
        return n < 0 ? -errno : -EIO; /* write() returning 0 for len > 0: treat as I/O error */
    }
    return 0;
}
