/* SPDX-License-Identifier: MIT */
/* uring-short.c: an LD_PRELOAD library that makes io_uring reads, writes and
 * sends short, ends a file early, and answers some recvs and sends with
 * -EINTR or -EAGAIN, so the tests can prove a program handles all of it.
 *
 * A read of a cached regular file returns every byte asked for, except at the
 * end of the file; a write to one takes everything; a send on a quiet
 * loopback socket too. So code that forgets the short case passes every test
 * on a quiet machine, and loses data the day a signal, a full disk, a network
 * filesystem or a FUSE mount says "only this much". The faults shim in
 * common/faults does the same for read() and write(), but io_uring requests
 * never pass through libc.
 *
 * They do pass through liburing. This library wraps the four calls of
 * liburing that hand the queued SQEs to the kernel: io_uring_submit() and
 * io_uring_submit_and_wait() (chapters 07 and 08), and
 * io_uring_submit_and_wait_timeout() and io_uring_submit_and_get_events()
 * (chapter 11's cio, so chapter 13's runtime too). Each needs its own
 * wrapper: liburing submits from inside them with a private function, not
 * through the exported io_uring_submit(). Before the real function hands
 * the SQEs to the kernel, the wrapper changes some of them.
 *   - It lowers the length of some READ, WRITE, READ_FIXED, WRITE_FIXED and
 *     SEND requests. The kernel then really moves fewer bytes, at the right
 *     offset, and the CQE says how many: exactly what a short read, write or
 *     send looks like to the program, which still believes it asked for the
 *     full length.
 *   - With URING_SHORT_EOF=N it makes the source file end at byte N: a read
 *     that reaches past N is shortened to end there, and one that starts at N
 *     or later asks for 0 bytes, so its CQE says 0, as if the file had been
 *     truncated to N while the program copied it.
 *   - It turns some single-shot RECV and SEND requests into a NOP that
 *     completes with -EINTR or -EAGAIN (IORING_NOP_INJECT_RESULT, which
 *     recent kernels have), with the same user_data: the program sees that
 *     recv or send fail with the error, and nothing was received or sent.
 *     With URING_SHORT_ENOBUFS it does the same to multishot recvs that
 *     pick a provided buffer (chapter 08), with -ENOBUFS: such a recv ends
 *     at once, as one does when bytes come and the ring is empty.
 *
 *   URING_SHORT_READ=P    shorten P percent of the reads (P is 0..100)
 *   URING_SHORT_WRITE=P   shorten P percent of the writes
 *   URING_SHORT_SEND=P    shorten P percent of the sends
 *   URING_SHORT_EINTR=P   P percent of the recvs and sends complete with -EINTR
 *   URING_SHORT_EAGAIN=P  P percent of the recvs and sends complete with -EAGAIN
 *   URING_SHORT_ENOBUFS=P P percent of the recvs with a provided buffer end with -ENOBUFS
 *   URING_SHORT_EOF=N     reads see a file that ends at byte N
 *   URING_SHORT_SEED=N    seed of the private random generator (default 1)
 *   URING_SHORT_LOG=FILE  at exit, append "pid=N short_reads=N short_writes=N
 *                         short_sends=N eintr=N eagain=N enobufs=N
 *                         eof_reads=N links_cut=N read_bytes=N write_bytes=N
 *                         buffer_recvs=N" to FILE
 *
 *   LD_PRELOAD=build/chapters/07-io_uring-basics/uring-short.so URING_SHORT_READ=30 \
 *       build/chapters/07-io_uring-basics/uring-cp big copy
 *
 * It also counts, as links_cut, the submissions whose last SQE carries
 * IOSQE_IO_LINK: a chain cut in two by a submission, whose second half the
 * kernel will run whatever the first did. And it adds up the bytes the reads
 * and the writes ask for (read_bytes, write_bytes, after any shortening): a
 * copy of a cached file that reads and writes every byte once asks for its
 * size in each, however often its requests come back short. It counts too,
 * as buffer_recvs, the recvs that pick a provided buffer, the only ones
 * URING_SHORT_ENOBUFS can end: a test learns from it whether the program
 * uses provided buffers at all, and so whether -ENOBUFS must have come.
 *
 * Rules that keep it honest: a shortened request still moves at least one
 * byte, and one of 0 or 1 byte is never touched. A read with IOSQE_IO_LINK is
 * left alone: the kernel compares the result with the length it was given,
 * so it would see a full read and run the linked write, which a real short
 * read would have cancelled. (A read past the end of the file, as uring-cp -d
 * does for its last block, breaks a link for real.) A multishot recv, or one
 * that picks a provided buffer, is turned into a NOP only by
 * URING_SHORT_ENOBUFS. Where the kernel
 * cannot inject a result, no recv or send is touched and the log says
 * inject_unsupported=1. It cannot reach programs that use the raw system
 * calls (uring-cat-raw) or link liburing statically. It relies on struct
 * io_uring's public fields (sq.sqes, sq.sqe_head, sq.sqe_tail,
 * sq.ring_mask): the SQEs queued since the last submit. Those are changed
 * once: liburing's own wait with a timeout, on a kernel older than 5.11,
 * may call io_uring_submit() from inside io_uring_submit_and_wait_timeout(),
 * and that inner call leaves them alone. (io_uring_wait_cqe_timeout() on
 * such a kernel submits what is queued too, past the wrappers; the course's
 * servers call it only after a submit, with nothing queued.)
 */
