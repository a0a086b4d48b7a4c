/* SPDX-License-Identifier: MIT */
/* test-kq-threads.c: one event, one thread. Four threads wait in kevent() on
 * one kqueue; an event armed once is delivered to one of them, once.
 *
 *   make -C common/kqueue-linux && build/common/kqueue-linux/tests/test-kq-threads
 *
 * What it proves, for every filter: an EV_CLEAR event (READ and WRITE on a
 * pipe, USER, TIMER and SIGNAL, which set EV_CLEAR themselves) fired once is
 * delivered once; an EV_ONESHOT event once per EV_ADD; an EV_DISPATCH event
 * once per EV_ENABLE, though its condition (a byte in a pipe, a triggered
 * user event) still holds. The expectation is libkqueue's threading test
 * user_single_delivery, here for each filter and each of the three flags.
 *
 * Each case runs rounds (up to ROUNDS, for at most BUDGET_MS after the first
 * MIN_ROUNDS). A round:
 *
 *   1. main waits until the four waiters are back in their loop and (on
 *      Linux, where /proc says so) asleep in epoll_wait(), then arms the
 *      event once (a trigger, a byte, a signal, an EV_ENABLE...). A change
 *      that arms it comes first in a long list of changes that do nothing:
 *      the layer applies them all under the kqueue's mutex, so every waiter
 *      the event wakes gets its report of it before any can take the event.
 *      That is the moment a layer could hand the event to two of them, and
 *      on a busy machine (the CI's two cores run four test files at once)
 *      it would otherwise come seldom;
 *   2. main waits for the first delivery (DELIVERY_MS at most: after that the
 *      round counts as "not delivered");
 *   3. main triggers the fence, a level-triggered EVFILT_USER event that
 *      stays triggered, so every waiter's next kevent() call reports it;
 *      a waiter that sees it stops, so when all four have stopped, each has
 *      returned from every kevent() call it was in when the event was armed.
 *      A second delivery, from a report one of them still held, has been
 *      counted by then: the round's count is final, with no sleep;
 *   4. main re-adds the fence untriggered, resets the case (drains the
 *      pipe...) and lets the waiters go on to the next round.
 *
 * On Linux it checks the layer (an eventfd is level-triggered in epoll, and
 * every waiter woken for it holds a report); on FreeBSD and macOS, the
 * system's kqueue.
 */
#include "kq_check.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#ifdef __linux__
#include <sched.h>
#include <sys/syscall.h>
#endif

#define WAITERS     4
#define ROUNDS      1000  /* per case, at most */
#define MIN_ROUNDS  100   /* per case, at least, however slow the machine */
#define BUDGET_MS   150   /* per case, once MIN_ROUNDS are done */
#define DELIVERY_MS 2000  /* generous: an armed event not delivered by then is lost */
#define STALL_MS    10000 /* waiters that take longer to stop have hung */
#define SHOW_ROUNDS 5     /* rounds described on stderr when they go wrong */
#define ASLEEP_MS   100   /* waiters not asleep by then: /proc cannot tell, stop asking */

#define PADS 1024 /* changes after the arming one (race__arm_change()) */

#define EVENT_IDENT 7
#define FENCE_IDENT 0xfe
#define PAD_IDENT   0xfd

/* FreeBSD's name, and macOS's (the layer has both, with FreeBSD's value). */
#ifdef NOTE_ABSTIME
#define KQ_ABS NOTE_ABSTIME
#else
#define KQ_ABS NOTE_ABSOLUTE
#endif

static int event_tag, fence_tag;

/* What one case is about, and what the waiters share. Every field below
 * `lock` is guarded by it. */
