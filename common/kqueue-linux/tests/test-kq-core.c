/* SPDX-License-Identifier: MIT */
/* test-kq-core.c: kevent()'s own rules, with every filter out of the way.
 *
 *   make -C common/kqueue-linux && build/common/kqueue-linux/tests/test-kq-core
 *
 * What it proves: changes come back as EV_ERROR entries (data = errno) when
 * they fail or ask for EV_RECEIPT, or make kevent() fail when there is no
 * room; ENOENT for an unknown event, EBADF for an fd that is not open, EINVAL
 * for an unknown filter, a bad timeout, or EV_ENABLE with EV_DISABLE; changes and events in one
 * call, even in one array; nevents 0 and the timeouts (none, zero, some); EINTR with the changes
 * applied; a closed kqueue's helper fds are freed; a kqueue watched by another one.
 */
#include "kq_check.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>

static void test_bad_kqueue(void)
{
    struct kevent ev;
    int kq = kq_new(), p[2];

    CHECK(kq >= 0);
    if (pipe(p) < 0)
        die("pipe");
    errno = 0;
    CHECK_EQ(-1, kevent(p[0], NULL, 0, &ev, 1, NULL));
    CHECK_ERR(EBADF, errno);
    close(kq);
    errno = 0;
    CHECK_EQ(-1, kevent(kq, NULL, 0, &ev, 1, NULL));
    CHECK_ERR(EBADF, errno);
    close(p[0]);
    close(p[1]);
}

/* A filter no system has; and on the layer, one BSD has and it lacks
 * (EVFILT_VNODE, -4: on BSD ident 42, no open fd, would be EBADF). */
static void test_unknown_filter(void)
{
    struct kevent ch, out;
    int kq = kq_new(), x;
    short filters[] = {-100, -4};

    for (int i = 0; i < (KQ_LAYER ? 2 : 1); i++) {
        EV_SET(&ch, 42, filters[i], EV_ADD, 0, 0, &x);
        CHECK_EQ(1, kevent(kq, &ch, 1, &out, 1, NULL));
        CHECK_EQ(EV_ERROR, out.flags);
        CHECK_ERR(EINVAL, out.data);
        CHECK_EQ(42, out.ident);
        CHECK(out.udata == &x);
    }
    close(kq);
}

static void test_receipts(void)
{
    struct kevent ch[2], out[2];
    int kq = kq_new(), p[2];

    if (pipe(p) < 0)
        die("pipe");
    if (write(p[1], "x", 1) != 1)
        die("write");
    /* the pipe is readable, but receipts only: no event is collected */
    EV_SET(&ch[0], p[0], EVFILT_READ, EV_ADD | EV_RECEIPT, 0, 0, NULL);
    EV_SET(&ch[1], 7, EVFILT_USER, EV_ADD | EV_RECEIPT, 0, 0, NULL);
    CHECK_EQ(2, kevent(kq, ch, 2, out, 2, NULL));
    CHECK_EQ(EV_ERROR, out[0].flags);
    CHECK_EQ(0, out[0].data);
    CHECK_EQ(EV_ERROR, out[1].flags);
    CHECK_EQ(0, out[1].data);
    CHECK_EQ(1, wait_ms(kq, out, 2, 0)); /* now the read event */
    close(kq);
    close(p[0]);
    close(p[1]);
}

static void test_enoent_ebadf(void)
{
    int kq = kq_new(), p[2];

    if (pipe(p) < 0)
        die("pipe");
    CHECK_ERR(ENOENT, change(kq, p[0], EVFILT_READ, EV_DELETE, 0, 0, NULL));
    CHECK_ERR(ENOENT, change(kq, p[0], EVFILT_WRITE, EV_ENABLE, 0, 0, NULL));
    CHECK_ERR(ENOENT, change(kq, 5, EVFILT_TIMER, EV_DELETE, 0, 0, NULL));
    CHECK_ERR(ENOENT, change(kq, 5, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL));
    close(p[0]);
    close(p[1]);
    CHECK_ERR(EBADF, change(kq, p[0], EVFILT_READ, EV_ADD, 0, 0, NULL));
    CHECK_ERR(EBADF, change(kq, p[0], EVFILT_READ, EV_DELETE, 0, 0, NULL));
    CHECK_ERR(EBADF, change(kq, 100000, EVFILT_WRITE, EV_ADD, 0, 0, NULL));
    close(kq);
}

/* FreeBSD's kqueue_register() refuses EV_ENABLE and EV_DISABLE in one
 * change, before it looks for the knote. */
static void test_enable_and_disable(void)
{
    int kq = kq_new(), p[2];

    if (pipe(p) < 0)
        die("pipe");
    CHECK_ERR(0, change(kq, p[0], EVFILT_READ, EV_ADD, 0, 0, NULL));
#ifndef __APPLE__
    CHECK_ERR(EINVAL, change(kq, p[0], EVFILT_READ, EV_ENABLE | EV_DISABLE, 0, 0, NULL));
    CHECK_ERR(EINVAL, change(kq, 9, EVFILT_USER, EV_ADD | EV_ENABLE | EV_DISABLE, 0, 0, NULL));
#endif
    CHECK_ERR(0, change(kq, p[0], EVFILT_READ, EV_DELETE, 0, 0, NULL));
    close(kq);
    close(p[0]);
    close(p[1]);
}

