/* SPDX-License-Identifier: MIT */
/* test-kq-signal.c: EVFILT_SIGNAL.
 *
 *   make -C common/kqueue-linux && build/common/kqueue-linux/tests/test-kq-signal
 *
 * What it proves: a signal set to SIG_IGN is still reported (the BSD idiom
 * for SIGTERM); data counts the deliveries since the last event, exactly for
 * real-time signals and once for ordinary ones that arrived while pending (a
 * documented difference); adding the knote blocks the signal in the calling
 * thread, deleting the last knote for it unblocks it; a handler does not run
 * while the knote exists (BSD would run it too); a closed kqueue's signals
 * stay blocked until its state is freed; bad numbers are EINVAL.
 */
#include "kq_check.h"

#include <signal.h>
#include <stdbool.h>

static volatile sig_atomic_t handler_ran;

static void on_signal(int sig)
{
    (void)sig;
    handler_ran = 1;
}

static bool blocked(int sig)
{
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    return sigismember(&now, sig);
}

static void test_ignored_signal_reported(void)
{
    struct kevent ev;
    int kq = kq_new(), tag;

    signal(SIGUSR1, SIG_IGN);
    CHECK_ERR(0, change(kq, SIGUSR1, EVFILT_SIGNAL, EV_ADD, 0, 0, &tag));
    kill(getpid(), SIGUSR1);
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000))) {
        CHECK_EQ(EVFILT_SIGNAL, ev.filter);
        CHECK_EQ(SIGUSR1, ev.ident);
        CHECK_EQ(1, ev.data);
        CHECK_EQ(EV_CLEAR, ev.flags & EV_CLEAR);
        CHECK(ev.udata == &tag);
    }
    CHECK_EQ(0, wait_ms(kq, &ev, 1, 50)); /* counted since the last event */
    kill(getpid(), SIGUSR1);
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000)))
        CHECK_EQ(1, ev.data);
    close(kq);
    signal(SIGUSR1, SIG_DFL);
}

static void test_block_and_unblock(void)
{
    int kq = kq_new();

    CHECK(!blocked(SIGUSR2));
    CHECK_ERR(0, change(kq, SIGUSR2, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL));
    CHECK(blocked(SIGUSR2));
    CHECK_ERR(0, change(kq, SIGUSR2, EVFILT_SIGNAL, EV_DELETE, 0, 0, NULL));
    CHECK(!blocked(SIGUSR2));
    /* blocked before: still blocked after */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    CHECK_ERR(0, change(kq, SIGUSR2, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL));
    CHECK_ERR(0, change(kq, SIGUSR2, EVFILT_SIGNAL, EV_DELETE, 0, 0, NULL));
    CHECK(blocked(SIGUSR2));
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    close(kq);
}

static void test_two_kqueues(void)
{
    int kq1 = kq_new(), kq2 = kq_new();

    CHECK_ERR(0, change(kq1, SIGHUP, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL));
    CHECK_ERR(0, change(kq2, SIGHUP, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL));
    CHECK_ERR(0, change(kq1, SIGHUP, EVFILT_SIGNAL, EV_DELETE, 0, 0, NULL));
    CHECK(blocked(SIGHUP));
    CHECK_ERR(0, change(kq2, SIGHUP, EVFILT_SIGNAL, EV_DELETE, 0, 0, NULL));
    CHECK(!blocked(SIGHUP));
    close(kq1);
    close(kq2);
}

/* With a handler installed, the signal goes to the knote, not the handler. */
static void test_handler_does_not_run(void)
{
    struct kevent ev;
    struct sigaction sa = {.sa_handler = on_signal};
    int kq = kq_new();

    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    handler_ran = 0;
    CHECK_ERR(0, change(kq, SIGUSR1, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL));
    kill(getpid(), SIGUSR1);
    CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000));
    CHECK_EQ(0, handler_ran);
    CHECK_ERR(0, change(kq, SIGUSR1, EVFILT_SIGNAL, EV_DELETE, 0, 0, NULL));
    kill(getpid(), SIGUSR1); /* unblocked again: the handler runs */
    CHECK_EQ(1, handler_ran);
    signal(SIGUSR1, SIG_DFL);
    close(kq);
}

/* A real-time signal queues every delivery; macOS has none. */
#ifdef SIGRTMIN
#define KQ_RT_SIGNAL SIGRTMIN
#endif

static void test_counts(void)
{
    struct kevent ev, evs[2];
    int kq = kq_new(), want = 1, n;

    signal(SIGUSR2, SIG_IGN);
    CHECK_ERR(0, change(kq, SIGUSR2, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL));
#ifdef KQ_RT_SIGNAL
    CHECK_ERR(0, change(kq, KQ_RT_SIGNAL, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL));
    want = 2;
#endif
    for (int i = 0; i < 3; i++) {
        kill(getpid(), SIGUSR2);
#ifdef KQ_RT_SIGNAL
        kill(getpid(), KQ_RT_SIGNAL);
#endif
    }
    n = wait_ms(kq, evs, 2, 2000);
    CHECK_EQ(want, n);
    const struct kevent *u = find_event(evs, n, SIGUSR2, EVFILT_SIGNAL);
    /* BSD counts every delivery: 3. Linux's signalfd holds an ordinary
     * signal once however often it was sent: 1. */
    if (CHECK(u != NULL))
        CHECK_EQ(KQ_LAYER ? 1 : 3, u->data);
#ifdef KQ_RT_SIGNAL
    const struct kevent *rt = find_event(evs, n, (uintptr_t)KQ_RT_SIGNAL, EVFILT_SIGNAL);
    if (CHECK(rt != NULL))
        CHECK_EQ(3, rt->data);
#endif
    CHECK_EQ(0, wait_ms(kq, &ev, 1, 50));
    close(kq);
    signal(SIGUSR2, SIG_DFL);
}

/* close(kq) cannot be seen: the signal stays blocked, its signalfd open,
 * until the layer frees the closed kqueue's state (here: the next kqueue()
 * that gets the same number). On BSD close() deletes the knote, and the
 * signal was never blocked. */
static void test_closed_kqueue_keeps_block(void)
{
    int kq = kq_new(), kq2;

    CHECK_ERR(0, change(kq, SIGUSR2, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL));
    close(kq);
    CHECK_EQ(KQ_LAYER, blocked(SIGUSR2));
    kq2 = kq_new();
    CHECK_EQ(kq, kq2);
    CHECK(!blocked(SIGUSR2));
    close(kq2);
}

static void test_bad_signals(void)
{
    int kq = kq_new();

    CHECK_ERR(EINVAL, change(kq, 0, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL));
    CHECK_ERR(EINVAL, change(kq, 1000, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL));
    CHECK_ERR(EINVAL, change(kq, SIGKILL, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL));
    close(kq);
}

int main(void)
{
    CHECK_RUN(test_ignored_signal_reported,
              "a signal set to SIG_IGN is still reported; data counts it");
    CHECK_RUN(test_block_and_unblock,
              "adding blocks the signal, deleting unblocks it (if it was not)");
    CHECK_RUN(test_two_kqueues, "the signal stays blocked until its last knote is deleted");
    CHECK_RUN(test_handler_does_not_run, "while the knote exists the handler does not run");
    CHECK_RUN(test_counts, "sent 3 times: data 3 for a real-time signal, 1 for an ordinary one");
    CHECK_RUN(test_closed_kqueue_keeps_block,
              "a closed kqueue's signal stays blocked until kqueue() reuses its number");
    CHECK_RUN(test_bad_signals, "signal 0, 1000 and SIGKILL are EINVAL");
    return check_exit();
}
