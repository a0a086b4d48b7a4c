/* SPDX-License-Identifier: MIT */
/* test-buf.c: unit tests of common/buf.c, the pending-output buffer.
 *
 *   make -C common/tests && build/common/tests/test-buf
 *
 * What it proves: bytes come out of a buf exactly as they went in, through
 * growth, compaction and any mix of append and consume sizes; buf_flush()
 * stops at EAGAIN with the rest still pending and finishes once the peer
 * reads; buf_read_from() tells "nothing yet" (-EAGAIN) from EOF (0).
 *
 * Prints "ok - ..." or "not ok - ..." per test on stdout, and for every failed
 * check the expected and the actual value on stderr. Exit 0 when all pass,
 * 1 otherwise (77, skip, is never needed here).
 */
#include "buf.h"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------- */

/* Byte i of every stream in these tests: a hash of its position, so a lost,
 * repeated or reordered stretch cannot match by luck. */
static unsigned char pattern_byte(uint64_t i)
{
    return (unsigned char)((i * 0x9E3779B97F4A7C15ULL) >> 56);
}

static void pattern_fill(unsigned char *p, size_t len, uint64_t offset)
{
    for (size_t i = 0; i < len; i++)
        p[i] = pattern_byte(offset + i);
}

/* Compare p[0, len) with the pattern at `offset`; report the first mismatch. */
static int pattern_check(const char *what, const void *p, size_t len, uint64_t offset)
{
    const unsigned char *q = p;

    for (size_t i = 0; i < len; i++) {
        if (q[i] != pattern_byte(offset + i)) {
            fprintf(stderr, "%s: byte %llu: expected 0x%02x, got 0x%02x\n", what,
                    (unsigned long long)(offset + i), pattern_byte(offset + i), q[i]);
            check_failures++;
            return 0;
        }
    }
    return 1;
}

/* Append `len` pattern bytes starting at stream offset `offset`. */
static int append_pattern(struct buf *b, size_t len, uint64_t offset)
{
    static unsigned char piece[1 << 17];
    int ret = 0;

    while (len > 0 && ret == 0) {
        size_t n = len < sizeof(piece) ? len : sizeof(piece);
        pattern_fill(piece, n, offset);
        ret = buf_append(b, piece, n);
        offset += n;
        len -= n;
    }
    return ret;
}

static int is_doubling_of_4096(size_t cap)
{
    return cap >= 4096 && cap % 4096 == 0 && ((cap / 4096) & (cap / 4096 - 1)) == 0;
}

/* ---- the tests ------------------------------------------------------------- */

static void test_append_consume_keeps_order(void)
{
    /* Odd sizes on both sides, some larger than the initial 4 KiB, so appends
     * land across growth and compaction at every possible offset. */
    static const size_t append_sizes[] = {1, 7, 4093, 13, 65537, 3, 999, 131071, 17, 257};
    static const size_t consume_sizes[] = {5, 8191, 11, 49999, 2, 777, 100003};
    const uint64_t total = 10u << 20;
    const int before = check_failures;
    uint64_t appended = 0, consumed = 0;
    unsigned long step = 0, grew = 0, compacted = 0;
    struct buf b = BUF_INIT;

    while (appended < total && check_failures == before) {
        size_t n = append_sizes[step % 10], start_before = b.start, cap_before = b.cap;
        if (n > total - appended)
            n = (size_t)(total - appended);

        CHECK_EQ(0, append_pattern(&b, n, appended));
        appended += n;
        CHECK_EQ(appended - consumed, buf_len(&b));
        CHECK(b.cap >= b.end && b.end >= b.start);
        if (b.cap != cap_before) {
            grew++;
            /* Doubling from 4 KiB: never more than twice what is held. */
            CHECK(is_doubling_of_4096(b.cap));
            CHECK(b.cap == 4096 || b.cap < 2 * buf_len(&b));
        } else if (start_before > 0 && b.start == 0) {
            compacted++;
        }

        /* Consume two steps out of three, so the buffer still grows overall. */
        if (step % 3 != 2) {
            size_t c = consume_sizes[step % 7];
            if (c > buf_len(&b))
                c = buf_len(&b);
            pattern_check("buf_peek before buf_consume", buf_peek(&b), c, consumed);
            buf_consume(&b, c);
            consumed += c;
        }
        step++;
    }
    pattern_check("buf_peek of the rest", buf_peek(&b), buf_len(&b), consumed);
    consumed += buf_len(&b);
    buf_consume(&b, buf_len(&b));

    CHECK_EQ(total, consumed);
    CHECK_EQ(0, buf_len(&b));
    CHECK_EQ(0, b.start); /* empty: back to the front, so no memmove is ever needed */
    CHECK(grew > 0);      /* otherwise this test proved nothing about growth... */
    CHECK(compacted > 0); /* ...or compaction */
    buf_free(&b);
    CHECK(b.data == NULL && b.cap == 0);
    check_report("10 MiB appended and consumed in odd sizes come out intact and in order", before);
}