/* No room for the EV_ERROR entry: kevent() fails, and stops there. */
static void test_error_without_room(void)
{
    struct kevent ch[2];
    int kq = kq_new();

    EV_SET(&ch[0], 1, EVFILT_TIMER, EV_DELETE, 0, 0, NULL); /* ENOENT */
    EV_SET(&ch[1], 2, EVFILT_USER, EV_ADD, 0, 0, NULL);
    errno = 0;
    CHECK_EQ(-1, kevent(kq, ch, 2, NULL, 0, NULL));
    CHECK_ERR(ENOENT, errno);
    CHECK_ERR(ENOENT, change(kq, 2, EVFILT_USER, EV_DELETE, 0, 0, NULL));
    close(kq);
}

/* FreeBSD's man page: with EV_RECEIPT and no room for the receipt, the
 * changes after it are not processed. .NET splits its two changes into two
 * kevent() calls on FreeBSD for that reason. */
static void test_receipt_without_room(void)
{
    struct kevent ch[2];
    int kq = kq_new();

    EV_SET(&ch[0], 1, EVFILT_USER, EV_ADD | EV_RECEIPT, 0, 0, NULL);
    EV_SET(&ch[1], 2, EVFILT_USER, EV_ADD | EV_RECEIPT, 0, 0, NULL);
    CHECK_EQ(0, kevent(kq, ch, 2, NULL, 0, NULL));
    CHECK_ERR(0, change(kq, 1, EVFILT_USER, EV_DELETE, 0, 0, NULL));
    CHECK_ERR(ENOENT, change(kq, 2, EVFILT_USER, EV_DELETE, 0, 0, NULL));
    close(kq);
}

/* One call registers two events and collects them, in one array. */
static void test_changes_and_events_in_one_call(void)
{
    struct kevent evs[2];
    int kq = kq_new(), p[2], a, b;

    if (pipe(p) < 0)
        die("pipe");
    if (write(p[1], "hello", 5) != 5)
        die("write");
    EV_SET(&evs[0], p[0], EVFILT_READ, EV_ADD, 0, 0, &a);
    EV_SET(&evs[1], 9, EVFILT_USER, EV_ADD, NOTE_TRIGGER, 0, &b);
    CHECK_EQ(2, kevent(kq, evs, 2, evs, 2, NULL));
    const struct kevent *r = find_event(evs, 2, p[0], EVFILT_READ);
    const struct kevent *u = find_event(evs, 2, 9, EVFILT_USER);
    if (CHECK(r != NULL) && CHECK(u != NULL)) {
        CHECK_EQ(5, r->data);
        CHECK(r->udata == &a);
        CHECK(u->udata == &b);
    }
    close(kq);
    close(p[0]);
    close(p[1]);
}

static void test_timeouts(void)
{
    struct kevent ev;
    struct timespec two_s = {2, 0}, zero = {0, 0}, bad = {0, 1000000000L};
    int kq = kq_new();
    long long t0;

    /* nevents 0: the changes only, at once, whatever the timeout */
    t0 = now_ms();
    EV_SET(&ev, 1, EVFILT_USER, EV_ADD, NOTE_TRIGGER, 0, NULL);
    CHECK_EQ(0, kevent(kq, &ev, 1, NULL, 0, &two_s));
    CHECK(now_ms() - t0 < 1000);
    /* a zero timeout polls */
    CHECK_EQ(1, kevent(kq, NULL, 0, &ev, 1, &zero));
    CHECK_ERR(0, change(kq, 1, EVFILT_USER, EV_DELETE, 0, 0, NULL));
    /* nothing ready: 0 after about the timeout */
    t0 = now_ms();
    CHECK_EQ(0, wait_ms(kq, &ev, 1, 200));
    long long took = now_ms() - t0;
    if (!CHECK(took >= 190 && took < 3000))
        fprintf(stderr, "  a 200 ms timeout took %lld ms\n", took);
    /* NULL: for ever, until something happens (a timer, 100 ms on). The
     * clock starts before the timer is added: on a busy machine (or under
     * valgrind) the process can lose tens of ms between the two calls. */
    t0 = now_ms();
    CHECK_ERR(0, change(kq, 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT, 0, 100, NULL));
    CHECK_EQ(1, kevent(kq, NULL, 0, &ev, 1, NULL));
    took = now_ms() - t0;
    if (!CHECK(took >= 90))
        fprintf(stderr, "  a 100 ms timer fired after %lld ms\n", took);
    errno = 0;
    CHECK_EQ(-1, kevent(kq, NULL, 0, &ev, 1, &bad));
    CHECK_ERR(EINVAL, errno);
    errno = 0;
    CHECK_EQ(-1, kevent(kq, NULL, -1, &ev, 1, &zero));
    CHECK_ERR(EINVAL, errno);
    close(kq);
}

