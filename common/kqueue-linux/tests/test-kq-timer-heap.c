/* SPDX-License-Identifier: MIT */
/* test-kq-timer-heap.c: many EVFILT_TIMERs on one kqueue.
 *
 *   make -C common/kqueue-linux && build/common/kqueue-linux/tests/test-kq-timer-heap
 *
 * What it proves: the timers of a kqueue share one timerfd (10,000 timers,
 * one extra fd); they fire in deadline order, also when timers are deleted or
 * disabled from the middle of the heap; a full event list leaves the other
 * due timers for the next call; data counts each timer's own expirations; a
 * period of 0 fires at once; and re-adding the earliest timer moves it.
 *
 * A timer's deadline is set when it is added, so it also depends on how long
 * the adding took: the order checks allow that much slack, measured.
 */
#include "kq_check.h"

#define NTIMERS 10000
#define STEP_US 50 /* ident i fires after 100 ms + i * STEP_US */

static uint8_t state[NTIMERS]; /* what became of each ident */
enum { ARMED, DELETED, DISABLED, SEEN };

static int64_t period_us(uintptr_t ident)
{
    return 100000 + (int64_t)ident * STEP_US;
}

/* Add every timer, one-shot, the latest first: each new one becomes the
 * earliest, and climbs the whole heap. Returns how long it took, in ms. */
static long long add_all(int kq)
{
    long long t0 = now_ms();

    for (int i = NTIMERS - 1; i >= 0; i--) {
        state[i] = ARMED;
        if (change(kq, (uintptr_t)i, EVFILT_TIMER, EV_ADD | EV_ONESHOT, NOTE_USECONDS,
                   period_us((uintptr_t)i), NULL) != 0)
            die("EV_ADD timer");
    }
    return now_ms() - t0;
}

/* Collect events (in lists of `batch`) until every ARMED timer is SEEN, and
 * check they came in deadline order, give or take `slack_ms`. */
static void collect_in_order(int kq, int batch, long long slack_ms)
{
    struct kevent evs[128];
    int64_t latest = -1; /* the latest period reported so far */
    int expected = 0, seen = 0, late = 0, wrong = 0;
    long long t0 = now_ms();

    for (int i = 0; i < NTIMERS; i++)
        expected += state[i] == ARMED;
    while (seen + wrong < expected && now_ms() - t0 < 10000) {
        int n = wait_ms(kq, evs, batch, 2000);
        CHECK(n >= 0 && n <= batch);
        for (int i = 0; i < n; i++) {
            uintptr_t id = evs[i].ident;
            if (id >= NTIMERS || state[id] != ARMED || evs[i].data != 1) {
                wrong++;
                continue;
            }
            state[id] = SEEN;
            seen++;
            if (period_us(id) < latest - slack_ms * 1000)
                late++; /* fired after one whose deadline is later than its own */
            if (period_us(id) > latest)
                latest = period_us(id);
        }
    }
    CHECK_EQ(expected, seen);
    CHECK_EQ(0, wrong);
    if (!CHECK_EQ(0, late))
        fprintf(stderr, "  %d timers out of deadline order (slack %lld ms)\n", late, slack_ms);
    CHECK_EQ(0, wait_ms(kq, evs, batch, 50)); /* nothing else: deleted ones never come */
}

static void test_one_fd(void)
{
    int before = open_fds(), kq = kq_new();

    add_all(kq);
    CHECK_EQ(before + 1 + KQ_LAYER, open_fds()); /* the kqueue and one timerfd */
    CHECK_ERR(0, change(kq, 1, EVFILT_USER, EV_ADD, 0, 0, NULL));
    CHECK_EQ(before + 1 + 2 * KQ_LAYER, open_fds()); /* a user event still has an eventfd */
    close(kq);
    close(kq_new()); /* frees the closed kqueue's state: its fds too */
    CHECK_EQ(before, open_fds());
}

static void test_deadline_order(void)
{
    int kq = kq_new();
    long long slack = add_all(kq) + 2;

    collect_in_order(kq, 128, slack);
    close(kq);
}

/* Deleting or disabling timers takes them out of the middle of the heap:
 * the others must still come out in order. */