static void test_compaction_before_growth(void)
{
    const int before = check_failures;
    struct buf b;

    buf_init(&b);
    CHECK_EQ(0, append_pattern(&b, 3000, 0));
    CHECK_EQ(4096, b.cap);
    buf_consume(&b, 2000);
    CHECK_EQ(2000, b.start);

    /* 1096 bytes free at the end, 2000 wanted: sliding the 1000 pending bytes
     * to the front makes room, so the buffer must not grow. */
    CHECK_EQ(0, append_pattern(&b, 2000, 3000));
    CHECK_EQ(4096, b.cap);
    CHECK_EQ(0, b.start);
    CHECK_EQ(3000, buf_len(&b));
    pattern_check("after compaction", buf_peek(&b), buf_len(&b), 2000);

    buf_consume(&b, 1 << 20); /* more than held: clamps to empty */
    CHECK_EQ(0, buf_len(&b));
    CHECK_EQ(0, b.end);
    buf_free(&b);
    check_report("compaction slides pending bytes to the front instead of growing", before);
}

static void test_failed_append_changes_nothing(void)
{
    const int before = check_failures;
    struct buf b = BUF_INIT;
    size_t cap;

    CHECK_EQ(0, buf_append(&b, NULL, 0)); /* nothing to do, nothing allocated */
    CHECK(b.data == NULL);
    CHECK_EQ(-ENOMEM, buf_append(&b, "x", SIZE_MAX)); /* empty buffer, impossible size */
    CHECK(b.data == NULL);

    CHECK_EQ(0, append_pattern(&b, 100, 0));
    cap = b.cap;
    CHECK_EQ(-ENOMEM, buf_append(&b, "x", SIZE_MAX - 50)); /* len + extra overflows */
    CHECK_EQ(100, buf_len(&b));
    CHECK_EQ(cap, b.cap);
    pattern_check("after a failed append", buf_peek(&b), buf_len(&b), 0);
    buf_free(&b);
    check_report("an append that cannot fit fails with -ENOMEM and leaves the buffer as it was",
                 before);
}

/* Read whatever the peer has without blocking; check it against the pattern. */
static uint64_t drain(int fd, uint64_t offset)
{
    static char chunk[1 << 16];
    uint64_t got = 0;
    ssize_t n;

    while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
        if (!pattern_check("bytes read by the peer", chunk, (size_t)n, offset + got))
            break;
        got += (uint64_t)n;
    }
    if (n < 0 && errno != EAGAIN)
        CHECK_EQ(-EAGAIN, -errno);
    return got;
}

