/* SPDX-License-Identifier: MIT */
/* faults.c: an LD_PRELOAD shim that makes socket I/O misbehave the
 * ways the kernel is allowed to: short reads, short writes, EINTR and EAGAIN;
 * and condition variables the way POSIX allows: spurious wake-ups.
 *
 * On a quiet loopback a 100-byte write() always writes 100 bytes, so a server
 * that forgets to loop over short writes passes every test and then loses
 * data in production. This library sits between a program and libc and, with
 * the probabilities you give it, hands the kernel a smaller length (a short
 * count comes back) or fails the call with EINTR or EAGAIN before the kernel
 * sees it. Correct code shrugs; code that assumed "all or nothing" breaks
 * where you can watch it.
 *
 *   make -C common/faults
 *   FAULTS_SHORT_WRITE=50 LD_PRELOAD=build/common/faults/libfaults.so ./prog
 *
 * Variables (read once, when the library is loaded):
 *   FAULTS_SHORT_READ=P    read/recv/recvfrom/readv/recvmsg return fewer bytes
 *                          than asked, P percent of the time (P is 0..100)
 *   FAULTS_SHORT_WRITE=P   write/send/sendto/writev/sendmsg take only part
 *   FAULTS_EINTR=P         the call fails with EINTR, having done nothing
 *   FAULTS_EAGAIN=P        the call fails with EAGAIN, having done nothing, but
 *                          only on a non-blocking fd or with MSG_DONTWAIT
 *   FAULTS_SPURIOUS_WAKEUP=P  pthread_cond_wait and pthread_cond_timedwait
 *                          return 0 at once, without a signal, P percent of the
 *                          time: the mutex is unlocked, the thread yields, the
 *                          mutex is locked again (a wait that sits in an `if`
 *                          instead of a `while` then goes on with its condition
 *                          false)
 *   FAULTS_LATE_WAIT=MS    every pthread_cond_wait and pthread_cond_timedwait
 *                          first sleeps MS milliseconds (0..10000) holding the
 *                          mutex, as a thread preempted between testing its
 *                          condition and waiting would: a condition changed
 *                          (or signalled) without the mutex in that moment is
 *                          a wake-up lost, every time
 *   FAULTS_LATE_WAIT_MARK=FILE  append one byte to FILE as each late wait
 *                          begins, so a test knows a thread is in that moment
 *   FAULTS_SEED=N          seed of the private random generator (default 1)
 *   FAULTS_FDS=all         misbehave on every fd, not only on sockets
 *   FAULTS_LOG=FILE        at exit, append "pid=N short_reads=N short_writes=N
 *                          eintr=N eagain=N calls=N spurious=N cond_waits=N
 *                          late_waits=N"
 *                          to FILE
 *
 * Rules that keep the shim honest (it must only do what a kernel may do):
 *   - a short count is at least 1 byte, and a 0- or 1-byte call is never
 *     shortened; a zero-length call gets no fault at all;
 *   - EAGAIN never on a blocking call: a blocking read cannot say "try later";
 *   - short counts only on byte streams (stream sockets, pipes, regular files):
 *     cutting a datagram or an eventfd read would lose or break data, which
 *     the kernel never does to a caller that gave a big enough buffer;
 *   - no short count when recv*() asked for MSG_WAITALL;
 *   - a spurious wake-up returns 0 with the mutex held again, as POSIX says a
 *     wait returns; it never fails, and never reports a timeout it did not wait;
 *   - a late wait only delays a thread where the scheduler may: it still holds
 *     the mutex, so nothing that respects the mutex can tell.
 *
 * What it cannot reach: statically linked programs, system calls made without
 * the libc wrappers (io_uring, syscall(2)), and calls libc makes internally
 * (stdio's own writes go straight to the kernel, past this library);
 * among condition waits, pthread_cond_clockwait() and C11's cnd_wait().
 * See README.md beside this file.
 */

/* The wrappers below define read() and friends; glibc's fortified inline
 * versions of the same names would collide with them. */
#undef _FORTIFY_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* The hot path may run in a signal handler: everything it touches must be
 * lock-free, or it could deadlock where the real call would not. */
_Static_assert(ATOMIC_LONG_LOCK_FREE == 2, "counters must be lock-free");
_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2, "function pointers must be lock-free");