struct race {
    int kq;
    short filter;
    uintptr_t ident;
    int fds[2];          /* READ, WRITE: a pipe */
    pid_t tids[WAITERS]; /* the waiters' thread ids (Linux), for /proc */
    pthread_mutex_t lock;
    int started;            /* waiters that wrote their thread id */
    pthread_cond_t changed; /* any field below changed */
    unsigned round;         /* bumped by main: the waiters go on */
    int waiting;            /* waiters back in their loop this round */
    int stopped;            /* waiters that saw the fence this round */
    int delivered;          /* the event's deliveries this round */
    int unexpected;         /* events that are neither the event nor the fence */
    bool quit;
};

struct race_case {
    const char *name;
    short filter;
    void (*setup)(struct race *r); /* before the waiters start */
    void (*arm)(struct race *r);   /* make the event happen once */
    void (*reset)(struct race *r); /* after the round, waiters stopped; may be NULL */
    void (*teardown)(struct race *r);
};

static void fail_hard(const char *what)
{
    fprintf(stderr, "%s\n", what);
    exit(1); /* the waiters may be stuck in kevent(): no join */
}

/* Wait, with the lock held, until *counter reaches want or ms pass. */
static bool race__wait_for(struct race *r, const int *counter, int want, long ms)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (*counter < want)
        if (pthread_cond_timedwait(&r->changed, &r->lock, &until) != 0)
            return *counter >= want;
    return true;
}

#ifdef __linux__
static bool race_asleep_known = true; /* cleared when /proc does not tell */

/* Whether thread tid is blocked in epoll_wait(): /proc/PID/task/TID/syscall
 * starts with the number of the system call a blocked thread is in. */
static bool race__in_epoll_wait(pid_t tid)
{
    char path[64], line[128] = "";
    long nr;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
    if (!(f = fopen(path, "r")))
        return false;
    if (!fgets(line, sizeof(line), f))
        line[0] = '\0';
    fclose(f);
    nr = strtol(line, NULL, 10);
#ifdef SYS_epoll_wait
    if (nr == SYS_epoll_wait)
        return true;
#endif
    return nr == SYS_epoll_pwait;
}

/* Wait until every waiter is asleep in epoll_wait(), for ASLEEP_MS at most;
 * if they never all are, /proc does not tell here (no access, another
 * system call): stop asking, for the rest of the program. */
static void race__wait_asleep(const struct race *r)
{
    long long until = now_ms() + ASLEEP_MS;

    for (int i = 0; race_asleep_known && i < WAITERS;) {
        if (race__in_epoll_wait(r->tids[i]))
            i++;
        else if (now_ms() < until)
            sched_yield();
        else
            race_asleep_known = false;
    }
}
#else
static void race__wait_asleep(const struct race *r)
{
    (void)r; /* the test still runs, with the waiters wherever they are */
}
#endif

/* One waiter: kevent() until the fence, counting the event's deliveries;
 * then wait for main to start the next round. */
static void *race__waiter(void *arg)
{
    struct race *r = arg;
    unsigned round = 0;

#ifdef __linux__
    pthread_mutex_lock(&r->lock);
    r->tids[r->started++] = (pid_t)syscall(SYS_gettid); /* before waiting++ below */
    pthread_mutex_unlock(&r->lock);
#endif
    for (;;) {
        bool fenced = false;
        pthread_mutex_lock(&r->lock);
        r->waiting++;
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
        while (!fenced) {
            struct kevent evs[4];
            int n = kevent(r->kq, NULL, 0, evs, 4, NULL);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                die("kevent() in a waiter");
            pthread_mutex_lock(&r->lock);
            for (int i = 0; i < n; i++) {
                if (evs[i].filter == EVFILT_USER && evs[i].ident == FENCE_IDENT)
                    fenced = true;
                else if (evs[i].filter == r->filter && evs[i].ident == r->ident &&
                         evs[i].udata == &event_tag && !(evs[i].flags & EV_ERROR))
                    r->delivered++;
                else
                    r->unexpected++;
            }
            pthread_cond_broadcast(&r->changed);
            pthread_mutex_unlock(&r->lock);
        }
        pthread_mutex_lock(&r->lock);
        r->stopped++;
        pthread_cond_broadcast(&r->changed);
        while (r->round == round && !r->quit)
            pthread_cond_wait(&r->changed, &r->lock);
        round = r->round;
        bool quit = r->quit;
        pthread_mutex_unlock(&r->lock);
        if (quit)
            return NULL;
    }
}