static void on_alarm(int sig)
{
    (void)sig;
}

/* A handled signal ends the wait with EINTR, and the changes of that same
 * call have been applied ("all changes in the changelist have been applied"). */
static void test_eintr(void)
{
    struct sigaction sa = {.sa_handler = on_alarm}; /* no SA_RESTART; BSD does not restart */
    struct itimerval it = {{0, 0}, {0, 100000}};
    struct kevent ch, ev;
    int kq = kq_new();

    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    setitimer(ITIMER_REAL, &it, NULL);
    EV_SET(&ch, 3, EVFILT_USER, EV_ADD, 0, 0, NULL);
    errno = 0;
    CHECK_EQ(-1, kevent(kq, &ch, 1, &ev, 1, NULL));
    CHECK_ERR(EINTR, errno);
    CHECK_ERR(0, change(kq, 3, EVFILT_USER, EV_DELETE, 0, 0, NULL));
    signal(SIGALRM, SIG_DFL);
    close(kq);
}

/* epoll refuses regular files (EPERM), and the layer does not make up for
 * it; BSD watches a file (a vnode) and reports it readable while the offset
 * is not at its end. */
static void test_regular_file(void)
{
    char path[] = "/tmp/kq-test-XXXXXX";
    int kq = kq_new(), fd = mkstemp(path);

    if (fd < 0)
        die("mkstemp");
    unlink(path);
    CHECK_ERR(KQ_LAYER ? EPERM : 0, change(kq, fd, EVFILT_READ, EV_ADD, 0, 0, NULL));
    close(fd);
    close(kq);
}

/* close(kq) cannot be seen; the next kqueue() that gets the same number
 * frees the old state, helper fds included: the timers' one timerfd and the
 * user event's eventfd. */
static void test_closed_kqueue_is_freed(void)
{
    int before = open_fds(), kq = kq_new();

    for (int i = 0; i < 3; i++)
        CHECK_ERR(0, change(kq, i, EVFILT_TIMER, EV_ADD, 0, 1000, NULL));
    CHECK_ERR(0, change(kq, 1, EVFILT_USER, EV_ADD, 0, 0, NULL));
    CHECK_EQ(before + 1 + (KQ_LAYER ? 2 : 0), open_fds()); /* BSD: no helper fds */
    close(kq);
    int kq2 = kq_new();
    CHECK_EQ(kq, kq2);
    CHECK_EQ(before + 1, open_fds());
    close(kq2);
}

/* A kqueue fd is an epoll fd, which another kqueue can watch. */
static void test_nested(void)
{
    struct kevent ev;
    int inner = kq_new(), outer = kq_new();

    CHECK_ERR(0, change(outer, inner, EVFILT_READ, EV_ADD, 0, 0, NULL));
    CHECK_EQ(0, wait_ms(outer, &ev, 1, 50));
    CHECK_ERR(0, change(inner, 1, EVFILT_USER, EV_ADD, NOTE_TRIGGER, 0, NULL));
    if (CHECK_EQ(1, wait_ms(outer, &ev, 1, 2000))) {
        CHECK_EQ(inner, ev.ident);
        CHECK_EQ(KQ_LAYER ? 0 : 1, ev.data); /* BSD: the number of events pending */
    }
    close(outer);
    close(inner);
}

int main(void)
{
    CHECK_RUN(test_bad_kqueue, "kevent() on an fd that is not a kqueue, or a closed one: EBADF");
    CHECK_RUN(test_unknown_filter,
              "an unknown filter is EINVAL, as an EV_ERROR entry with ident and udata");
    CHECK_RUN(test_receipts, "EV_RECEIPT returns data 0 for each applied change, and no events");
    CHECK_RUN(test_enoent_ebadf,
              "ENOENT for an event never added, EBADF for an fd that is not open");
    CHECK_RUN(test_enable_and_disable, "EV_ENABLE and EV_DISABLE in one change: EINVAL (FreeBSD)");
    CHECK_RUN(test_error_without_room,
              "an error without room for EV_ERROR fails the call and stops there");
    CHECK_RUN(test_receipt_without_room,
              "EV_RECEIPT without room: the changes after the first are not applied");
    CHECK_RUN(test_changes_and_events_in_one_call,
              "changes and events in one call, in the same array");
    CHECK_RUN(test_timeouts,
              "nevents 0 returns at once; zero, some and no timeout; a bad timeout is EINVAL");
    CHECK_RUN(test_eintr, "a signal handler ends the wait with EINTR, the changes applied");
    CHECK_RUN(test_regular_file, "a regular file cannot be watched: EPERM");
    CHECK_RUN(test_closed_kqueue_is_freed,
              "the state of a closed kqueue is freed by the next kqueue()");
    CHECK_RUN(test_nested, "a kqueue can watch another one with EVFILT_READ (data 0)");
    return check_exit();
}
