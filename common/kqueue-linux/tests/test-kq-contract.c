/* SPDX-License-Identifier: MIT */
/* test-kq-contract.c: the rules kqueue(2) states once for every filter,
 * checked filter by filter.
 *
 *   make -C common/kqueue-linux && build/common/kqueue-linux/tests/test-kq-contract
 *
 * FreeBSD's kqueue(2) gives most of its rules for all filters at once: EV_ADD
 * adds a knote, or modifies the one there ("Re-adding an existing event will
 * modify the parameters of the original event"), and udata is "passed
 * through the kernel unchanged"; EV_DELETE removes it, and a change for a
 * knote that is not there fails with ENOENT; EV_DISABLE keeps it but stops
 * its events, EV_ENABLE brings them back; EV_ONESHOT deletes it after its
 * first event, EV_DISPATCH disables it; EV_RECEIPT returns an EV_ERROR entry
 * with data 0 for a change that worked, and no events; a knote is one
 * (ident, filter) pair in one kqueue. Each test here runs once for each
 * filter the layer has, through a driver that knows what that filter
 * watches and how to make its condition true ("fire"):
 *
 *   EVFILT_READ    the read end of a pipe; fire: write a byte into it
 *   EVFILT_WRITE   the write end of a pipe, writable from the start
 *   EVFILT_SIGNAL  SIGUSR1, set to SIG_IGN; fire: kill(getpid(), SIGUSR1)
 *   EVFILT_TIMER   a 20 ms timer; fire: let 50 ms pass
 *   EVFILT_USER    fire: a change with NOTE_TRIGGER
 *
 * and EV_CLEAR, which each filter takes its own way: READ and WRITE report a
 * change once instead of a state while it lasts; SIGNAL sets it itself
 * (kqueue(2): "This filter automatically sets the EV_CLEAR flag
 * internally"), and so does TIMER (filt_timerattach() in FreeBSD's and
 * xnu's kern_event.c); USER untriggers on delivery.
 *
 * Where the layer differs by design (two kqueues share one signal on Linux;
 * see common/kqueue-linux/README.md), the check says so with KQ_LAYER.
 */
#include "kq_check.h"

#include <signal.h>
#include <stdbool.h>

#define QUIET_MS 50 /* how long "no event" is waited for */
#define TIMER_MS 20 /* the drivers' timer period */

/* What one filter watches in a test: an ident and what backs it. */
struct subject {
    uintptr_t ident;
    uintptr_t unused_ident; /* one of the same kind that no knote has */
    int fds[2];             /* READ, WRITE: a pipe */
};

struct driver {
    const char *name;
    short filter;
    unsigned int fflags; /* for EV_ADD */
    int64_t data;        /* for EV_ADD: the timer's period */
    bool state;          /* its condition can hold before the knote exists (an fd's) */
    bool per_kqueue;     /* fire() makes it true in one kqueue only (EVFILT_USER) */
    const char *clear;   /* what EV_CLEAR does for it */
    void (*open)(struct subject *s);
    void (*fire)(const struct subject *s, int kq, void *udata);
    void (*close)(struct subject *s);
};

static int tag_a, tag_b; /* udata values */

static void pipe_open(struct subject *s, int end)
{
    if (pipe(s->fds) < 0)
        die("pipe");
    s->ident = (uintptr_t)s->fds[end];
    s->unused_ident = (uintptr_t)s->fds[1 - end]; /* open, never added */
}

static void read_open(struct subject *s)
{
    pipe_open(s, 0);
}

static void write_open(struct subject *s)
{
    pipe_open(s, 1);
}

static void pipe_close(struct subject *s)
{
    close(s->fds[0]);
    close(s->fds[1]);
}

static void read_fire(const struct subject *s, int kq, void *udata)
{
    (void)kq;
    (void)udata;
    if (write(s->fds[1], "x", 1) != 1)
        die("write(pipe)");
}

static void nothing_to_fire(const struct subject *s, int kq, void *udata)
{
    (void)s, (void)kq, (void)udata; /* a pipe with room is writable already */
}

static void signal_open(struct subject *s)
{
    signal(SIGUSR1, SIG_IGN); /* BSD's idiom: ignored, and watched */
    s->ident = SIGUSR1;
    s->unused_ident = SIGUSR2;
}