static void test_delete_from_middle(void)
{
    int kq = kq_new();
    long long t0 = now_ms(), slack = add_all(kq);

    for (int i = 1; i < NTIMERS; i += 3) {
        CHECK_ERR(0, change(kq, (uintptr_t)i, EVFILT_TIMER, EV_DELETE, 0, 0, NULL));
        state[i] = DELETED;
    }
    for (int i = 2; i < NTIMERS; i += 7) {
        if (state[i] != ARMED)
            continue;
        CHECK_ERR(0, change(kq, (uintptr_t)i, EVFILT_TIMER, EV_DISABLE, 0, 0, NULL));
        state[i] = DISABLED;
    }
    slack = now_ms() - t0 + 2;
    collect_in_order(kq, 100, slack); /* 100 at a time: the rest stay due */
    close(kq);
}

/* 1,000 periodic timers of 10, 20, 30 and 40 ms, left alone for 210 ms: each
 * reports its own expirations, all in one call. A timer added at t_add with
 * period p, reported at t, has expired (t - t_add) / p times. */
static void test_many_counts(void)
{
    enum { N = 1000 };
    static struct kevent evs[N];
    int kq = kq_new(), bad = 0;
    long long t0 = now_ms(), t1, t2, t3;

    for (int i = 0; i < N; i++)
        CHECK_ERR(0, change(kq, (uintptr_t)i, EVFILT_TIMER, EV_ADD, 0, 10 * (1 + i % 4), NULL));
    t1 = now_ms();
    sleep_ms(210);
    t2 = now_ms();
    int n = wait_ms(kq, evs, N, 2000);
    t3 = now_ms();
    CHECK_EQ(N, n);
    for (int i = 0; i < n; i++) {
        long long p = 10 * (1 + (long long)evs[i].ident % 4);
        long long lo = (t2 - t1 - 1) / p, hi = (t3 - t0 + 1) / p;
        if (evs[i].data < lo || evs[i].data > hi) {
            if (bad++ < 5)
                fprintf(stderr, "  timer %lu of %lld ms: data %lld, expected %lld to %lld\n",
                        (unsigned long)evs[i].ident, p, (long long)evs[i].data, lo, hi);
        }
    }
    CHECK_EQ(0, bad);
    close(kq);
}

/* A period of 0 fires at once, BSD says; here too, with many timers waiting. */
static void test_zero_period(void)
{
    struct kevent ev;
    int kq = kq_new();

    for (int i = 0; i < 100; i++)
        CHECK_ERR(0, change(kq, (uintptr_t)i, EVFILT_TIMER, EV_ADD, 0, 60000, NULL));
    long long t0 = now_ms();
    CHECK_ERR(0, change(kq, 500, EVFILT_TIMER, EV_ADD | EV_ONESHOT, 0, 0, NULL));
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000))) {
        CHECK_EQ(500, ev.ident);
        CHECK(now_ms() - t0 < 500);
    }
    close(kq);
}

/* Re-adding the earliest timer with a longer period moves it behind the
 * next: the timerfd must follow, or the next would be late. */
static void test_readd_earliest(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, change(kq, 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT, 0, 50, NULL));
    CHECK_ERR(0, change(kq, 2, EVFILT_TIMER, EV_ADD | EV_ONESHOT, 0, 150, NULL));
    CHECK_ERR(0, change(kq, 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT, 0, 400, NULL));
    long long t0 = now_ms();
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000)))
        CHECK_EQ(2, ev.ident);
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000))) {
        CHECK_EQ(1, ev.ident);
        CHECK(now_ms() - t0 >= 200);
    }
    close(kq);
}

int main(void)
{
    CHECK_RUN(test_one_fd, "10,000 timers on one kqueue open one timerfd, and close frees it");
    CHECK_RUN(test_deadline_order, "10,000 timers fire in deadline order, each once");
    CHECK_RUN(test_delete_from_middle,
              "deleting and disabling timers from the middle keeps the order");
    CHECK_RUN(test_many_counts, "1,000 periodic timers: data counts each one's expirations");
    CHECK_RUN(test_zero_period, "a period of 0 fires at once among later timers");
    CHECK_RUN(test_readd_earliest, "re-adding the earliest timer lets the next one fire first");
    return check_exit();
}