/* glibc's fortified callers (-D_FORTIFY_SOURCE, the default on some distributions)
 * call these instead of read()/recv()/recvfrom() when the buffer size is known,
 * so they are wrapped too. Not declared by the headers once fortify is off. */
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags, __SOCKADDR_ARG addr,
                       socklen_t *addrlen);

/* ---- configuration ------------------------------------------------------ */

static struct {
    unsigned short_read;   /* percent, 0..100 */
    unsigned short_write;  /* percent */
    unsigned eintr;        /* percent */
    unsigned eagain;       /* percent */
    unsigned spurious;     /* percent of condition waits that return at once */
    unsigned late_wait_ms; /* each condition wait sleeps this long first */
    int late_mark_fd;      /* FAULTS_LATE_WAIT_MARK, or -1 */
    int all_fds;           /* FAULTS_FDS=all */
    uint64_t seed;
    char log_path[PATH_MAX]; /* empty: no log */
} faults__cfg = {.seed = 1, .late_mark_fd = -1};

/* One counter per kind of fault, plus every call that went through a wrapper
 * (whether or not it was eligible), so a test can tell "the shim was loaded
 * but never fired" from "the shim was not loaded". */
static atomic_ulong faults__short_reads, faults__short_writes, faults__eintrs, faults__eagains,
    faults__calls;
/* Condition waits: the spurious wake-ups made, and every wait that went
 * through a wrapper (the proof that the program waited at all). */
static atomic_ulong faults__spurious, faults__cond_waits, faults__late_waits;

/* ---- the real functions --------------------------------------------------- */

enum faults__fn {
    FAULTS_READ,
    FAULTS_READ_CHK,
    FAULTS_READV,
    FAULTS_RECV,
    FAULTS_RECV_CHK,
    FAULTS_RECVFROM,
    FAULTS_RECVFROM_CHK,
    FAULTS_RECVMSG,
    FAULTS_WRITE,
    FAULTS_WRITEV,
    FAULTS_SEND,
    FAULTS_SENDTO,
    FAULTS_SENDMSG,
    FAULTS_NFN
};

static const char *const faults__names[FAULTS_NFN] = {
    [FAULTS_READ] = "read",
    [FAULTS_READ_CHK] = "__read_chk",
    [FAULTS_READV] = "readv",
    [FAULTS_RECV] = "recv",
    [FAULTS_RECV_CHK] = "__recv_chk",
    [FAULTS_RECVFROM] = "recvfrom",
    [FAULTS_RECVFROM_CHK] = "__recvfrom_chk",
    [FAULTS_RECVMSG] = "recvmsg",
    [FAULTS_WRITE] = "write",
    [FAULTS_WRITEV] = "writev",
    [FAULTS_SEND] = "send",
    [FAULTS_SENDTO] = "sendto",
    [FAULTS_SENDMSG] = "sendmsg",
};

static _Atomic(void *) faults__real[FAULTS_NFN];

/* The next definition of `fn` after this library: libc's, or a sanitizer's
 * interceptor that then calls libc's. The constructor resolves them all, so
 * the dlsym() here (which takes a lock) only runs for calls made before it,
 * from other libraries' constructors. Two threads racing here store the same
 * pointer, so a plain atomic store is enough. */
static void *faults__sym(enum faults__fn fn)
{
    void *p = atomic_load_explicit(&faults__real[fn], memory_order_acquire);

    if (!p) {
        p = dlsym(RTLD_NEXT, faults__names[fn]);
        atomic_store_explicit(&faults__real[fn], p, memory_order_release);
    }
    return p;
}

/* ---- randomness ------------------------------------------------------------ */

/* xorshift64*, one state per thread: no lock, no data race, and a
 * single-threaded program sees the same faults for the same FAULTS_SEED.
 * initial-exec TLS because the default model for a shared library may call
 * malloc() on a thread's first access, and this runs in signal handlers;
 * a preloaded library is loaded at start-up, where initial-exec is allowed. */
static _Thread_local uint64_t faults__rng_state __attribute__((tls_model("initial-exec")));
static atomic_uint faults__rng_threads; /* how many threads have seeded so far */

static uint64_t faults__splitmix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