static void signal_fire(const struct subject *s, int kq, void *udata)
{
    (void)kq;
    (void)udata;
    kill(getpid(), (int)s->ident);
}

static void signal_close(struct subject *s)
{
    (void)s;
    signal(SIGUSR1, SIG_DFL);
}

static void number_open(struct subject *s)
{
    s->ident = 7;
    s->unused_ident = 8;
}

static void timer_fire(const struct subject *s, int kq, void *udata)
{
    (void)s, (void)kq, (void)udata;
    sleep_ms(TIMER_MS + 30);
}

/* A trigger is a change, and every change sets udata: it passes the same. */
static void user_fire(const struct subject *s, int kq, void *udata)
{
    CHECK_ERR(0, change(kq, s->ident, EVFILT_USER, 0, NOTE_TRIGGER, 0, udata));
}

static void number_close(struct subject *s)
{
    (void)s;
}

#define BY_ITSELF "EV_CLEAR set on every event by the filter itself; data counts since the last"

static const struct driver drivers[] = {
    {"EVFILT_READ", EVFILT_READ, 0, 0, true, false,
     "with EV_CLEAR a byte is reported once, a new one again; without, while unread", read_open,
     read_fire, pipe_close},
    {"EVFILT_WRITE", EVFILT_WRITE, 0, 0, true, false,
     "with EV_CLEAR writable is reported once; without, on every call", write_open, nothing_to_fire,
     pipe_close},
    {"EVFILT_SIGNAL", EVFILT_SIGNAL, 0, 0, false, false, BY_ITSELF, signal_open, signal_fire,
     signal_close},
    {"EVFILT_TIMER", EVFILT_TIMER, 0, TIMER_MS, false, false, BY_ITSELF, number_open, timer_fire,
     number_close},
    {"EVFILT_USER", EVFILT_USER, 0, 0, false, true,
     "with EV_CLEAR one event per trigger; without, it stays triggered", number_open, user_fire,
     number_close},
};

static const struct driver *d; /* the filter under test */
static struct subject subj;

static int add(int kq, unsigned short flags, void *udata)
{
    return change(kq, subj.ident, d->filter, EV_ADD | flags, d->fflags, d->data, udata);
}

static int del(int kq)
{
    return change(kq, subj.ident, d->filter, EV_DELETE, 0, 0, NULL);
}

/* Fire a subject whose knote is gone: a user event cannot be triggered any
 * more (ENOENT); the others' conditions happen regardless of knotes. */
static void fire_gone(int kq)
{
    if (d->per_kqueue)
        CHECK_ERR(ENOENT, change(kq, subj.ident, d->filter, 0, NOTE_TRIGGER, 0, &tag_a));
    else
        d->fire(&subj, kq, &tag_a);
}

/* Wait for one event of the subject's; 1 if it came, with *ev filled. */
static int one_event(int kq, struct kevent *ev, long ms)
{
    int n = wait_ms(kq, ev, 1, ms);

    if (n == 1 && !(CHECK_EQ(subj.ident, ev->ident) && CHECK_EQ(d->filter, ev->filter)))
        return 0;
    return n;
}

static void test_add_delete(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, add(kq, 0, &tag_a));
    d->fire(&subj, kq, &tag_a);
    if (CHECK_EQ(1, one_event(kq, &ev, 2000))) {
        CHECK(ev.udata == &tag_a);
        CHECK_EQ(0, ev.flags & EV_ERROR);
    }
    CHECK_ERR(0, del(kq));
    fire_gone(kq);
    CHECK_EQ(0, wait_ms(kq, &ev, 1, QUIET_MS));
    CHECK_ERR(ENOENT, del(kq));
    CHECK_ERR(ENOENT, change(kq, subj.unused_ident, d->filter, EV_DELETE, 0, 0, NULL));
    close(kq);
}

static void test_disable_enable(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, add(kq, EV_DISABLE, &tag_a));
    d->fire(&subj, kq, &tag_a);
    CHECK_EQ(0, wait_ms(kq, &ev, 1, QUIET_MS));
    CHECK_ERR(0, change(kq, subj.ident, d->filter, EV_ENABLE, 0, 0, &tag_a));
    if (CHECK_EQ(1, one_event(kq, &ev, 2000)))
        CHECK(ev.udata == &tag_a);
    CHECK_ERR(0, change(kq, subj.ident, d->filter, EV_DISABLE, 0, 0, &tag_a));
    d->fire(&subj, kq, &tag_a);
    CHECK_EQ(0, wait_ms(kq, &ev, 1, QUIET_MS));
    CHECK_ERR(0, del(kq)); /* disabled, not gone */
    close(kq);
}