/* Steps 2 to 4 of a round (see the top of this file): returns the number of
 * deliveries of the event armed in step 1. After the last round the waiters,
 * stopped at the fence, are told to quit instead of going on. */
static int race__finish_round(struct race *r, const struct race_case *c, bool last)
{
    struct kevent fence[2];
    int delivered;

    pthread_mutex_lock(&r->lock);
    race__wait_for(r, &r->delivered, 1, DELIVERY_MS);
    pthread_mutex_unlock(&r->lock);
    CHECK_ERR(0, change(r->kq, FENCE_IDENT, EVFILT_USER, 0, NOTE_TRIGGER, 0, &fence_tag));
    pthread_mutex_lock(&r->lock);
    if (!race__wait_for(r, &r->stopped, WAITERS, STALL_MS))
        fail_hard("the waiters did not all stop at the fence");
    delivered = r->delivered;
    pthread_mutex_unlock(&r->lock);
    /* untriggered again, for the next round: deleted and added afresh */
    EV_SET(&fence[0], FENCE_IDENT, EVFILT_USER, EV_DELETE, 0, 0, NULL);
    EV_SET(&fence[1], FENCE_IDENT, EVFILT_USER, EV_ADD, 0, 0, &fence_tag);
    if (kevent(r->kq, fence, 2, NULL, 0, NULL) < 0)
        die("kevent(re-add the fence)");
    if (c->reset)
        c->reset(r);
    pthread_mutex_lock(&r->lock);
    r->delivered = r->stopped = r->waiting = 0;
    r->round++;
    r->quit = last;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    return delivered;
}

static void race_run(const struct race_case *c)
{
    struct race r = {.filter = c->filter, .ident = EVENT_IDENT, .fds = {-1, -1}};
    pthread_t waiters[WAITERS];
    int rounds = 0, twice = 0, none = 0, most = 0;
    bool last = false;
    long long start;

    r.kq = kq_new();
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.changed, NULL);
    CHECK_ERR(0, change(r.kq, FENCE_IDENT, EVFILT_USER, EV_ADD, 0, 0, &fence_tag));
    c->setup(&r); /* a signal is blocked here, before the waiters inherit the mask */
    for (int i = 0; i < WAITERS; i++)
        if (pthread_create(&waiters[i], NULL, race__waiter, &r) != 0)
            die("pthread_create");
    start = now_ms();
    while (!last) {
        pthread_mutex_lock(&r.lock);
        if (!race__wait_for(&r, &r.waiting, WAITERS, STALL_MS))
            fail_hard("the waiters did not come back to kevent()");
        pthread_mutex_unlock(&r.lock);
        race__wait_asleep(&r);
        c->arm(&r);
        rounds++;
        last = rounds >= ROUNDS || (rounds >= MIN_ROUNDS && now_ms() - start >= BUDGET_MS);
        int n = race__finish_round(&r, c, last);
        if (n != 1 && twice + none < SHOW_ROUNDS)
            fprintf(stderr, "  %s: round %d: delivered %d times, expected once\n", c->name, rounds,
                    n);
        twice += n > 1;
        none += n == 0;
        most = n > most ? n : most;
    }
    for (int i = 0; i < WAITERS; i++)
        pthread_join(waiters[i], NULL);
    printf("# %s: %d rounds, %d delivered more than once (at most %d), %d not delivered\n", c->name,
           rounds, twice, most, none);
    CHECK_MSG(twice == 0, "%s: %d of %d rounds delivered the event more than once (up to %d times)",
              c->name, twice, rounds, most);
    CHECK_MSG(none == 0, "%s: %d of %d rounds did not deliver the event within %d ms", c->name,
              none, rounds, DELIVERY_MS);
    CHECK_EQ(0, r.unexpected);
    c->teardown(&r);
    pthread_cond_destroy(&r.changed);
    pthread_mutex_destroy(&r.lock);
    close(r.kq);
}