#include <dlfcn.h>
#include <errno.h>
#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Not in liburing 2.3's headers: a NOP with this flag in sqe->nop_flags (the
 * same field as rw_flags) completes with the result held in sqe->len. */
#ifndef IORING_NOP_INJECT_RESULT
#define IORING_NOP_INJECT_RESULT (1U << 0)
#endif

static unsigned short_read_pct, short_write_pct, short_send_pct, eintr_pct, eagain_pct, enobufs_pct;
static unsigned long long rng_state = 1, eof_at = UINT64_MAX;
static unsigned long long short_reads, short_writes, short_sends, eintrs, eagains, enobufs,
    eof_reads, links_cut, read_bytes, write_bytes, buffer_recvs;
static int inject_unsupported;
static const char *log_path;

static int (*real_submit)(struct io_uring *);
static int (*real_submit_and_wait)(struct io_uring *, unsigned);
static int (*real_submit_and_wait_timeout)(struct io_uring *, struct io_uring_cqe **, unsigned,
                                           struct __kernel_timespec *, sigset_t *);
static int (*real_submit_and_get_events)(struct io_uring *);
static __thread int in_submit; /* inside one of our wrappers: the SQEs are already changed */

static unsigned env_pct(const char *name)
{
    const char *v = getenv(name);
    long p = v ? strtol(v, NULL, 10) : 0;
    return p < 0 ? 0 : p > 100 ? 100 : (unsigned)p;
}

/* Does this kernel complete a NOP with the result we give it? Asked
 * once, on a ring of our own, before the program's first submit. */
static int short_can_inject(void)
{
    struct io_uring ring;
    struct io_uring_sqe *sqe;
    struct io_uring_cqe *cqe;
    int ok = 0;

    if (io_uring_queue_init(2, &ring, 0) < 0)
        return 0;
    sqe = io_uring_get_sqe(&ring);
    io_uring_prep_nop(sqe);
    sqe->rw_flags = IORING_NOP_INJECT_RESULT;
    sqe->len = (unsigned)-EINTR;
    if (real_submit_and_wait(&ring, 1) == 1 && io_uring_peek_cqe(&ring, &cqe) == 0)
        ok = cqe->res == -EINTR;
    io_uring_queue_exit(&ring);
    return ok;
}

__attribute__((constructor)) static void short_init(void)
{
    const char *seed = getenv("URING_SHORT_SEED"), *eof = getenv("URING_SHORT_EOF");

    short_read_pct = env_pct("URING_SHORT_READ");
    short_write_pct = env_pct("URING_SHORT_WRITE");
    short_send_pct = env_pct("URING_SHORT_SEND");
    eintr_pct = env_pct("URING_SHORT_EINTR");
    eagain_pct = env_pct("URING_SHORT_EAGAIN");
    enobufs_pct = env_pct("URING_SHORT_ENOBUFS");
    if (seed)
        rng_state = strtoull(seed, NULL, 10) | 1;
    if (eof && *eof)
        eof_at = strtoull(eof, NULL, 10);
    log_path = getenv("URING_SHORT_LOG");
    real_submit = (int (*)(struct io_uring *))dlsym(RTLD_NEXT, "io_uring_submit");
    real_submit_and_wait =
        (int (*)(struct io_uring *, unsigned))dlsym(RTLD_NEXT, "io_uring_submit_and_wait");
    /* liburing 2.2 and 2.3 added these: NULL with an older one, whose
     * programs cannot call them either */
    real_submit_and_wait_timeout =
        (int (*)(struct io_uring *, struct io_uring_cqe **, unsigned, struct __kernel_timespec *,
                 sigset_t *))dlsym(RTLD_NEXT, "io_uring_submit_and_wait_timeout");
    real_submit_and_get_events =
        (int (*)(struct io_uring *))dlsym(RTLD_NEXT, "io_uring_submit_and_get_events");
    if ((eintr_pct || eagain_pct || enobufs_pct) && !short_can_inject()) {
        inject_unsupported = 1;
        eintr_pct = eagain_pct = enobufs_pct = 0;
    }
}

