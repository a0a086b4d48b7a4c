/* SPDX-License-Identifier: MIT */
/* test-kq-timer.c: EVFILT_TIMER.
 *
 *   make -C common/kqueue-linux && build/common/kqueue-linux/tests/test-kq-timer
 *
 * What it proves: a timer repeats unless EV_ONESHOT (which deletes it after
 * its event), and its events carry EV_CLEAR, which the filter sets itself;
 * data counts the expirations since the last event; data is in
 * milliseconds unless NOTE_SECONDS, NOTE_USECONDS or NOTE_NSECONDS; adding a
 * timer again restarts it and drops the expirations not yet reported (what
 * an idle timeout is built on); a disabled timer keeps counting; a period
 * of 0 is one unit (FreeBSD). With
 * NOTE_ABSTIME (macOS: NOTE_ABSOLUTE) data is a time since the Epoch: the
 * timer fires once, then (FreeBSD, and the layer) stays expired, reported by
 * every call until deleted, or (macOS) is deleted. Bounds on time are
 * generous: the machine may be busy.
 */
#include "kq_check.h"

#include <sys/time.h>

/* FreeBSD's name, and macOS's (the layer has both, with FreeBSD's value). */
#ifdef NOTE_ABSTIME
#define KQ_ABS NOTE_ABSTIME
#else
#define KQ_ABS NOTE_ABSOLUTE
#endif
#if KQ_LAYER
_Static_assert(NOTE_ABSOLUTE == NOTE_ABSTIME, "macOS's spelling is the same flag");
#endif

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
            CHECK_EQ(EV_CLEAR, ev.flags & EV_CLEAR); /* set by the filter */
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
#ifdef NOTE_MSECONDS /* FreeBSD's; macOS has milliseconds as the default only */
    ms = oneshot_ms(kq, NOTE_MSECONDS, 60);
    CHECK(ms >= 55 && ms < 2000);
#endif
    ms = oneshot_ms(kq, NOTE_USECONDS, 60000);
    CHECK(ms >= 55 && ms < 2000);
    ms = oneshot_ms(kq, NOTE_NSECONDS, 60000000);
    CHECK(ms >= 55 && ms < 2000);
    ms = oneshot_ms(kq, NOTE_SECONDS, 1);
    if (!CHECK(ms >= 990 && ms < 3000))
        fprintf(stderr, "  NOTE_SECONDS 1 took %lld ms\n", ms);
#ifndef __APPLE__ /* macOS fires a negative period once, at once (xnu's filt_timervalidate) */
    CHECK_ERR(EINVAL, change(kq, 2, EVFILT_TIMER, EV_ADD, 0, -1, NULL));
#endif
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

/* A periodic timer of 0 repeats every 1 ms (FreeBSD's filt_timervalidate()
 * makes 0 one unit), so data counts milliseconds, not nanoseconds. macOS
 * fires it once. */
static void test_zero_period(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, change(kq, 6, EVFILT_TIMER, EV_ADD, 0, 0, NULL));
    CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000));
    sleep_ms(50);
#ifdef __APPLE__
    CHECK_EQ(0, wait_ms(kq, &ev, 1, 50));
#else
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000)) && !CHECK(ev.data >= 10 && ev.data <= 5000))
        fprintf(stderr, "  a 0 ms timer, 50 ms later: data %lld\n", (long long)ev.data);
#endif
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

/* Now plus ms, in microseconds since the Epoch. */
static int64_t epoch_us_in(long ms)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec + (int64_t)ms * 1000;
}

/* An absolute time 200 ms ahead: one event, not before, data 1. FreeBSD
 * leaves EV_CLEAR out of an absolute timer (kern_event.c,
 * filt_timerattach()); macOS sets it (and EV_ONESHOT). */
static void test_abstime(void)
{
    struct kevent ev;
    int kq = kq_new();
    long long t0 = now_ms();

    CHECK_ERR(0, change(kq, 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT, KQ_ABS | NOTE_USECONDS,
                        epoch_us_in(200), &tag));
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 3000))) {
        long long took = now_ms() - t0;
        if (!CHECK(took >= 150 && took < 3000))
            fprintf(stderr, "  a deadline 200 ms ahead fired after %lld ms\n", took);
        CHECK_EQ(1, ev.data);
        CHECK(ev.udata == &tag);
#ifdef __APPLE__
        CHECK_EQ(EV_CLEAR, ev.flags & EV_CLEAR);
#else
        CHECK_EQ(0, ev.flags & EV_CLEAR);
#endif
    }
    CHECK_ERR(ENOENT, change(kq, 1, EVFILT_TIMER, EV_DELETE, 0, 0, NULL));
    /* in seconds too, and a time already past fires at once */
    CHECK_ERR(0, change(kq, 2, EVFILT_TIMER, EV_ADD | EV_ONESHOT, KQ_ABS | NOTE_SECONDS,
                        epoch_us_in(-2000) / 1000000, NULL));
    CHECK_EQ(1, wait_ms(kq, &ev, 1, 1000));
    close(kq);
}