/* A knote of the case's filter on its ident, with the event's udata. */
static void race__change(struct race *r, unsigned short flags, unsigned int fflags, int64_t data)
{
    CHECK_ERR(0, change(r->kq, r->ident, r->filter, flags, fflags, data, &event_tag));
}

/* The change that arms the event, followed in the same kevent() call by
 * PADS changes that do nothing but take time (restarting a timer an hour
 * away). The layer applies a call's changes under the kqueue's mutex, so the
 * waiters woken by the first one all get their report from epoll_wait()
 * before any of them can take the event: on a busy machine too, each has a
 * report to deliver or to find stale. BSD applies them one by one, and the
 * waiters may take the event at once. */
static void race__arm_change(struct race *r, unsigned short flags, unsigned int fflags,
                             int64_t data)
{
    static struct kevent changes[1 + PADS];

    EV_SET(&changes[0], r->ident, r->filter, flags, fflags, data, &event_tag);
    for (int i = 1; i <= PADS; i++)
        EV_SET(&changes[i], PAD_IDENT, EVFILT_TIMER, EV_ADD, 0, 3600 * 1000, NULL);
    if (kevent(r->kq, changes, 1 + PADS, NULL, 0, NULL) < 0)
        die("kevent(the arming change, then the padding)");
}

static void nothing(struct race *r)
{
    (void)r;
}

static void arm_enable(struct race *r)
{
    race__arm_change(r, EV_ENABLE, 0, 0);
}

static void teardown_delete(struct race *r)
{
    race__change(r, EV_DELETE, 0, 0);
}

/* EVFILT_USER: fired by NOTE_TRIGGER. */
static void user_setup_clear(struct race *r)
{
    race__change(r, EV_ADD | EV_CLEAR, 0, 0);
}

static void user_arm_trigger(struct race *r)
{
    race__arm_change(r, 0, NOTE_TRIGGER, 0);
}

static void user_arm_oneshot(struct race *r)
{
    race__arm_change(r, EV_ADD | EV_ONESHOT, NOTE_TRIGGER, 0);
}

/* Triggered for good (no EV_CLEAR): each EV_ENABLE lets one event through. */
static void user_setup_dispatch(struct race *r)
{
    race__change(r, EV_ADD | EV_DISPATCH | EV_DISABLE, NOTE_TRIGGER, 0);
}

/* EVFILT_READ and EVFILT_WRITE: a non-blocking pipe. ident is the read end
 * for READ, the write end for WRITE. */
static void pipe_open(struct race *r)
{
    if (pipe(r->fds) < 0)
        die("pipe");
    for (int i = 0; i < 2; i++)
        if (fcntl(r->fds[i], F_SETFL, O_NONBLOCK) < 0 || fcntl(r->fds[i], F_SETFD, FD_CLOEXEC) < 0)
            die("fcntl(pipe)");
    r->ident = (uintptr_t)r->fds[r->filter == EVFILT_READ ? 0 : 1];
}

static void pipe_close(struct race *r)
{
    close(r->fds[0]);
    close(r->fds[1]);
}

static void pipe_put_byte(struct race *r)
{
    if (write(r->fds[1], "x", 1) != 1)
        die("write(pipe)");
}

/* Empty the pipe in one read() when it can (the buffer is larger than a
 * pipe's 64 KiB): one wake-up for a writer waiting on a full pipe. */
static void pipe_drain(struct race *r)
{
    static char buf[256 * 1024];

    while (read(r->fds[0], buf, sizeof(buf)) > 0)
        ;
}

static void pipe_fill(struct race *r)
{
    static const char buf[4096];

    while (write(r->fds[1], buf, sizeof(buf)) > 0)
        ;
    while (write(r->fds[1], buf, 1) > 0) /* the last bytes of room */
        ;
}