static uint64_t faults__random(void)
{
    uint64_t x = faults__rng_state;

    if (x == 0) {
        /* Each thread gets its own stream: seed mixed with the thread's rank. */
        unsigned rank = atomic_fetch_add_explicit(&faults__rng_threads, 1, memory_order_relaxed);
        x = faults__splitmix(faults__cfg.seed + 0x632BE59BD9B4E019ULL * rank);
        if (x == 0)
            x = 1; /* xorshift's one forbidden state */
    }
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    faults__rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* True with probability percent/100. */
static int faults__roll(unsigned percent)
{
    if (percent == 0)
        return 0;
    if (percent >= 100)
        return 1;
    return (faults__random() >> 32) % 100 < percent;
}

/* ---- deciding what to do to one call -------------------------------------- */

enum faults__dir { FAULTS_IN, FAULTS_OUT };

/* What a wrapper should do: fail with `err`, or go on with `len` bytes. */
struct faults__plan {
    int err;
    size_t len;
};

static int faults__nonblocking(int fd, int msg_flags)
{
    int fl;

    if (msg_flags & MSG_DONTWAIT)
        return 1;
    fl = fcntl(fd, F_GETFL);
    return fl >= 0 && (fl & O_NONBLOCK);
}

/* Could the kernel itself return a short count here? Yes for byte streams;
 * no for datagrams (a cut datagram loses its tail), for anonymous-inode fds
 * like eventfd or timerfd (a short length is EINVAL there), and for
 * MSG_WAITALL, which promises the full length unless a signal or EOF comes. */
static int faults__may_shorten(int fd, const struct stat *st, int msg_flags)
{
    int type;
    socklen_t len = sizeof(type);

    if (S_ISREG(st->st_mode) || S_ISFIFO(st->st_mode))
        return 1;
    if (!S_ISSOCK(st->st_mode) || (msg_flags & MSG_WAITALL))
        return 0;
    return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM;
}

/* Every wrapper calls this once. `len` is the total the caller asked for,
 * 0 when the call must be passed through untouched. Only fstat/fcntl/
 * getsockopt and atomics: all async-signal-safe, no locks, no malloc. */
static struct faults__plan faults__decide(enum faults__dir dir, int fd, int msg_flags, size_t len)
{
    struct faults__plan plan = {0, len};
    unsigned short_pct = dir == FAULTS_IN ? faults__cfg.short_read : faults__cfg.short_write;
    struct stat st;
    int saved_errno;

    atomic_fetch_add_explicit(&faults__calls, 1, memory_order_relaxed);
    if (len == 0 || (short_pct == 0 && faults__cfg.eintr == 0 && faults__cfg.eagain == 0))
        return plan;

    /* Our own probing must not leave a trace in errno: a call that succeeds
     * after it has to look exactly like the real call alone. */
    saved_errno = errno;
    if (fstat(fd, &st) < 0)
        goto out; /* a bad fd: let the real call report it */
    if (!faults__cfg.all_fds && !S_ISSOCK(st.st_mode))
        goto out; /* stdout, files, pipes: left alone unless FAULTS_FDS=all */

    if (faults__roll(faults__cfg.eintr)) {
        atomic_fetch_add_explicit(&faults__eintrs, 1, memory_order_relaxed);
        plan.err = EINTR;
        goto out;
    }
    if (faults__cfg.eagain && faults__nonblocking(fd, msg_flags) &&
        faults__roll(faults__cfg.eagain)) {
        atomic_fetch_add_explicit(&faults__eagains, 1, memory_order_relaxed);
        plan.err = EAGAIN;
        goto out;
    }
    if (len >= 2 && faults__roll(short_pct) && faults__may_shorten(fd, &st, msg_flags)) {
        plan.len = 1 + faults__random() % (len - 1); /* uniform in [1, len-1] */
        atomic_fetch_add_explicit(dir == FAULTS_IN ? &faults__short_reads : &faults__short_writes,
                                  1, memory_order_relaxed);
    }
out:
    errno = saved_errno;
    return plan;
}

static ssize_t faults__fail(int err)
{
    errno = err;
    return -1;
}

/* ---- iovec helpers ------------------------------------------------------- */

/* Total length of an iovec array, or 0 if the call should pass untouched: a
 * count the kernel would refuse (EINVAL), a sum past SSIZE_MAX (EINVAL too)
 * or a NULL array (EFAULT). The real call then gives the real error. */
static size_t faults__iov_total(const struct iovec *iov, size_t cnt)
{
    size_t total = 0;

    if (!iov || cnt > IOV_MAX)
        return 0;
    for (size_t i = 0; i < cnt; i++) {
        if (iov[i].iov_len > (size_t)SSIZE_MAX - total)
            return 0;
        total += iov[i].iov_len;
    }
    return total;
}

/* How many entries the first `keep` bytes span (keep is less than the total). */
static size_t faults__iov_span(const struct iovec *iov, size_t keep)
{
    size_t n = 0;

    while (keep > iov[n].iov_len)
        keep -= iov[n++].iov_len;
    return n + 1;
}

/* Copy the first `n` entries, the last cut so that `keep` bytes remain. */
static void faults__iov_trim(const struct iovec *iov, size_t n, size_t keep, struct iovec *out)
{
    for (size_t i = 0; i < n; i++) {
        out[i] = iov[i];
        if (i + 1 < n)
            keep -= iov[i].iov_len;
    }
    out[n - 1].iov_len = keep;
}

/* ---- the wrappers: reads ---------------------------------------------------- */

typedef ssize_t (*faults__read_fn)(int, void *, size_t);
typedef ssize_t (*faults__read_chk_fn)(int, void *, size_t, size_t);
typedef ssize_t (*faults__readv_fn)(int, const struct iovec *, int);
typedef ssize_t (*faults__recv_fn)(int, void *, size_t, int);
typedef ssize_t (*faults__recv_chk_fn)(int, void *, size_t, size_t, int);
/* __SOCKADDR_ARG is glibc's transparent union for struct sockaddr pointers;
 * the definitions must match the headers' declarations exactly. */
typedef ssize_t (*faults__recvfrom_fn)(int, void *, size_t, int, __SOCKADDR_ARG, socklen_t *);
typedef ssize_t (*faults__recvfrom_chk_fn)(int, void *, size_t, size_t, int, __SOCKADDR_ARG,
                                           socklen_t *);
typedef ssize_t (*faults__recvmsg_fn)(int, struct msghdr *, int);

ssize_t read(int fd, void *buf, size_t len)
{
    faults__read_fn real = (faults__read_fn)faults__sym(FAULTS_READ);
    struct faults__plan plan;

    if (!real)
        return faults__fail(ENOSYS);
    plan = faults__decide(FAULTS_IN, fd, 0, len);
    if (plan.err)
        return faults__fail(plan.err);
    return real(fd, buf, plan.len);
}

ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
    faults__read_chk_fn real = (faults__read_chk_fn)faults__sym(FAULTS_READ_CHK);
    struct faults__plan plan;

    if (!real)
        return faults__fail(ENOSYS);
    /* An overflowing call must reach the real check and abort, untouched:
     * shortened, it could happen to fit and hide the bug. */
    if (len > buflen) {
        faults__decide(FAULTS_IN, fd, 0, 0); /* counted, never faulted */
        return real(fd, buf, len, buflen);
    }
    plan = faults__decide(FAULTS_IN, fd, 0, len);
    if (plan.err)
        return faults__fail(plan.err);
    return real(fd, buf, plan.len, buflen);
}

ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
    faults__readv_fn real = (faults__readv_fn)faults__sym(FAULTS_READV);
    struct faults__plan plan;
    size_t total, n;

    if (!real)
        return faults__fail(ENOSYS);
    total = iovcnt > 0 ? faults__iov_total(iov, (size_t)iovcnt) : 0;
    plan = faults__decide(FAULTS_IN, fd, 0, total);
    if (plan.err)
        return faults__fail(plan.err);
    if (plan.len == total)
        return real(fd, iov, iovcnt);
    n = faults__iov_span(iov, plan.len);
    struct iovec trimmed[n]; /* only as many entries as kept: small stacks stay safe */
    faults__iov_trim(iov, n, plan.len, trimmed);
    return real(fd, trimmed, (int)n);
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    faults__recv_fn real = (faults__recv_fn)faults__sym(FAULTS_RECV);
    struct faults__plan plan;

    if (!real)
        return faults__fail(ENOSYS);
    plan = faults__decide(FAULTS_IN, fd, flags, len);
    if (plan.err)
        return faults__fail(plan.err);
    return real(fd, buf, plan.len, flags);
}

ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
    faults__recv_chk_fn real = (faults__recv_chk_fn)faults__sym(FAULTS_RECV_CHK);
    struct faults__plan plan;

    if (!real)
        return faults__fail(ENOSYS);
    if (len > buflen) {
        faults__decide(FAULTS_IN, fd, flags, 0);
        return real(fd, buf, len, buflen, flags);
    }
    plan = faults__decide(FAULTS_IN, fd, flags, len);
    if (plan.err)
        return faults__fail(plan.err);
    return real(fd, buf, plan.len, buflen, flags);
}

