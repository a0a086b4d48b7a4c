/* SPDX-License-Identifier: MIT */
/* test-kq-user.c: EVFILT_USER.
 *
 *   make -C common/kqueue-linux && build/common/kqueue-linux/tests/test-kq-user
 *
 * What it proves: NOTE_TRIGGER fires the event; without EV_CLEAR it stays
 * triggered, with EV_CLEAR one event per trigger; NOTE_FFCOPY, NOTE_FFAND and
 * NOTE_FFOR change the 24 stored flag bits handed back in fflags, and data
 * comes back as the last change set it; a trigger from another thread wakes
 * a thread asleep in kevent() (what EVFILT_USER is for).
 */
#include "kq_check.h"

#include <pthread.h>

static void test_trigger_level(void)
{
    struct kevent ev;
    int kq = kq_new(), tag;

    CHECK_ERR(0, change(kq, 1, EVFILT_USER, EV_ADD, 0, 0, &tag));
    CHECK_EQ(0, wait_ms(kq, &ev, 1, 50));
    CHECK_ERR(0, change(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, &tag));
    for (int i = 0; i < 3; i++) { /* no EV_CLEAR: stays triggered */
        if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 1000))) {
            CHECK_EQ(EVFILT_USER, ev.filter);
            CHECK_EQ(1, ev.ident);
            CHECK(ev.udata == &tag);
        }
    }
    /* EV_CLEAR in a change untriggers it */
    CHECK_ERR(0, change(kq, 1, EVFILT_USER, EV_CLEAR, 0, 0, &tag));
    CHECK_EQ(0, wait_ms(kq, &ev, 1, 50));
    close(kq);
}

static void test_trigger_clear(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, change(kq, 2, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, NULL));
    for (int i = 0; i < 2; i++) {
        CHECK_ERR(0, change(kq, 2, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL));
        CHECK_EQ(1, wait_ms(kq, &ev, 1, 1000));
        CHECK_EQ(0, wait_ms(kq, &ev, 1, 50));
    }
    close(kq);
}

static void test_fflags_and_data(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, change(kq, 3, EVFILT_USER, EV_ADD | EV_CLEAR, 0x0f, 0, NULL));
    CHECK_ERR(0, change(kq, 3, EVFILT_USER, 0, NOTE_TRIGGER | NOTE_FFOR | 0x30, 11, NULL));
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 1000))) {
        CHECK_EQ(0x3f, ev.fflags);
        CHECK_EQ(11, ev.data);
    }
    CHECK_ERR(0, change(kq, 3, EVFILT_USER, 0, NOTE_TRIGGER | NOTE_FFAND | 0x21, 12, NULL));
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 1000)))
        CHECK_EQ(0x21, ev.fflags);
    CHECK_ERR(0, change(kq, 3, EVFILT_USER, 0, NOTE_TRIGGER | NOTE_FFCOPY | 0xabcdef, 13, NULL));
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 1000))) {
        CHECK_EQ(0xabcdef, ev.fflags);
        CHECK_EQ(13, ev.data);
    }
    /* NOTE_FFNOP leaves them; the control bits never come back */
    CHECK_ERR(0, change(kq, 3, EVFILT_USER, 0, NOTE_TRIGGER | 0x1, 14, NULL));
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 1000)))
        CHECK_EQ(0xabcdef, ev.fflags);
    close(kq);
}

struct waker {
    int kq;
    long long woke_at;
};

static void *waker_main(void *arg)
{
    struct waker *w = arg;
    struct kevent ch;

    sleep_ms(100);
    w->woke_at = now_ms();
    EV_SET(&ch, 4, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
    if (kevent(w->kq, &ch, 1, NULL, 0, NULL) < 0)
        die("kevent(NOTE_TRIGGER) in the waker thread");
    return NULL;
}

static void test_wake_from_another_thread(void)
{
    struct waker w = {kq_new(), 0};
    struct kevent ev;
    pthread_t t;

    CHECK_ERR(0, change(w.kq, 4, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, NULL));
    if (pthread_create(&t, NULL, waker_main, &w) != 0)
        die("pthread_create");
    CHECK_EQ(1, kevent(w.kq, NULL, 0, &ev, 1, NULL)); /* asleep until the trigger */
    long long late = now_ms() - w.woke_at;
    CHECK(w.woke_at > 0 && late < 1000);
    pthread_join(t, NULL);
    close(w.kq);
}

static void test_oneshot(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, change(kq, 5, EVFILT_USER, EV_ADD | EV_ONESHOT, NOTE_TRIGGER, 0, NULL));
    CHECK_EQ(1, wait_ms(kq, &ev, 1, 1000));
    CHECK_ERR(ENOENT, change(kq, 5, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL));
    close(kq);
}

int main(void)
{
    CHECK_RUN(test_trigger_level, "NOTE_TRIGGER fires it; without EV_CLEAR it stays triggered");
    CHECK_RUN(test_trigger_clear, "with EV_CLEAR: one event per trigger");
    CHECK_RUN(test_fflags_and_data,
              "NOTE_FFOR, NOTE_FFAND, NOTE_FFCOPY change the stored flags; data");
    CHECK_RUN(test_wake_from_another_thread,
              "a trigger from another thread wakes a kevent() asleep");
    CHECK_RUN(test_oneshot, "EV_ONESHOT: one event, then it is gone");
    return check_exit();
}