static void read_setup_clear(struct race *r)
{
    pipe_open(r);
    race__change(r, EV_ADD | EV_CLEAR, 0, 0);
}

/* A byte that stays: the pipe is readable in every round. */
static void read_setup_oneshot(struct race *r)
{
    pipe_open(r);
    pipe_put_byte(r);
}

static void read_setup_dispatch(struct race *r)
{
    read_setup_oneshot(r);
    race__change(r, EV_ADD | EV_DISPATCH | EV_DISABLE, 0, 0);
}

static void fd_arm_oneshot(struct race *r)
{
    race__arm_change(r, EV_ADD | EV_ONESHOT, 0, 0);
}

static void read_teardown(struct race *r)
{
    teardown_delete(r);
    pipe_close(r);
}

/* WRITE with EV_CLEAR: the pipe is full when the knote is added, and
 * becomes writable once, when main empties it. */
static void write_setup_full(struct race *r)
{
    pipe_open(r);
    pipe_fill(r);
}

static void write_arm_clear(struct race *r)
{
    race__change(r, EV_ADD | EV_CLEAR, 0, 0);
    pipe_drain(r);
}

static void write_reset_clear(struct race *r)
{
    race__change(r, EV_DELETE, 0, 0);
    pipe_fill(r);
}

/* An empty pipe: writable in every round. */
static void write_setup_dispatch(struct race *r)
{
    pipe_open(r);
    race__change(r, EV_ADD | EV_DISPATCH | EV_DISABLE, 0, 0);
}

static void write_teardown(struct race *r)
{
    teardown_delete(r);
    pipe_close(r);
}

/* EVFILT_TIMER. An absolute time already past (1 s after the Epoch) fires
 * at once and does not repeat; with EV_CLEAR it is reported once (macOS
 * makes it EV_ONESHOT itself: once too). */
static void timer_arm_abstime(struct race *r)
{
    race__arm_change(r, EV_ADD | EV_CLEAR, KQ_ABS | NOTE_SECONDS, 1);
}

static void timer_reset_abstime(struct race *r)
{
    int err = change(r->kq, r->ident, r->filter, EV_DELETE, 0, 0, NULL);

    CHECK(err == 0 || (!KQ_LAYER && err == ENOENT)); /* ENOENT: macOS's EV_ONESHOT took it */
}

static void timer_arm_oneshot(struct race *r)
{
    race__arm_change(r, EV_ADD | EV_ONESHOT, 0, 0); /* 0 ms: at once */
}

/* Every 1 ms, counting on while disabled: due by each EV_ENABLE, or soon. */
static void timer_setup_dispatch(struct race *r)
{
    race__change(r, EV_ADD | EV_DISPATCH | EV_DISABLE, 0, 1);
}

/* EVFILT_SIGNAL: SIGUSR1, ignored (BSD still records it) and blocked in
 * every thread (the waiters inherit main's mask), so that the layer's
 * signalfd is the only one to take it. */
static sigset_t race_sigusr1_mask;

static void signal_block(struct race *r)
{
    sigset_t set;

    r->ident = SIGUSR1;
    signal(SIGUSR1, SIG_IGN);
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, &race_sigusr1_mask);
}

static void signal_restore(void)
{
    pthread_sigmask(SIG_SETMASK, &race_sigusr1_mask, NULL);
    signal(SIGUSR1, SIG_DFL);
}

static void signal_setup_clear(struct race *r)
{
    signal_block(r);
    race__change(r, EV_ADD, 0, 0);
}

static void signal_send(void)
{
    if (kill(getpid(), SIGUSR1) < 0)
        die("kill(SIGUSR1)");
}

static void signal_arm(struct race *r)
{
    (void)r;
    signal_send();
}

static void signal_arm_oneshot(struct race *r)
{
    race__change(r, EV_ADD | EV_ONESHOT, 0, 0);
    signal_send();
}

