/* SPDX-License-Identifier: MIT */
/* test-kq-fd.c: EVFILT_READ and EVFILT_WRITE on sockets.
 *
 *   make -C common/kqueue-linux && build/common/kqueue-linux/tests/test-kq-fd
 *
 * What it proves: data is the bytes readable, the room to write, the
 * connections waiting on a listener; EV_EOF on a half-close (with data still
 * to read) and on a reset (fflags = ECONNRESET); READ and WRITE on one fd are
 * independent knotes (udata, EV_DISABLE, EV_DELETE, EV_ONESHOT, EV_CLEAR,
 * EV_DISPATCH each apply to one of them) although epoll has one registration
 * per fd; close() removes an fd's knotes, as on BSD; with room for one event,
 * READ and WRITE take turns; a low-water mark (NOTE_LOWAT) works on BSD, and
 * is refused by the layer: not defined, and its value EINVAL.
 */
#include "kq_check.h"

#include <signal.h>

static int tag_r, tag_w, tag_x; /* udata values */

static void test_read_data(void)
{
    struct kevent ev;
    char buf[1000] = {0};
    int kq = kq_new(), a, b;

    tcp_pair(&a, &b);
    CHECK_ERR(0, change(kq, a, EVFILT_READ, EV_ADD, 0, 0, &tag_r));
    CHECK_EQ(0, wait_ms(kq, &ev, 1, 50)); /* nothing to read yet */
    if (write(b, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
        die("write");
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000))) {
        CHECK_EQ(EVFILT_READ, ev.filter);
        CHECK_EQ(a, ev.ident);
        CHECK_EQ(1000, ev.data);
        CHECK(ev.udata == &tag_r);
        CHECK_EQ(0, ev.flags & EV_EOF);
    }
    close(kq);
    close(a);
    close(b);
}

static void test_write_data(void)
{
    struct kevent ev;
    static char buf[65536];
    int kq = kq_new(), a, b;
    int64_t room0 = 0;

    tcp_pair(&a, &b);
    CHECK_ERR(0, change(kq, a, EVFILT_WRITE, EV_ADD, 0, 0, &tag_w));
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000))) {
        CHECK_EQ(EVFILT_WRITE, ev.filter);
        CHECK(ev.data > 0);
        room0 = ev.data;
    }
    while (write(a, buf, sizeof(buf)) > 0) /* fill it: the peer never reads */
        ;
    CHECK_ERR(EAGAIN, errno);
    CHECK_EQ(0, wait_ms(kq, &ev, 1, 100)); /* full: not writable */
    /* the peer reads until we are told there is room again: less than at first */
    int n = 0;
    for (int i = 0; i < 1000 && n == 0; i++) {
        if (read(b, buf, sizeof(buf)) <= 0)
            die("read");
        n = wait_ms(kq, &ev, 1, 10);
    }
    if (CHECK_EQ(1, n)) {
        CHECK(ev.data > 0);
        if (!CHECK(ev.data < room0))
            fprintf(stderr, "  room %lld at first, %lld now\n", (long long)room0,
                    (long long)ev.data);
    }
    close(kq);
    close(a);
    close(b);
}

static void test_eof_half_close(void)
{
    struct kevent ev;
    int kq = kq_new(), a, b;

    tcp_pair(&a, &b);
    if (write(b, "abc", 3) != 3 || shutdown(b, SHUT_WR) < 0)
        die("write+shutdown");
    CHECK_ERR(0, change(kq, a, EVFILT_READ, EV_ADD, 0, 0, NULL));
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000))) {
        CHECK_EQ(EV_EOF, ev.flags & EV_EOF);
        CHECK_EQ(3, ev.data); /* EOF, and still 3 bytes to read */
        CHECK_ERR(0, ev.fflags);
    }
    close(kq);
    close(a);
    close(b);
}