static void test_oneshot(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, add(kq, EV_ONESHOT, &tag_a));
    d->fire(&subj, kq, &tag_a);
    if (CHECK_EQ(1, one_event(kq, &ev, 2000))) {
        CHECK_EQ(EV_ONESHOT, ev.flags & EV_ONESHOT);
        CHECK(ev.udata == &tag_a);
    }
    fire_gone(kq);
    CHECK_EQ(0, wait_ms(kq, &ev, 1, QUIET_MS));
    CHECK_ERR(ENOENT, del(kq));
    close(kq);
}

static void test_dispatch(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, add(kq, EV_DISPATCH, &tag_a));
    d->fire(&subj, kq, &tag_a);
    if (CHECK_EQ(1, one_event(kq, &ev, 2000)))
        CHECK_EQ(EV_DISPATCH, ev.flags & EV_DISPATCH);
    d->fire(&subj, kq, &tag_a);
    CHECK_EQ(0, wait_ms(kq, &ev, 1, QUIET_MS)); /* disabled by its event */
    CHECK_ERR(0, change(kq, subj.ident, d->filter, EV_ENABLE, 0, 0, &tag_a));
    if (CHECK_EQ(1, one_event(kq, &ev, 2000)))
        CHECK(ev.udata == &tag_a);
    CHECK_ERR(0, del(kq)); /* still there */
    close(kq);
}

/* EV_RECEIPT: one EV_ERROR entry, data 0, and no event from that call, even
 * when the condition holds already (an fd's). */
static void test_receipt(void)
{
    struct kevent ch, out[2];
    int kq = kq_new(), n;

    if (d->state)
        d->fire(&subj, kq, &tag_a);
    EV_SET(&ch, subj.ident, d->filter, EV_ADD | EV_RECEIPT, d->fflags, d->data, &tag_a);
    n = kevent(kq, &ch, 1, out, 2, NULL);
    if (CHECK_EQ(1, n)) {
        CHECK_EQ(EV_ERROR, out[0].flags & EV_ERROR);
        CHECK_ERR(0, out[0].data);
        CHECK_EQ(subj.ident, out[0].ident);
        CHECK(out[0].udata == &tag_a);
    }
    if (!d->state)
        d->fire(&subj, kq, &tag_a);
    CHECK_EQ(1, one_event(kq, out, 2000));
    CHECK_ERR(0, del(kq));
    close(kq);
}

/* udata comes back unchanged with every event, not only the first. */
static void test_udata_kept(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, add(kq, 0, &tag_a));
    for (int i = 0; i < 2; i++) {
        d->fire(&subj, kq, &tag_a);
        if (CHECK_EQ(1, one_event(kq, &ev, 2000)))
            CHECK(ev.udata == &tag_a);
    }
    CHECK_ERR(0, del(kq));
    close(kq);
}

/* EV_ADD on a knote that exists modifies it: the new udata comes back, and
 * so do the new fflags where the filter hands them back or acts on them. */
static void test_modify(void)
{
    struct kevent ev;
    int kq = kq_new();
    long long t0;

    switch (d->filter) {
    case EVFILT_TIMER: /* 1 hour, then 20 ms: the unit is fflags */
        CHECK_ERR(0, change(kq, subj.ident, EVFILT_TIMER, EV_ADD, NOTE_SECONDS, 3600, &tag_a));
        t0 = now_ms();
        CHECK_ERR(0, change(kq, subj.ident, EVFILT_TIMER, EV_ADD, NOTE_USECONDS, 20000, &tag_b));
        if (CHECK_EQ(1, one_event(kq, &ev, 3000))) {
            CHECK(ev.udata == &tag_b);
            CHECK(now_ms() - t0 < 3000);
        }
        break;
    case EVFILT_USER: /* the stored user flags come back in fflags */
        CHECK_ERR(0, change(kq, subj.ident, EVFILT_USER, EV_ADD, 0x1, 0, &tag_a));
        CHECK_ERR(0, change(kq, subj.ident, EVFILT_USER, EV_ADD, NOTE_FFCOPY | 0x2, 0, &tag_b));
        d->fire(&subj, kq, &tag_b);
        if (CHECK_EQ(1, one_event(kq, &ev, 2000))) {
            CHECK(ev.udata == &tag_b);
            CHECK_EQ(0x2, ev.fflags);
        }
        break;
    default: /* READ, WRITE (no fflags here) and SIGNAL (none): udata */
        CHECK_ERR(0, add(kq, 0, &tag_a));
        CHECK_ERR(0, add(kq, 0, &tag_b));
        d->fire(&subj, kq, &tag_b);
        if (CHECK_EQ(1, one_event(kq, &ev, 2000)))
            CHECK(ev.udata == &tag_b);
    }
    CHECK_ERR(0, del(kq));
    CHECK_ERR(ENOENT, del(kq)); /* one knote, modified: not two */
    close(kq);
}

