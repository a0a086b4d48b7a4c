/* SPDX-License-Identifier: MIT */
/* cond-check.c: a hand-off between two threads through a condition variable,
 * waited for with `while` (right) or `if` (wrong), to show what the faults
 * shim's FAULTS_SPURIOUS_WAKEUP does to each.
 *
 * A producer sets `ready` ROUNDS times, a little after the consumer has
 * started waiting for it; the consumer takes it each time. A wait that ends
 * with `ready` still false (a spurious wake-up, which POSIX allows) is only
 * harmless if the waiter tests the condition again: the `while` form does,
 * the `if` form goes on as if it had been signalled, and this program then
 * says so and exits 1. Without the shim, spurious wake-ups are rare enough
 * that the `if` form passes too: that is what the shim is for.
 *
 *     make -C common/faults
 *     build/common/faults/cond-check -m if                    # passes: luck
 *     FAULTS_SPURIOUS_WAKEUP=50 LD_PRELOAD=build/common/faults/libfaults.so \
 *         build/common/faults/cond-check -m if                # caught
 *
 * With -u the producer sets `ready` and signals without taking the mutex (a
 * data race too, kept defined here by atomics), as soon as the consumer has
 * tested `ready` and is about to wait. If the consumer is not yet asleep at
 * that moment, the signal finds nobody and the consumer sleeps for ever: a
 * lost wake-up. The moment is short, so -u mostly passes, by luck; the
 * shim's FAULTS_LATE_WAIT holds every waiter in that moment (mutex held)
 * for a while, and the first round is lost:
 *
 *     build/common/faults/cond-check -u                       # passes: luck
 *     FAULTS_LATE_WAIT=300 LD_PRELOAD=build/common/faults/libfaults.so \
 *         build/common/faults/cond-check -u                   # lost, exit 1
 *
 * Options: -m while|if (default while), -t to wait with
 * pthread_cond_timedwait() (a deadline far away) instead of
 * pthread_cond_wait(), -u (above), -n ROUNDS (default 200). Exit 0: every
 * hand-off went through; 1: the consumer went on without `ready`, or a
 * hand-off took more than 2 s (a wake-up lost); 2: bad arguments.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER; /* ready became true */
static pthread_cond_t taken_cond = PTHREAD_COND_INITIALIZER; /* ready became false */
static atomic_bool ready;  /* atomic only so that -u stays defined C */
static atomic_bool tested; /* -u: the consumer found `ready` false and is about to wait */
static bool timed, unlocked;
static long rounds = 200;

/* One wait on c, plain or timed; the deadline is far enough never to come. */
static void wait_on(pthread_cond_t *c)
{
    int err;

    if (timed) {
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 60;
        err = pthread_cond_timedwait(c, &lock, &deadline);
    } else {
        err = pthread_cond_wait(c, &lock);
    }
    if (err) {
        fprintf(stderr, "cond-check: pthread_cond_%swait: %s\n", timed ? "timed" : "",
                strerror(err));
        exit(1);
    }
}

static void *producer(void *arg)
{
    struct timespec pause = {0, 100 * 1000}; /* 0.1 ms: the consumer is waiting by then */

    (void)arg;
    for (long i = 0; i < rounds; i++) {
        nanosleep(&pause, NULL);
        if (unlocked) { /* the mistake: the condition changes behind the mutex's back */
            while (!tested)
                sched_yield();
            tested = false;
            ready = true;
            pthread_cond_signal(&ready_cond);
            pthread_mutex_lock(&lock);
        } else {
            pthread_mutex_lock(&lock);
            ready = true;
            pthread_cond_signal(&ready_cond);
        }
        while (ready) /* always a while here: only the consumer's form is on trial */
            wait_on(&taken_cond);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

/* A hand-off that takes 2 s will never come: a wake-up was lost. */
static void on_alarm(int sig)
{
    static const char msg[] = "a hand-off took more than 2 s: the consumer sleeps with `ready` "
                              "set, its wake-up lost\n";
    (void)sig;
    if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
        _exit(1);
    _exit(1);
}

int main(int argc, char **argv)
{
    bool use_if = false;
    pthread_t t;
    int opt, err;

    while ((opt = getopt(argc, argv, "m:tun:h")) != -1) {
        if (opt == 'm' && (strcmp(optarg, "if") == 0 || strcmp(optarg, "while") == 0))
            use_if = strcmp(optarg, "if") == 0;
        else if (opt == 't')
            timed = true;
        else if (opt == 'u')
            unlocked = true;
        else if (opt == 'n' && (rounds = atol(optarg)) > 0)
            continue;
        else {
            fprintf(opt == 'h' ? stdout : stderr,
                    "usage: cond-check [-m while|if] [-t] [-u] [-n ROUNDS]\n"
                    "Hand a flag from one thread to another ROUNDS times (200); exit 1 if the\n"
                    "waiter went on without it.\n");
            return opt == 'h' ? 0 : 2;
        }
    }
    signal(SIGALRM, on_alarm);
    if ((err = pthread_create(&t, NULL, producer, NULL))) {
        fprintf(stderr, "cond-check: pthread_create: %s\n", strerror(err));
        return 1;
    }
    pthread_mutex_lock(&lock);
    for (long i = 0; i < rounds; i++) {
        alarm(2);
        if (use_if) {
            if (!ready) {
                tested = true;
                wait_on(&ready_cond);
            }
        } else {
            while (!ready) {
                tested = true;
                wait_on(&ready_cond);
            }
        }
        if (!ready) {
            printf("round %ld: the wait returned, `ready` is false, and the `if` went on: "
                   "nothing to take\n",
                   i + 1);
            return 1; /* the producer may be mid-round: exit without joining it */
        }
        ready = false;
        pthread_cond_signal(&taken_cond);
    }
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);
    printf("rounds=%ld: every hand-off went through (-m %s%s%s)\n", rounds, use_if ? "if" : "while",
           timed ? ", timed" : "", unlocked ? ", -u" : "");
    return 0;
}