static void test_eof_reset(void)
{
    struct kevent evs[2];
    struct linger lg = {1, 0};
    int kq = kq_new(), a, b;

    tcp_pair(&a, &b);
    setsockopt(b, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(b); /* RST */
    sleep_ms(20);
    CHECK_ERR(0, change(kq, a, EVFILT_READ, EV_ADD, 0, 0, &tag_r));
    CHECK_ERR(0, change(kq, a, EVFILT_WRITE, EV_ADD, 0, 0, &tag_w));
    int n = wait_ms(kq, evs, 2, 2000);
    CHECK_EQ(2, n);
    const struct kevent *r = find_event(evs, n, a, EVFILT_READ);
    const struct kevent *w = find_event(evs, n, a, EVFILT_WRITE);
    if (CHECK(r != NULL) && CHECK(w != NULL)) {
        CHECK_EQ(EV_EOF, r->flags & EV_EOF);
        CHECK_EQ(EV_EOF, w->flags & EV_EOF);
        /* read once per report, so one of the two carries it */
        CHECK_ERR(ECONNRESET, r->fflags | w->fflags);
    }
    close(kq);
    close(a);
}

static void test_listener_data(void)
{
    struct kevent ev;
    int kq = kq_new(), port, l = tcp_listener(&port), c[3];

    for (int i = 0; i < 3; i++)
        c[i] = tcp_connect(port);
    CHECK_ERR(0, change(kq, l, EVFILT_READ, EV_ADD, 0, 0, NULL));
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000)))
        CHECK_EQ(3, ev.data); /* connections waiting to be accepted */
    close(kq);
    close(l);
    for (int i = 0; i < 3; i++)
        close(c[i]);
}

/* Both directions of one fd: two knotes, two udata, one epoll registration. */
static void test_read_write_independent(void)
{
    struct kevent evs[4];
    int kq = kq_new(), a, b, n;

    tcp_pair(&a, &b);
    if (write(b, "x", 1) != 1)
        die("write");
    CHECK_ERR(0, change(kq, a, EVFILT_READ, EV_ADD, 0, 0, &tag_r));
    CHECK_ERR(0, change(kq, a, EVFILT_WRITE, EV_ADD, 0, 0, &tag_w));
    n = wait_ms(kq, evs, 4, 2000);
    CHECK_EQ(2, n);
    const struct kevent *r = find_event(evs, n, a, EVFILT_READ);
    const struct kevent *w = find_event(evs, n, a, EVFILT_WRITE);
    if (CHECK(r != NULL) && CHECK(w != NULL)) {
        CHECK(r->udata == &tag_r);
        CHECK(w->udata == &tag_w);
    }
    /* disable WRITE: READ alone */
    CHECK_ERR(0, change(kq, a, EVFILT_WRITE, EV_DISABLE, 0, 0, &tag_w));
    n = wait_ms(kq, evs, 4, 100);
    CHECK_EQ(1, n);
    CHECK(find_event(evs, n, a, EVFILT_READ) != NULL);
    /* delete READ: nothing (WRITE is disabled) */
    CHECK_ERR(0, change(kq, a, EVFILT_READ, EV_DELETE, 0, 0, NULL));
    CHECK_EQ(0, wait_ms(kq, evs, 4, 100));
    /* enable WRITE with a new udata: WRITE alone */
    CHECK_ERR(0, change(kq, a, EVFILT_WRITE, EV_ENABLE, 0, 0, &tag_x));
    n = wait_ms(kq, evs, 4, 100);
    if (CHECK_EQ(1, n)) {
        CHECK_EQ(EVFILT_WRITE, evs[0].filter);
        CHECK(evs[0].udata == &tag_x);
    }
    CHECK_ERR(ENOENT, change(kq, a, EVFILT_READ, EV_DELETE, 0, 0, NULL));
    close(kq);
    close(a);
    close(b);
}

static void test_oneshot(void)
{
    struct kevent evs[2];
    int kq = kq_new(), a, b, n;

    tcp_pair(&a, &b);
    if (write(b, "x", 1) != 1)
        die("write");
    CHECK_ERR(0, change(kq, a, EVFILT_READ, EV_ADD | EV_ONESHOT, 0, 0, &tag_r));
    CHECK_ERR(0, change(kq, a, EVFILT_WRITE, EV_ADD, 0, 0, &tag_w));
    CHECK_EQ(2, wait_ms(kq, evs, 2, 2000));
    const struct kevent *r = find_event(evs, 2, a, EVFILT_READ);
    if (CHECK(r != NULL))
        CHECK_EQ(EV_ONESHOT, r->flags & EV_ONESHOT);
    n = wait_ms(kq, evs, 2, 100); /* READ is gone, WRITE stays */
    if (CHECK_EQ(1, n))
        CHECK_EQ(EVFILT_WRITE, evs[0].filter);
    CHECK_ERR(ENOENT, change(kq, a, EVFILT_READ, EV_DELETE, 0, 0, NULL));
    close(kq);
    close(a);
    close(b);
}