/* An event pending when its knote is disabled, or deleted, is not returned. */
static void test_disable_drains(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, add(kq, 0, &tag_a));
    d->fire(&subj, kq, &tag_a);
    CHECK_ERR(0, change(kq, subj.ident, d->filter, EV_DISABLE, 0, 0, &tag_a));
    CHECK_EQ(0, wait_ms(kq, &ev, 1, QUIET_MS));
    CHECK_ERR(0, del(kq));
    close(kq);
}

static void test_delete_drains(void)
{
    struct kevent ev;
    int kq = kq_new();

    CHECK_ERR(0, add(kq, 0, &tag_a));
    d->fire(&subj, kq, &tag_a);
    CHECK_ERR(0, del(kq));
    CHECK_EQ(0, wait_ms(kq, &ev, 1, QUIET_MS));
    close(kq);
}

/* The same (ident, filter) in two kqueues: two knotes, each with its own
 * udata; deleting one leaves the other. A signal is the exception here: the
 * layer's two signalfds share the one pending signal, and the first kqueue
 * to look takes it (BSD reports it to both). */
static void test_two_kqueues(void)
{
    struct kevent ev;
    int kq1 = kq_new(), kq2 = kq_new();
    bool shared = KQ_LAYER && d->filter == EVFILT_SIGNAL;

    CHECK_ERR(0, add(kq1, 0, &tag_a));
    CHECK_ERR(0, add(kq2, 0, &tag_b));
    d->fire(&subj, kq1, &tag_a);
    if (d->per_kqueue)
        d->fire(&subj, kq2, &tag_b);
    if (CHECK_EQ(1, one_event(kq1, &ev, 2000)))
        CHECK(ev.udata == &tag_a);
    if (CHECK_EQ(shared ? 0 : 1, one_event(kq2, &ev, shared ? QUIET_MS : 2000)) && !shared)
        CHECK(ev.udata == &tag_b);
    CHECK_ERR(0, del(kq1));
    if (d->per_kqueue)
        CHECK_ERR(ENOENT, change(kq1, subj.ident, EVFILT_USER, 0, NOTE_TRIGGER, 0, &tag_a));
    d->fire(&subj, kq2, &tag_b);
    CHECK_EQ(0, wait_ms(kq1, &ev, 1, QUIET_MS));
    if (CHECK_EQ(1, one_event(kq2, &ev, 2000)))
        CHECK(ev.udata == &tag_b);
    CHECK_ERR(ENOENT, del(kq1));
    CHECK_ERR(0, del(kq2));
    close(kq1);
    close(kq2);
}

/* ---- EV_CLEAR, filter by filter ------------------------------------------- */

static void clear_read(int kq)
{
    struct kevent ev;

    CHECK_ERR(0, add(kq, 0, NULL)); /* level: reported while the byte waits */
    d->fire(&subj, kq, NULL);
    CHECK_EQ(1, one_event(kq, &ev, 2000));
    CHECK_EQ(1, one_event(kq, &ev, 2000));
    CHECK_ERR(0, del(kq));
    CHECK_ERR(0, add(kq, EV_CLEAR, NULL)); /* the byte is there: one event, then none */
    if (CHECK_EQ(1, one_event(kq, &ev, 2000)))
        CHECK_EQ(1, ev.data);
    CHECK_EQ(0, wait_ms(kq, &ev, 1, QUIET_MS));
    d->fire(&subj, kq, NULL); /* a new byte: reported again, both counted */
    if (CHECK_EQ(1, one_event(kq, &ev, 2000)))
        CHECK_EQ(2, ev.data);
}

