/* SPDX-License-Identifier: MIT */
/* uring-short.c: an LD_PRELOAD library that makes io_uring reads and writes
 * short, so the tests can prove a program handles them.
 *
 * A read of a cached regular file returns every byte asked for, except at the
 * end of the file; a write to one takes everything. So code that forgets the
 * short case passes every test on a quiet machine, and loses data the day a
 * signal, a full disk, a network filesystem or a FUSE mount says "only this
 * much". The faults shim in common/faults does the same for read() and
 * write(), but io_uring requests never pass through libc.
 *
 * They do pass through liburing. This library wraps io_uring_submit() and
 * io_uring_submit_and_wait(): before the real function hands the queued SQEs
 * to the kernel, it lowers the length of some READ, WRITE, READ_FIXED and
 * WRITE_FIXED requests. The kernel then really moves fewer bytes, at the
 * right offset, and the CQE says how many: exactly what a short read or write
 * looks like to the program, which still believes it asked for the full
 * length.
 *
 *   URING_SHORT_READ=P    shorten P percent of the reads (P is 0..100)
 *   URING_SHORT_WRITE=P   shorten P percent of the writes
 *   URING_SHORT_SEED=N    seed of the private random generator (default 1)
 *   URING_SHORT_LOG=FILE  at exit, append "pid=N short_reads=N short_writes=N" to FILE
 *
 *   LD_PRELOAD=build/chapters/07-io_uring-basics/uring-short.so URING_SHORT_READ=30 \
 *       build/chapters/07-io_uring-basics/uring-cp big copy
 *
 * Rules that keep it honest: a shortened request still moves at least one
 * byte, and one of 0 or 1 byte is never touched. A read with IOSQE_IO_LINK is
 * left alone: the kernel compares the result with the length it was given,
 * so it would see a full read and run the linked write, which a real short
 * read would have cancelled. (A read past the end of the file, as uring-cp -d
 * does for its last block, breaks a link for real.) It cannot reach programs
 * that use the raw system calls (uring-cat-raw) or link liburing statically.
 * It relies on struct io_uring's public fields (sq.sqes, sq.sqe_head,
 * sq.sqe_tail, sq.ring_mask): the SQEs queued since the last submit.
 */
#include <dlfcn.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static unsigned short_read_pct, short_write_pct;
static unsigned long long rng_state = 1, short_reads, short_writes;
static const char *log_path;

static int (*real_submit)(struct io_uring *);
static int (*real_submit_and_wait)(struct io_uring *, unsigned);

static unsigned env_pct(const char *name)
{
    const char *v = getenv(name);
    long p = v ? strtol(v, NULL, 10) : 0;
    return p < 0 ? 0 : p > 100 ? 100 : (unsigned)p;
}

__attribute__((constructor)) static void short_init(void)
{
    const char *seed = getenv("URING_SHORT_SEED");

    short_read_pct = env_pct("URING_SHORT_READ");
    short_write_pct = env_pct("URING_SHORT_WRITE");
    if (seed)
        rng_state = strtoull(seed, NULL, 10) | 1;
    log_path = getenv("URING_SHORT_LOG");
    real_submit = (int (*)(struct io_uring *))dlsym(RTLD_NEXT, "io_uring_submit");
    real_submit_and_wait =
        (int (*)(struct io_uring *, unsigned))dlsym(RTLD_NEXT, "io_uring_submit_and_wait");
}

__attribute__((destructor)) static void short_report(void)
{
    FILE *f;

    if (!log_path || !*log_path || !(f = fopen(log_path, "a")))
        return;
    fprintf(f, "pid=%d short_reads=%llu short_writes=%llu\n", (int)getpid(), short_reads,
            short_writes);
    fclose(f);
}

/* xorshift64: private, so the program's own rand() sequence is unchanged. */
static unsigned long long short_rand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Lower the length of some of the SQEs queued since the last submit. */
static void short_tamper(struct io_uring *ring)
{
    for (unsigned i = ring->sq.sqe_head; i != ring->sq.sqe_tail; i++) {
        struct io_uring_sqe *sqe = &ring->sq.sqes[i & ring->sq.ring_mask];
        unsigned pct;
        unsigned long long *count;

        switch (sqe->opcode) {
        case IORING_OP_READ:
        case IORING_OP_READ_FIXED:
            pct = short_read_pct, count = &short_reads;
            break;
        case IORING_OP_WRITE:
        case IORING_OP_WRITE_FIXED:
            pct = short_write_pct, count = &short_writes;
            break;
        default:
            continue;
        }
        if (sqe->len < 2 || (count == &short_reads && (sqe->flags & IOSQE_IO_LINK)) ||
            short_rand() % 100 >= pct)
            continue;
        sqe->len = 1 + (unsigned)(short_rand() % (sqe->len - 1)); /* 1 .. len-1 */
        (*count)++;
    }
}

int io_uring_submit(struct io_uring *ring)
{
    short_tamper(ring);
    return real_submit(ring);
}

int io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr)
{
    short_tamper(ring);
    return real_submit_and_wait(ring, wait_nr);
}