/* EV_CLEAR: reported when data arrives, not again while it sits unread. */
static void test_clear(void)
{
    struct kevent ev;
    int kq = kq_new(), a, b;

    tcp_pair(&a, &b);
    CHECK_ERR(0, change(kq, a, EVFILT_READ, EV_ADD | EV_CLEAR, 0, 0, NULL));
    if (write(b, "ab", 2) != 2)
        die("write");
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000)))
        CHECK_EQ(2, ev.data);
    CHECK_EQ(0, wait_ms(kq, &ev, 1, 100)); /* unread, but already reported */
    if (write(b, "c", 1) != 1)
        die("write");
    if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000)))
        CHECK_EQ(3, ev.data);
    close(kq);
    close(a);
    close(b);
}

/* One fd, READ with EV_CLEAR and WRITE without: epoll's mode is per fd, so
 * the fd is level-triggered and both keep being reported (a documented
 * difference: BSD reports READ once, then WRITE alone). */
static void test_clear_and_level_on_one_fd(void)
{
    struct kevent evs[2];
    int kq = kq_new(), a, b;

    tcp_pair(&a, &b);
    if (write(b, "x", 1) != 1)
        die("write");
    CHECK_ERR(0, change(kq, a, EVFILT_READ, EV_ADD | EV_CLEAR, 0, 0, NULL));
    CHECK_ERR(0, change(kq, a, EVFILT_WRITE, EV_ADD, 0, 0, NULL));
    for (int round = 0; round < 3; round++) {
        int n = wait_ms(kq, evs, 2, 2000);
        CHECK_EQ(round == 0 || KQ_LAYER ? 2 : 1, n);
        CHECK(find_event(evs, n, a, EVFILT_WRITE) != NULL);
    }
    /* WRITE gone: READ alone is edge-triggered again (here re-polled by the
     * change, so reported once more; BSD reported it once already) */
    CHECK_ERR(0, change(kq, a, EVFILT_WRITE, EV_DELETE, 0, 0, NULL));
    CHECK_EQ(KQ_LAYER ? 1 : 0, wait_ms(kq, evs, 2, 2000));
    CHECK_EQ(0, wait_ms(kq, evs, 2, 100));
    close(kq);
    close(a);
    close(b);
}

static void test_dispatch(void)
{
    struct kevent ev;
    int kq = kq_new(), a, b;

    tcp_pair(&a, &b);
    if (write(b, "x", 1) != 1)
        die("write");
    CHECK_ERR(0, change(kq, a, EVFILT_READ, EV_ADD | EV_DISPATCH, 0, 0, NULL));
    CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000));
    CHECK_EQ(0, wait_ms(kq, &ev, 1, 100)); /* disabled after its event */
    CHECK_ERR(0, change(kq, a, EVFILT_READ, EV_ENABLE, 0, 0, NULL));
    CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000));
    close(kq);
    close(a);
    close(b);
}

/* close() deletes the fd's knotes: a new socket that gets the same number
 * starts with none (no WRITE event with the old udata). */
static void test_close_removes_knotes(void)
{
    struct kevent evs[2];
    int kq = kq_new(), a, b, a2, b2, n;

    tcp_pair(&a, &b);
    CHECK_ERR(0, change(kq, a, EVFILT_READ, EV_ADD, 0, 0, &tag_x));
    CHECK_ERR(0, change(kq, a, EVFILT_WRITE, EV_ADD, 0, 0, &tag_x));
    close(a);
    close(b);
    CHECK_EQ(0, wait_ms(kq, evs, 2, 50));
    tcp_pair(&a2, &b2);
    if (a2 != a) { /* tcp_pair's listener took the number: try once more */
        int a3 = dup(a2);
        close(a2);
        a2 = a3;
    }
    if (!CHECK_EQ(a, a2))
        goto out;
    if (write(b2, "y", 1) != 1)
        die("write");
    CHECK_ERR(ENOENT, change(kq, a2, EVFILT_WRITE, EV_DELETE, 0, 0, NULL));
    CHECK_ERR(0, change(kq, a2, EVFILT_READ, EV_ADD, 0, 0, &tag_r));
    n = wait_ms(kq, evs, 2, 2000);
    if (CHECK_EQ(1, n)) {
        CHECK_EQ(EVFILT_READ, evs[0].filter);
        CHECK(evs[0].udata == &tag_r);
    }
out:
    close(kq);
    close(a2);
    close(b2);
}