static void clear_write(int kq)
{
    struct kevent ev;

    CHECK_ERR(0, add(kq, 0, NULL));
    CHECK_EQ(1, one_event(kq, &ev, 2000));
    CHECK_EQ(1, one_event(kq, &ev, 2000));
    CHECK_ERR(0, del(kq)); /* a modify keeps the flags of the add: delete, add anew */
    CHECK_ERR(0, add(kq, EV_CLEAR, NULL));
    CHECK_EQ(1, one_event(kq, &ev, 2000));
    CHECK_EQ(0, wait_ms(kq, &ev, 1, QUIET_MS));
}

/* SIGNAL and TIMER: EV_CLEAR on every event though not asked for, and data
 * counts since the last event. */
static void clear_by_itself(int kq)
{
    struct kevent ev;

    CHECK_ERR(0, add(kq, 0, NULL));
    for (int i = 0; i < 2; i++) {
        d->fire(&subj, kq, NULL);
        if (CHECK_EQ(1, one_event(kq, &ev, 2000))) {
            CHECK_EQ(EV_CLEAR, ev.flags & EV_CLEAR);
            CHECK(ev.data >= 1);
        }
    }
    if (d->filter == EVFILT_SIGNAL)
        CHECK_EQ(0, wait_ms(kq, &ev, 1, QUIET_MS)); /* counted, then reset */
}

static void clear_user(int kq)
{
    struct kevent ev;

    CHECK_ERR(0, add(kq, 0, NULL)); /* stays triggered */
    d->fire(&subj, kq, NULL);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(1, one_event(kq, &ev, 2000));
    CHECK_ERR(0, del(kq));
    CHECK_ERR(0, add(kq, EV_CLEAR, NULL)); /* one event per trigger */
    for (int i = 0; i < 2; i++) {
        d->fire(&subj, kq, NULL);
        CHECK_EQ(1, one_event(kq, &ev, 2000));
        CHECK_EQ(0, wait_ms(kq, &ev, 1, QUIET_MS));
    }
}

static void test_clear(void)
{
    int kq = kq_new();

    switch (d->filter) {
    case EVFILT_READ:
        clear_read(kq);
        break;
    case EVFILT_WRITE:
        clear_write(kq);
        break;
    case EVFILT_USER:
        clear_user(kq);
        break;
    default:
        clear_by_itself(kq);
    }
    CHECK_ERR(0, del(kq));
    close(kq);
}

struct contract_test {
    void (*fn)(void);
    const char *rule;
};

static const struct contract_test tests[] = {
    {test_add_delete, "EV_ADD reports it with its udata; EV_DELETE removes it; ENOENT after"},
    {test_disable_enable, "added with EV_DISABLE: silent until EV_ENABLE, and kept"},
    {test_oneshot, "EV_ONESHOT: one event (flag set), then gone: EV_DELETE says ENOENT"},
    {test_dispatch, "EV_DISPATCH: one event, then disabled until EV_ENABLE, and kept"},
    {test_receipt, "EV_RECEIPT: an EV_ERROR entry with data 0, and no event from that call"},
    {test_udata_kept, "udata comes back unchanged with every event"},
    {test_modify, "EV_ADD again modifies the one knote: new udata (and fflags) come back"},
    {test_disable_drains, "EV_DISABLE drops an event already pending"},
    {test_delete_drains, "EV_DELETE drops an event already pending"},
    {test_two_kqueues, "two kqueues, one ident: two knotes, own udata, deleted apart"},
};

int main(void)
{
    char name[200];

    for (size_t f = 0; f < sizeof(drivers) / sizeof(drivers[0]); f++) {
        d = &drivers[f];
        for (size_t t = 0; t <= sizeof(tests) / sizeof(tests[0]); t++) {
            bool clear = t == sizeof(tests) / sizeof(tests[0]);
            int before = check_failures;
            d->open(&subj);
            if (clear)
                test_clear();
            else
                tests[t].fn();
            d->close(&subj);
            snprintf(name, sizeof(name), "%s: %s", d->name, clear ? d->clear : tests[t].rule);
            check_report(name, before);
        }
    }
    return check_exit();
}