ssize_t recvfrom(int fd, void *restrict buf, size_t len, int flags, __SOCKADDR_ARG addr,
                 socklen_t *restrict addrlen)
{
    faults__recvfrom_fn real = (faults__recvfrom_fn)faults__sym(FAULTS_RECVFROM);
    struct faults__plan plan;

    if (!real)
        return faults__fail(ENOSYS);
    plan = faults__decide(FAULTS_IN, fd, flags, len);
    if (plan.err)
        return faults__fail(plan.err);
    return real(fd, buf, plan.len, flags, addr, addrlen);
}

ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags, __SOCKADDR_ARG addr,
                       socklen_t *addrlen)
{
    faults__recvfrom_chk_fn real = (faults__recvfrom_chk_fn)faults__sym(FAULTS_RECVFROM_CHK);
    struct faults__plan plan;

    if (!real)
        return faults__fail(ENOSYS);
    if (len > buflen) {
        faults__decide(FAULTS_IN, fd, flags, 0);
        return real(fd, buf, len, buflen, flags, addr, addrlen);
    }
    plan = faults__decide(FAULTS_IN, fd, flags, len);
    if (plan.err)
        return faults__fail(plan.err);
    return real(fd, buf, plan.len, buflen, flags, addr, addrlen);
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    faults__recvmsg_fn real = (faults__recvmsg_fn)faults__sym(FAULTS_RECVMSG);
    struct faults__plan plan;
    struct msghdr local;
    size_t total, n;
    ssize_t ret;

    if (!real)
        return faults__fail(ENOSYS);
    total = msg ? faults__iov_total(msg->msg_iov, msg->msg_iovlen) : 0;
    plan = faults__decide(FAULTS_IN, fd, flags, total);
    if (plan.err)
        return faults__fail(plan.err);
    if (plan.len == total)
        return real(fd, msg, flags);
    n = faults__iov_span(msg->msg_iov, plan.len);
    struct iovec trimmed[n];
    faults__iov_trim(msg->msg_iov, n, plan.len, trimmed);
    local = *msg;
    local.msg_iov = trimmed;
    local.msg_iovlen = n;
    ret = real(fd, &local, flags);
    /* The kernel writes these back; the caller's own msg_iov stays as it was.
     * Plain assignments, so errno from the real call is untouched. */
    msg->msg_namelen = local.msg_namelen;
    msg->msg_controllen = local.msg_controllen;
    msg->msg_flags = local.msg_flags;
    return ret;
}