static void test_flush_stops_at_eagain_and_resumes(void)
{
    const size_t total = 4u << 20; /* far more than a socket buffer holds */
    const int before = check_failures;
    struct buf b = BUF_INIT;
    uint64_t received = 0;
    int sv[2], ret, rounds = 0;

    if (!CHECK_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv)))
        goto out;
    CHECK_EQ(0, append_pattern(&b, total, 0));

    /* The peer is not reading: the kernel takes what fits, then says EAGAIN. */
    ret = buf_flush(&b, sv[0]);
    CHECK_EQ(-EAGAIN, ret);
    CHECK(buf_len(&b) > 0);                  /* bytes still pending... */
    CHECK(buf_len(&b) < total);              /* ...after some went out */
    CHECK_EQ(-EAGAIN, buf_flush(&b, sv[0])); /* still full: nothing changes */

    /* Now the peer reads whatever is there, and each flush sends more. */
    while (ret == -EAGAIN && rounds++ < 100000 && check_failures == before) {
        received += drain(sv[1], received);
        ret = buf_flush(&b, sv[0]);
    }
    CHECK_EQ(0, ret);
    CHECK_EQ(0, buf_len(&b));
    received += drain(sv[1], received);
    CHECK_EQ(total, received);

    /* A peer that has gone: EPIPE (SIGPIPE is ignored in main), nothing lost. */
    CHECK_EQ(0, append_pattern(&b, 1000, 0));
    close(sv[1]);
    CHECK_EQ(-EPIPE, buf_flush(&b, sv[0]));
    CHECK_EQ(1000, buf_len(&b));
    close(sv[0]);
    buf_free(&b);

    CHECK_EQ(0, buf_flush(&b, -1)); /* empty: returns before touching the fd */
out:
    check_report("buf_flush stops at EAGAIN with bytes pending and finishes once the peer reads",
                 before);
}

static void test_read_from_eagain_then_eof(void)
{
    const int before = check_failures;
    struct buf b = BUF_INIT;
    int sv[2];

    if (!CHECK_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv)))
        goto out;

    CHECK_EQ(-EAGAIN, buf_read_from(&b, sv[1], 1)); /* nothing sent yet */
    CHECK_EQ(0, buf_len(&b));

    CHECK_EQ(5, write(sv[0], "hello", 5));
    CHECK_EQ(5, buf_read_from(&b, sv[1], 1));
    CHECK_EQ(5, buf_len(&b));
    CHECK(memcmp(buf_peek(&b), "hello", 5) == 0);

    /* New bytes land after the ones still pending, and `want` is honoured. */
    CHECK_EQ(6, write(sv[0], " world", 6));
    CHECK_EQ(6, buf_read_from(&b, sv[1], 100000));
    CHECK(b.cap >= 5 + 100000);
    CHECK_EQ(11, buf_len(&b));
    CHECK(memcmp(buf_peek(&b), "hello world", 11) == 0);

    CHECK_EQ(0, shutdown(sv[0], SHUT_WR));
    CHECK_EQ(0, buf_read_from(&b, sv[1], 1)); /* EOF: 0, not -EAGAIN */
    CHECK_EQ(11, buf_len(&b));                /* and the buffer is untouched */
    close(sv[0]);
    close(sv[1]);

    CHECK_EQ(-EBADF, buf_read_from(&b, -1, 1));
    buf_free(&b);
out:
    check_report("buf_read_from tells 'nothing yet' (-EAGAIN) from end of stream (0)", before);
}

int main(void)
{
    /* A hang is a failure too: die loudly rather than let the runner wait. */
    alarm(120);
    /* A write to a closed socket must fail with EPIPE, not kill the test. */
    signal(SIGPIPE, SIG_IGN);

    test_append_consume_keeps_order();
    test_compaction_before_growth();
    test_failed_append_changes_nothing();
    test_flush_stops_at_eagain_and_resumes();
    test_read_from_eagain_then_eof();

    if (check_failures)
        fprintf(stderr, "test-buf: %d check(s) failed\n", check_failures);
    return check_exit();
}