__attribute__((destructor)) static void short_report(void)
{
    FILE *f;

    if (!log_path || !*log_path || !(f = fopen(log_path, "a")))
        return;
    fprintf(f,
            "pid=%d short_reads=%llu short_writes=%llu short_sends=%llu eintr=%llu eagain=%llu "
            "enobufs=%llu eof_reads=%llu links_cut=%llu read_bytes=%llu write_bytes=%llu "
            "buffer_recvs=%llu%s\n",
            (int)getpid(), short_reads, short_writes, short_sends, eintrs, eagains, enobufs,
            eof_reads, links_cut, read_bytes, write_bytes, buffer_recvs,
            inject_unsupported ? " inject_unsupported=1" : "");
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

/* A read of the source past URING_SHORT_EOF: stop it there. */
static void short_eof(struct io_uring_sqe *sqe)
{
    if (sqe->off >= eof_at)
        sqe->len = 0; /* starts past the end: the CQE says 0 */
    else if (sqe->off + sqe->len > eof_at)
        sqe->len = (unsigned)(eof_at - sqe->off); /* reaches past it: short */
    else
        return;
    eof_reads++;
}

/* A recv or send: maybe make it a NOP that fails with -EINTR or -EAGAIN
 * (single-shot ones), or -ENOBUFS (a recv that picks a provided buffer). Its
 * user_data stays, so the CQE goes where the real one would; a NOP's CQE
 * has no flags, so a multishot recv ends with it. */
static int short_inject(struct io_uring_sqe *sqe)
{
    unsigned long long ud = sqe->user_data;
    int err;

    if (sqe->opcode == IORING_OP_RECV &&
        ((sqe->ioprio & IORING_RECV_MULTISHOT) || (sqe->flags & IOSQE_BUFFER_SELECT))) {
        buffer_recvs++;
        if (!enobufs_pct || short_rand() % 100 >= enobufs_pct)
            return 0;
        err = ENOBUFS, enobufs++;
    } else if (eintr_pct && short_rand() % 100 < eintr_pct)
        err = EINTR, eintrs++;
    else if (eagain_pct && short_rand() % 100 < eagain_pct)
        err = EAGAIN, eagains++;
    else
        return 0;
    io_uring_prep_nop(sqe);
    sqe->rw_flags = IORING_NOP_INJECT_RESULT;
    sqe->len = (unsigned)-err;
    sqe->user_data = ud;
    return 1;
}

/* Change some of the SQEs queued since the last submit. */
static void short_tamper(struct io_uring *ring)
{
    struct io_uring_sqe *sqe = NULL;

    for (unsigned i = ring->sq.sqe_head; i != ring->sq.sqe_tail; i++) {
        unsigned pct;
        unsigned long long *count;

        sqe = &ring->sq.sqes[i & ring->sq.ring_mask];
        switch (sqe->opcode) {
        case IORING_OP_READ:
        case IORING_OP_READ_FIXED:
            if (eof_at != UINT64_MAX && !(sqe->flags & IOSQE_IO_LINK))
                short_eof(sqe);
            pct = short_read_pct, count = &short_reads;
            break;
        case IORING_OP_WRITE:
        case IORING_OP_WRITE_FIXED:
            pct = short_write_pct, count = &short_writes;
            break;
        case IORING_OP_RECV:
            short_inject(sqe);
            continue;
        case IORING_OP_SEND:
            if (short_inject(sqe))
                continue;
            pct = short_send_pct, count = &short_sends;
            break;
        default:
            continue;
        }
        if (sqe->len >= 2 && !(count == &short_reads && (sqe->flags & IOSQE_IO_LINK)) &&
            short_rand() % 100 < pct) {
            sqe->len = 1 + (unsigned)(short_rand() % (sqe->len - 1)); /* 1 .. len-1 */
            (*count)++;
        }
        if (count == &short_reads)
            read_bytes += sqe->len;
        else if (count == &short_writes)
            write_bytes += sqe->len;
    }
    if (sqe && (sqe->flags & IOSQE_IO_LINK))
        links_cut++; /* the chain's next SQE is not in this submission */
}

int io_uring_submit(struct io_uring *ring)
{
    int ret;

    if (!in_submit++)
        short_tamper(ring);
    ret = real_submit(ring);
    in_submit--;
    return ret;
}

int io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr)
{
    int ret;

    if (!in_submit++)
        short_tamper(ring);
    ret = real_submit_and_wait(ring, wait_nr);
    in_submit--;
    return ret;
}

int io_uring_submit_and_wait_timeout(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
                                     unsigned wait_nr, struct __kernel_timespec *ts,
                                     sigset_t *sigmask)
{
    int ret;

    if (!in_submit++)
        short_tamper(ring);
    ret = real_submit_and_wait_timeout(ring, cqe_ptr, wait_nr, ts, sigmask);
    in_submit--;
    return ret;
}

int io_uring_submit_and_get_events(struct io_uring *ring)
{
    int ret;

    if (!in_submit++)
        short_tamper(ring);
    ret = real_submit_and_get_events(ring);
    in_submit--;
    return ret;
}