/* ---- the wrappers: writes --------------------------------------------------- */

typedef ssize_t (*faults__write_fn)(int, const void *, size_t);
typedef ssize_t (*faults__writev_fn)(int, const struct iovec *, int);
typedef ssize_t (*faults__send_fn)(int, const void *, size_t, int);
typedef ssize_t (*faults__sendto_fn)(int, const void *, size_t, int, __CONST_SOCKADDR_ARG,
                                     socklen_t);
typedef ssize_t (*faults__sendmsg_fn)(int, const struct msghdr *, int);

ssize_t write(int fd, const void *buf, size_t len)
{
    faults__write_fn real = (faults__write_fn)faults__sym(FAULTS_WRITE);
    struct faults__plan plan;

    if (!real)
        return faults__fail(ENOSYS);
    plan = faults__decide(FAULTS_OUT, fd, 0, len);
    if (plan.err)
        return faults__fail(plan.err);
    return real(fd, buf, plan.len);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
    faults__writev_fn real = (faults__writev_fn)faults__sym(FAULTS_WRITEV);
    struct faults__plan plan;
    size_t total, n;

    if (!real)
        return faults__fail(ENOSYS);
    total = iovcnt > 0 ? faults__iov_total(iov, (size_t)iovcnt) : 0;
    plan = faults__decide(FAULTS_OUT, fd, 0, total);
    if (plan.err)
        return faults__fail(plan.err);
    if (plan.len == total)
        return real(fd, iov, iovcnt);
    n = faults__iov_span(iov, plan.len);
    struct iovec trimmed[n];
    faults__iov_trim(iov, n, plan.len, trimmed);
    return real(fd, trimmed, (int)n);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    faults__send_fn real = (faults__send_fn)faults__sym(FAULTS_SEND);
    struct faults__plan plan;

    if (!real)
        return faults__fail(ENOSYS);
    plan = faults__decide(FAULTS_OUT, fd, flags, len);
    if (plan.err)
        return faults__fail(plan.err);
    return real(fd, buf, plan.len, flags);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, __CONST_SOCKADDR_ARG addr,
               socklen_t addrlen)
{
    faults__sendto_fn real = (faults__sendto_fn)faults__sym(FAULTS_SENDTO);
    struct faults__plan plan;

    if (!real)
        return faults__fail(ENOSYS);
    plan = faults__decide(FAULTS_OUT, fd, flags, len);
    if (plan.err)
        return faults__fail(plan.err);
    return real(fd, buf, plan.len, flags, addr, addrlen);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    faults__sendmsg_fn real = (faults__sendmsg_fn)faults__sym(FAULTS_SENDMSG);
    struct faults__plan plan;
    struct msghdr local;
    size_t total, n;

    if (!real)
        return faults__fail(ENOSYS);
    total = msg ? faults__iov_total(msg->msg_iov, msg->msg_iovlen) : 0;
    plan = faults__decide(FAULTS_OUT, fd, flags, total);
    if (plan.err)
        return faults__fail(plan.err);
    if (plan.len == total)
        return real(fd, msg, flags);
    n = faults__iov_span(msg->msg_iov, plan.len);
    struct iovec trimmed[n];
    faults__iov_trim(msg->msg_iov, n, plan.len, trimmed);
    local = *msg;
    local.msg_iov = trimmed;
    local.msg_iovlen = n;
    return real(fd, &local, flags);
}