static void signal_setup_dispatch(struct race *r)
{
    signal_block(r);
    race__change(r, EV_ADD | EV_DISPATCH | EV_DISABLE, 0, 0);
}

/* Sent while the knote is disabled (BSD records it, the layer's signalfd
 * holds it), then let through by EV_ENABLE. */
static void signal_arm_dispatch(struct race *r)
{
    signal_send();
    arm_enable(r);
}

static void signal_teardown_delete(struct race *r)
{
    teardown_delete(r);
    signal_restore();
}

static void signal_teardown(struct race *r)
{
    (void)r;
    signal_restore();
}

static const struct race_case race_cases[] = {
    {"EVFILT_USER, EV_CLEAR, NOTE_TRIGGER", EVFILT_USER, user_setup_clear, user_arm_trigger, NULL,
     teardown_delete},
    {"EVFILT_USER, EV_ONESHOT", EVFILT_USER, nothing, user_arm_oneshot, NULL, nothing},
    {"EVFILT_USER, EV_DISPATCH, triggered for good", EVFILT_USER, user_setup_dispatch, arm_enable,
     NULL, teardown_delete},
    {"EVFILT_READ, EV_CLEAR, a byte written", EVFILT_READ, read_setup_clear, pipe_put_byte,
     pipe_drain, read_teardown},
    {"EVFILT_READ, EV_ONESHOT, a byte left in the pipe", EVFILT_READ, read_setup_oneshot,
     fd_arm_oneshot, NULL, pipe_close},
    {"EVFILT_READ, EV_DISPATCH, a byte left in the pipe", EVFILT_READ, read_setup_dispatch,
     arm_enable, NULL, read_teardown},
    {"EVFILT_WRITE, EV_CLEAR, a full pipe emptied", EVFILT_WRITE, write_setup_full, write_arm_clear,
     write_reset_clear, pipe_close},
    {"EVFILT_WRITE, EV_ONESHOT, an empty pipe", EVFILT_WRITE, pipe_open, fd_arm_oneshot, NULL,
     pipe_close},
    {"EVFILT_WRITE, EV_DISPATCH, an empty pipe", EVFILT_WRITE, write_setup_dispatch, arm_enable,
     NULL, write_teardown},
    {"EVFILT_TIMER, EV_CLEAR, NOTE_ABSTIME past", EVFILT_TIMER, nothing, timer_arm_abstime,
     timer_reset_abstime, nothing},
    {"EVFILT_TIMER, EV_ONESHOT, 0 ms", EVFILT_TIMER, nothing, timer_arm_oneshot, NULL, nothing},
    {"EVFILT_TIMER, EV_DISPATCH, every 1 ms", EVFILT_TIMER, timer_setup_dispatch, arm_enable, NULL,
     teardown_delete},
    {"EVFILT_SIGNAL (EV_CLEAR by the filter), one kill()", EVFILT_SIGNAL, signal_setup_clear,
     signal_arm, NULL, signal_teardown_delete},
    {"EVFILT_SIGNAL, EV_ONESHOT", EVFILT_SIGNAL, signal_block, signal_arm_oneshot, NULL,
     signal_teardown},
    {"EVFILT_SIGNAL, EV_DISPATCH", EVFILT_SIGNAL, signal_setup_dispatch, signal_arm_dispatch, NULL,
     signal_teardown_delete},
};

int main(int argc, char **argv)
{
    /* a case's name as the argument: only the cases whose name contains it */
    for (size_t i = 0; i < sizeof(race_cases) / sizeof(race_cases[0]); i++) {
        const struct race_case *c = &race_cases[i];
        if (argc > 1 && !strstr(c->name, argv[1]))
            continue;
        int before = check_failures;
        race_run(c);
        check_report(c->name, before);
    }
#ifdef __linux__
    printf("# waiters asleep in epoll_wait() at each arm: %s\n",
           race_asleep_known ? "yes" : "not known (/proc did not tell)");
#endif
    return check_exit();
}