/* Room for one event, READ and WRITE both ready: they take turns. */
static void test_one_slot_takes_turns(void)
{
    struct kevent ev;
    int kq = kq_new(), a, b, seen_r = 0, seen_w = 0;

    tcp_pair(&a, &b);
    if (write(b, "x", 1) != 1)
        die("write");
    CHECK_ERR(0, change(kq, a, EVFILT_READ, EV_ADD, 0, 0, NULL));
    CHECK_ERR(0, change(kq, a, EVFILT_WRITE, EV_ADD, 0, 0, NULL));
    for (int i = 0; i < 4; i++) {
        if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000))) {
            seen_r += ev.filter == EVFILT_READ;
            seen_w += ev.filter == EVFILT_WRITE;
        }
    }
    CHECK_EQ(2, seen_r);
    CHECK_EQ(2, seen_w);
    close(kq);
    close(a);
    close(b);
}

/* BSD: NOTE_LOWAT in fflags, the mark in data: no event until that many
 * bytes wait. The layer leaves NOTE_LOWAT out of <sys/event.h> (a program
 * that uses it does not compile) and refuses its value, 1, with EINVAL. */
#if KQ_LAYER && defined(NOTE_LOWAT)
#error "common/kqueue-linux does not provide NOTE_LOWAT: it must not be defined"
#endif
#ifndef NOTE_LOWAT
#define NOTE_LOWAT 0x0001 /* FreeBSD's and macOS's value */
#endif

static void test_lowat(void)
{
    struct kevent ev;
    int kq = kq_new(), a, b;

    tcp_pair(&a, &b);
    if (KQ_LAYER) {
        CHECK_ERR(EINVAL, change(kq, a, EVFILT_READ, EV_ADD, NOTE_LOWAT, 10, NULL));
        CHECK_ERR(EINVAL, change(kq, a, EVFILT_WRITE, EV_ADD, NOTE_LOWAT, 10, NULL));
        CHECK_ERR(ENOENT, change(kq, a, EVFILT_READ, EV_DELETE, 0, 0, NULL));
    } else {
        CHECK_ERR(0, change(kq, a, EVFILT_READ, EV_ADD, NOTE_LOWAT, 10, NULL));
        if (write(b, "12345", 5) != 5)
            die("write");
        CHECK_EQ(0, wait_ms(kq, &ev, 1, 100)); /* 5 bytes, below the mark */
        if (write(b, "67890", 5) != 5)
            die("write");
        if (CHECK_EQ(1, wait_ms(kq, &ev, 1, 2000)))
            CHECK_EQ(10, ev.data);
    }
    close(kq);
    close(a);
    close(b);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    CHECK_RUN(test_read_data, "EVFILT_READ: data is the bytes ready to read, udata comes back");
    CHECK_RUN(test_write_data,
              "EVFILT_WRITE: data is the room to write; a full socket is not reported");
    CHECK_RUN(test_eof_half_close, "a half-close sets EV_EOF while data is still to be read");
    CHECK_RUN(test_eof_reset, "a reset sets EV_EOF on both filters, with ECONNRESET in fflags");
    CHECK_RUN(test_listener_data, "a listening socket: data is the connections waiting");
    CHECK_RUN(test_read_write_independent, "READ and WRITE on one fd are independent knotes");
    CHECK_RUN(test_oneshot, "EV_ONESHOT deletes READ after one event; WRITE on the same fd stays");
    CHECK_RUN(test_clear, "EV_CLEAR: reported when data arrives, not again while it sits");
    CHECK_RUN(test_clear_and_level_on_one_fd,
              "EV_CLEAR on READ and level-triggered WRITE on one fd");
    CHECK_RUN(test_dispatch, "EV_DISPATCH disables after one event; EV_ENABLE brings it back");
    CHECK_RUN(test_close_removes_knotes,
              "close() removes the fd's knotes; a reused number starts clean");
    CHECK_RUN(test_one_slot_takes_turns, "with room for one event, READ and WRITE take turns");
    CHECK_RUN(test_lowat, KQ_LAYER
                              ? "NOTE_LOWAT is not provided: not defined, and its value is EINVAL"
                              : "NOTE_LOWAT: no event until the mark's bytes wait");
    return check_exit();
}