/* Without EV_ONESHOT an absolute timer does not repeat; its time has passed
 * and stays passed. FreeBSD reports it again on every call (it is not
 * EV_CLEAR) until it is deleted; macOS makes it EV_ONESHOT. */
static void test_abstime_stays(void)
{
    struct kevent ev;
    int kq = kq_new(), n = 0;

    CHECK_ERR(0,
              change(kq, 3, EVFILT_TIMER, EV_ADD, KQ_ABS | NOTE_USECONDS, epoch_us_in(20), NULL));
    for (int i = 0; i < 3; i++) {
        if (wait_ms(kq, &ev, 1, i == 0 ? 2000 : 200) == 1) {
            n++;
            CHECK_EQ(1, ev.data);
        }
    }
#ifdef __APPLE__
    CHECK_EQ(1, n);
    CHECK_ERR(ENOENT, change(kq, 3, EVFILT_TIMER, EV_DELETE, 0, 0, NULL));
#else
    CHECK_EQ(3, n);
    CHECK_ERR(0, change(kq, 3, EVFILT_TIMER, EV_DELETE, 0, 0, NULL));
#endif
    CHECK_EQ(0, wait_ms(kq, &ev, 1, 50));
    close(kq);
}

/* With EV_CLEAR an absolute timer is reported once and never again, though
 * it is still there (FreeBSD: its count is cleared, and it does not
 * repeat). */
static void test_abstime_clear(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, change(kq, 4, EVFILT_TIMER, EV_ADD | EV_CLEAR, KQ_ABS | NOTE_USECONDS,
                        epoch_us_in(20), NULL));
    CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000));
    CHECK_EQ(0, wait_ms(kq, &ev, 1, 100));
#ifdef __APPLE__
    CHECK_ERR(ENOENT, change(kq, 4, EVFILT_TIMER, EV_DELETE, 0, 0, NULL));
#else
    CHECK_ERR(0, change(kq, 4, EVFILT_TIMER, EV_DELETE, 0, 0, NULL));
#endif
    close(kq);
}

int main(void)
{
    CHECK_RUN(test_periodic, "a timer repeats by default; ident and udata come back");
    CHECK_RUN(test_data_counts_expirations, "data counts the expirations since the last event");
    CHECK_RUN(test_oneshot, "EV_ONESHOT: one event, then the timer is gone");
    CHECK_RUN(test_units, "milliseconds by default; NOTE_SECONDS, NOTE_USECONDS, NOTE_NSECONDS");
    CHECK_RUN(test_readd_restarts,
              "adding a timer again restarts it: it never fires while re-added");
    CHECK_RUN(test_readd_drops_expirations,
              "adding it again drops the expirations not yet reported");
    CHECK_RUN(test_disabled_keeps_counting,
              "a disabled timer keeps counting; enabled, it reports them");
    CHECK_RUN(test_many_timers, "several timers, each with its own ident");
#ifdef __APPLE__
    CHECK_RUN(test_zero_period, "a periodic timer of 0 fires once (macOS)");
#else
    CHECK_RUN(test_zero_period,
              "a periodic timer of 0 repeats every 1 ms: data counts milliseconds");
#endif
    CHECK_RUN(test_abstime, "NOTE_ABSTIME: data is a time since the Epoch; one event at that time");
#ifdef __APPLE__
    CHECK_RUN(test_abstime_stays,
              "NOTE_ABSOLUTE without EV_ONESHOT: macOS deletes it after its event");
    CHECK_RUN(test_abstime_clear, "NOTE_ABSOLUTE with EV_CLEAR: macOS deletes it after its event");
#else
    CHECK_RUN(test_abstime_stays,
              "NOTE_ABSTIME without EV_ONESHOT: reported by every call until deleted");
    CHECK_RUN(test_abstime_clear, "NOTE_ABSTIME with EV_CLEAR: reported once, and kept");
#endif
    return check_exit();
}