/* ---- the wrappers: condition variables ------------------------------------ */

/* glibc has two pthread_cond_wait: the current one (GLIBC_2.3.2 on x86_64 and
 * the other old ports) and a compatibility one for programs linked before
 * 2003, whose pthread_cond_t is laid out differently. A program built today
 * calls the current one, so that is the one to call next. dlsym() returns the
 * newest version, or a sanitizer's interceptor (which calls the current one
 * itself, and must see the wait to follow the mutex); should it ever return
 * the old version, ask for the current one by name with dlvsym(). On ports
 * born after 2003 (aarch64, riscv64) there is only one version and no
 * GLIBC_2.2.5 to compare with. */
typedef int (*faults__cond_wait_fn)(pthread_cond_t *, pthread_mutex_t *);
typedef int (*faults__cond_timedwait_fn)(pthread_cond_t *, pthread_mutex_t *,
                                         const struct timespec *);

static _Atomic(void *) faults__real_cond_wait, faults__real_cond_timedwait;

static void *faults__cond_sym(_Atomic(void *) *slot, const char *name)
{
    void *p = atomic_load_explicit(slot, memory_order_acquire);

    if (!p) {
        p = dlsym(RTLD_NEXT, name);
#ifdef __GLIBC__
        void *old = dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");
        void *now = dlvsym(RTLD_NEXT, name, "GLIBC_2.3.2");
        if (p && p == old && now)
            p = now;
#endif
        atomic_store_explicit(slot, p, memory_order_release);
    }
    return p;
}

/* Should this wait end at once? Counts the wait, and the wake-up if so. */
static int faults__spurious_now(void)
{
    atomic_fetch_add_explicit(&faults__cond_waits, 1, memory_order_relaxed);
    if (!faults__roll(faults__cfg.spurious))
        return 0;
    atomic_fetch_add_explicit(&faults__spurious, 1, memory_order_relaxed);
    return 1;
}

