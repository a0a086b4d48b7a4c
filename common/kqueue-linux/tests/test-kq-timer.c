/* test-kq-timer.c: EVFILT_TIMER.
 *
 *   make -C common/kqueue-linux && build/common/kqueue-linux/tests/test-kq-timer
 *
 * What it proves: a timer repeats unless EV_ONESHOT (which deletes it after
 * its event); data counts the expirations since the last event; data is in
 * milliseconds unless NOTE_SECONDS, NOTE_USECONDS or NOTE_NSECONDS; adding a
 * timer again restarts it and drops the expirations not yet reported (what
 * an idle timeout is built on); a disabled timer keeps counting. Bounds on
 * time are generous: the machine may be busy.
 */
#include "kq_check.h"

static int tag;

static void test_periodic(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, change(kq, 1, EVFILT_TIMER, EV_ADD, 0, 20, &tag));
    for (int i = 0; i < 3; i++) {
        if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000))) {
            CHECK_EQ(EVFILT_TIMER, ev.filter);
            CHECK_EQ(1, ev.ident);
            CHECK(ev.data >= 1);
            CHECK(ev.udata == &tag);
        }
    }
    close(kq);
}

static void test_data_counts_expirations(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, change(kq, 1, EVFILT_TIMER, EV_ADD, 0, 10, NULL));
    sleep_ms(105);
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000))) {
        if (!CHECK(ev.data >= 5 && ev.data <= 100))
            fprintf(stderr, "  a 10 ms timer, 105 ms later: data %lld\n", (long long)ev.data);
    }
    close(kq);
}

static void test_oneshot(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, change(kq, 7, EVFILT_TIMER, EV_ADD | EV_ONESHOT, 0, 20, NULL));
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000))) {
        CHECK_EQ(1, ev.data);
        CHECK_EQ(EV_ONESHOT, ev.flags & EV_ONESHOT);
    }
    CHECK_EQ(0, wait_ms(kq, &ev, 1, 100));
    CHECK_ERR(ENOENT, change(kq, 7, EVFILT_TIMER, EV_DELETE, 0, 0, NULL));
    close(kq);
}

/* How long a one-shot timer of `data` in `unit` takes, in ms. */
static long long oneshot_ms(int kq, unsigned int unit, int64_t data)
{
    struct kevent ev;
    long long t0 = now_ms();

    if (change(kq, 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT, unit, data, NULL) != 0 ||
        wait_ms(kq, &ev, 1, 5000) != 1)
        return -1;
    return now_ms() - t0;
}

static void test_units(void)
{
    int kq = kq_new();
    long long ms;

    ms = oneshot_ms(kq, 0, 60);
    CHECK(ms >= 55 && ms < 2000);
    ms = oneshot_ms(kq, NOTE_MSECONDS, 60);
    CHECK(ms >= 55 && ms < 2000);
    ms = oneshot_ms(kq, NOTE_USECONDS, 60000);
    CHECK(ms >= 55 && ms < 2000);
    ms = oneshot_ms(kq, NOTE_NSECONDS, 60000000);
    CHECK(ms >= 55 && ms < 2000);
    ms = oneshot_ms(kq, NOTE_SECONDS, 1);
    if (!CHECK(ms >= 990 && ms < 3000))
        fprintf(stderr, "  NOTE_SECONDS 1 took %lld ms\n", ms);
    CHECK_ERR(EINVAL, change(kq, 2, EVFILT_TIMER, EV_ADD, 0, -1, NULL));
    CHECK_ERR(EINVAL, change(kq, 2, EVFILT_TIMER, EV_ADD, NOTE_SECONDS | NOTE_USECONDS, 1, NULL));
    close(kq);
}

/* Adding it again before it fires pushes it back: an idle timeout. */
static void test_readd_restarts(void)
{
    struct kevent ev;
    int kq = kq_new();
    long long t0 = 0;

    CHECK_ERR(0, change(kq, 3, EVFILT_TIMER, EV_ADD, 0, 200, NULL));
    for (int i = 0; i < 8; i++) { /* 8 x 60 ms: it would have fired twice */
        CHECK_EQ(0, wait_ms(kq, &ev, 1, 60));
        t0 = now_ms(); /* before the last re-add: a stall after it must not count */
        CHECK_ERR(0, change(kq, 3, EVFILT_TIMER, EV_ADD, 0, 200, NULL));
    }
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 3000))) {
        CHECK_EQ(1, ev.data);
        CHECK(now_ms() - t0 >= 150);
    }
    close(kq);
}

/* Re-adding throws away the expirations not yet reported. */
static void test_readd_drops_expirations(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, change(kq, 4, EVFILT_TIMER, EV_ADD, 0, 10, NULL));
    sleep_ms(50); /* about 5 expirations, not collected */
    CHECK_ERR(0, change(kq, 4, EVFILT_TIMER, EV_ADD, 0, 1000, NULL));
    CHECK_EQ(0, wait_ms(kq, &ev, 1, 100));
    close(kq);
}

static void test_disabled_keeps_counting(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, change(kq, 5, EVFILT_TIMER, EV_ADD | EV_DISABLE, 0, 10, NULL));
    CHECK_EQ(0, wait_ms(kq, &ev, 1, 105));
    CHECK_ERR(0, change(kq, 5, EVFILT_TIMER, EV_ENABLE, 0, 0, NULL));
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000)))
        CHECK(ev.data >= 5);
    close(kq);
}

/* Each timer is its own knote: three one-shot timers, three events. */
static void test_many_timers(void)
{
    struct kevent evs[8];
    int kq = kq_new(), seen = 0;

    for (int i = 0; i < 3; i++)
        CHECK_ERR(
            0, change(kq, (uintptr_t)i, EVFILT_TIMER, EV_ADD | EV_ONESHOT, 0, 20 + 10 * i, NULL));
    long long t0 = now_ms();
    while (seen != 7 && now_ms() - t0 < 3000) {
        int n = wait_ms(kq, evs, 8, 500);
        for (int i = 0; i < n; i++)
            seen |= 1 << evs[i].ident;
    }
    CHECK_EQ(7, seen);
    close(kq);
}

int main(void)
{
    RUN(test_periodic, "a timer repeats by default; ident and udata come back");
    RUN(test_data_counts_expirations, "data counts the expirations since the last event");
    RUN(test_oneshot, "EV_ONESHOT: one event, then the timer is gone");
    RUN(test_units, "milliseconds by default; NOTE_SECONDS, NOTE_USECONDS, NOTE_NSECONDS");
    RUN(test_readd_restarts, "adding a timer again restarts it: it never fires while re-added");
    RUN(test_readd_drops_expirations, "adding it again drops the expirations not yet reported");
    RUN(test_disabled_keeps_counting, "a disabled timer keeps counting; enabled, it reports them");
    RUN(test_many_timers, "several timers, each with its own ident");
    return failures ? 1 : 0;
}
