/* SPDX-License-Identifier: MIT */
/* buf.h: a growable byte buffer for output a socket would not take yet.
 *
 * An event-driven server cannot block in write(). When the kernel accepts only
 * part of a reply (a short write) or none of it (EAGAIN), the rest goes here,
 * and the server asks to be told when the socket is writable again. The bytes
 * live in data[start, end): consuming moves `start`, appending moves `end`,
 * and the buffer compacts or grows only when it must.
 *
 * The length is what backpressure looks at: a server stops reading from a
 * client whose pending output is over a bound, so a client that never reads
 * cannot make the server's memory grow without limit.
 */
#ifndef COURSE_BUF_H
#define COURSE_BUF_H

#include <stddef.h>
#include <sys/types.h>

struct buf {
    char *data;
    size_t start; /* first byte not yet written out */
    size_t end;   /* one past the last byte appended */
    size_t cap;   /* bytes allocated at data */
};

#define BUF_INIT                                                                                   \
    {                                                                                              \
        NULL, 0, 0, 0                                                                              \
    }

void buf_init(struct buf *b);
void buf_free(struct buf *b);

static inline size_t buf_len(const struct buf *b)
{
    return b->end - b->start;
}
static inline const char *buf_peek(const struct buf *b)
{
    return b->data + b->start;
}

/* Append len bytes. Returns 0 or -ENOMEM (the buffer is unchanged then). */
int buf_append(struct buf *b, const void *data, size_t len);

/* Drop the first n bytes (n <= buf_len). */
void buf_consume(struct buf *b, size_t n);

/* Read once from fd into the buffer's free space, growing it to have at least
 * `want` free bytes. Returns the bytes read, 0 at EOF, or -errno (-EAGAIN
 * when a non-blocking fd has nothing). EINTR is retried. */
ssize_t buf_read_from(struct buf *b, int fd, size_t want);

/* Write as much pending output to fd as it takes. Returns 0 when the buffer
 * is empty, -EAGAIN when the fd is full and bytes remain (wait for it to be
 * writable), or another -errno on error. EINTR and short writes are retried. */
int buf_flush(struct buf *b, int fd);

#endif