/* A wake-up with no signal, as POSIX allows ("spurious wakeups from the
 * pthread_cond_timedwait() or pthread_cond_wait() functions may occur"): the
 * mutex is released and taken again, as a real wait does, so another thread
 * may run in between and change what the waiter was waiting for. The yield
 * gives it the chance on a busy machine. Returns 0, like a wait that was
 * signalled. */
static int faults__wake_spuriously(pthread_mutex_t *m)
{
    int err = pthread_mutex_unlock(m);

    if (err)
        return err; /* not the caller's mutex: let the caller see the error */
    sched_yield();
    return pthread_mutex_lock(m);
}

/* A thread preempted after testing its condition, before it sleeps: it holds
 * the mutex all along, so a thread that changes the condition under the mutex
 * waits for it to be asleep, and one that does not signals nobody. */
static void faults__wait_late(void)
{
    struct timespec t;

    if (!faults__cfg.late_wait_ms)
        return;
    atomic_fetch_add_explicit(&faults__late_waits, 1, memory_order_relaxed);
    if (faults__cfg.late_mark_fd >= 0) {
        faults__write_fn real_write = (faults__write_fn)faults__sym(FAULTS_WRITE);
        if (real_write && real_write(faults__cfg.late_mark_fd, "w", 1) != 1)
            fprintf(stderr, "libfaults: could not write to FAULTS_LATE_WAIT_MARK\n");
    }
    t.tv_sec = faults__cfg.late_wait_ms / 1000;
    t.tv_nsec = (long)(faults__cfg.late_wait_ms % 1000) * 1000000L;
    while (nanosleep(&t, &t) < 0 && errno == EINTR)
        ;
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    faults__cond_wait_fn real =
        (faults__cond_wait_fn)faults__cond_sym(&faults__real_cond_wait, "pthread_cond_wait");

    if (!real)
        return ENOSYS;
    if (faults__spurious_now())
        return faults__wake_spuriously(m);
    int saved_errno = errno;
    faults__wait_late();
    errno = saved_errno;
    return real(c, m);
}

int pthread_cond_timedwait(pthread_cond_t *restrict c, pthread_mutex_t *restrict m,
                           const struct timespec *restrict abstime)
{
    faults__cond_timedwait_fn real = (faults__cond_timedwait_fn)faults__cond_sym(
        &faults__real_cond_timedwait, "pthread_cond_timedwait");

    if (!real)
        return ENOSYS;
    /* Before the deadline or not, 0: a spurious wake-up is not a timeout. */
    if (faults__spurious_now())
        return faults__wake_spuriously(m);
    int saved_errno = errno;
    faults__wait_late();
    errno = saved_errno;
    return real(c, m, abstime);
}

/* ---- loading and exiting ------------------------------------------------ */

static unsigned faults__percent(const char *name)
{
    const char *s = getenv(name);
    char *end;
    unsigned long v;

    if (!s || !*s)
        return 0;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || *end || v > 100 || *s == '-') {
        /* stdio here, not write(): libc's own writes do not come back to us */
        fprintf(stderr, "libfaults: %s=%s is not a percentage (0-100); ignored\n", name, s);
        return 0;
    }
    return (unsigned)v;
}

/* A forked child starts with its own counts (the parent logs its own line)
 * and its own random stream (a pre-forking server's workers should not all
 * fail in lockstep). */
static void faults__after_fork_child(void)
{
    atomic_store(&faults__short_reads, 0);
    atomic_store(&faults__short_writes, 0);
    atomic_store(&faults__eintrs, 0);
    atomic_store(&faults__eagains, 0);
    atomic_store(&faults__calls, 0);
    atomic_store(&faults__spurious, 0);
    atomic_store(&faults__cond_waits, 0);
    atomic_store(&faults__late_waits, 0);
    faults__rng_state = 0;
}

__attribute__((constructor)) static void faults__load(void)
{
    const char *s;
    int saved_errno = errno;

    faults__cfg.short_read = faults__percent("FAULTS_SHORT_READ");
    faults__cfg.short_write = faults__percent("FAULTS_SHORT_WRITE");
    faults__cfg.eintr = faults__percent("FAULTS_EINTR");
    faults__cfg.eagain = faults__percent("FAULTS_EAGAIN");
    faults__cfg.spurious = faults__percent("FAULTS_SPURIOUS_WAKEUP");
    if ((s = getenv("FAULTS_LATE_WAIT")) && *s) {
        char *end;
        errno = 0;
        unsigned long ms = strtoul(s, &end, 10);
        if (errno || *end || ms > 10000 || *s == '-')
            fprintf(stderr,
                    "libfaults: FAULTS_LATE_WAIT=%s is not a number of ms (0-10000); ignored\n", s);
        else
            faults__cfg.late_wait_ms = (unsigned)ms;
    }
    if ((s = getenv("FAULTS_LATE_WAIT_MARK")) && *s) {
        faults__cfg.late_mark_fd = open(s, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (faults__cfg.late_mark_fd < 0)
            fprintf(stderr, "libfaults: cannot open FAULTS_LATE_WAIT_MARK=%s: %s\n", s,
                    strerror(errno));
    }

    if ((s = getenv("FAULTS_SEED")) && *s) {
        char *end;
        errno = 0;
        unsigned long long seed = strtoull(s, &end, 0);
        if (errno || *end)
            fprintf(stderr, "libfaults: FAULTS_SEED=%s is not a number; using 1\n", s);
        else
            faults__cfg.seed = seed;
    }

    if ((s = getenv("FAULTS_FDS")) && *s) {
        if (strcmp(s, "all") == 0)
            faults__cfg.all_fds = 1;
        else if (strcmp(s, "sockets") != 0)
            fprintf(stderr, "libfaults: FAULTS_FDS=%s: expected 'all' or 'sockets'\n", s);
    }

    /* Made absolute now: by exit time the program may have changed directory. */
    if ((s = getenv("FAULTS_LOG")) && *s) {
        char cwd[PATH_MAX];
        int n;
        if (s[0] == '/' || !getcwd(cwd, sizeof(cwd)))
            n = snprintf(faults__cfg.log_path, sizeof(faults__cfg.log_path), "%s", s);
        else
            n = snprintf(faults__cfg.log_path, sizeof(faults__cfg.log_path), "%s/%s", cwd, s);
        if (n < 0 || (size_t)n >= sizeof(faults__cfg.log_path)) {
            fprintf(stderr, "libfaults: FAULTS_LOG path too long; no log\n");
            faults__cfg.log_path[0] = '\0';
        }
    }

    for (int fn = 0; fn < FAULTS_NFN; fn++)
        faults__sym((enum faults__fn)fn);
    faults__cond_sym(&faults__real_cond_wait, "pthread_cond_wait");
    faults__cond_sym(&faults__real_cond_timedwait, "pthread_cond_timedwait");
    pthread_atfork(NULL, NULL, faults__after_fork_child);
    errno = saved_errno;
}

/* Runs on exit() and on return from main(); not on _exit(), exec or a fatal
 * signal, whose counts are lost. One write() with O_APPEND, so lines from
 * several processes sharing the log never interleave. */
__attribute__((destructor)) static void faults__exit(void)
{
    faults__write_fn real_write = (faults__write_fn)faults__sym(FAULTS_WRITE);
    char line[256];
    int fd, n, saved_errno = errno;

    if (!faults__cfg.log_path[0] || !real_write)
        return;
    n = snprintf(line, sizeof(line),
                 "pid=%ld short_reads=%lu short_writes=%lu eintr=%lu eagain=%lu calls=%lu "
                 "spurious=%lu cond_waits=%lu late_waits=%lu\n",
                 (long)getpid(), atomic_load(&faults__short_reads),
                 atomic_load(&faults__short_writes), atomic_load(&faults__eintrs),
                 atomic_load(&faults__eagains), atomic_load(&faults__calls),
                 atomic_load(&faults__spurious), atomic_load(&faults__cond_waits),
                 atomic_load(&faults__late_waits));
    fd = open(faults__cfg.log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        if (real_write(fd, line, (size_t)n) != n) /* the real one: no faults in our own log */
            fprintf(stderr, "libfaults: could not write %s\n", faults__cfg.log_path);
        close(fd);
    } else {
        fprintf(stderr, "libfaults: cannot open %s: %s\n", faults__cfg.log_path, strerror(errno));
    }
    errno = saved_errno;
}
