/* SPDX-License-Identifier: MIT */
/* clock.h: the course's one clock, for timeouts, deadlines and
 * measurements.
 *
 * It counts from an arbitrary moment (boot, on Linux) and only moves
 * forward: a difference of two readings is an elapsed time, and a deadline
 * is a reading plus a delay. The wall clock (CLOCK_REALTIME, time()) is the
 * wrong tool for both, because it jumps when it is set.
 *
 *   clock_now_ns()   nanoseconds, as int64_t (292 years before it wraps)
 *   clock_now_us()   microseconds
 *   clock_now_ms()   milliseconds: what poll(), epoll_wait() and timers take
 *   clock_now_s()    seconds, as a double, for printing
 *
 * Header-only (static inline), so a program, a library and the mingw-w64
 * builds of chapters 09 and 11 use it with nothing to link.
 */
#ifndef COURSE_CLOCK_H
#define COURSE_CLOCK_H

#include <stdint.h>

#ifdef _WIN32
/* winsock2.h before windows.h, as everywhere in the course: windows.h alone
 * brings the old winsock.h, which clashes with winsock2.h included later. */
#include <winsock2.h>

#include <windows.h>

/* The performance counter: GetTickCount64() moves in 10-16 ms steps, too
 * coarse for a timer of a few milliseconds. Its frequency is fixed at boot. */
static inline int64_t clock_now_ns(void)
{
    LARGE_INTEGER freq, now;

    QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&now);
    /* Whole seconds, then the remainder: ticks * 1e9 alone would overflow
     * after a few weeks of uptime at a 10 MHz counter. */
    return now.QuadPart / freq.QuadPart * 1000000000 +
           now.QuadPart % freq.QuadPart * 1000000000 / freq.QuadPart;
}
#else
#include <time.h>

/* snippet: clock */
static inline int64_t clock_now_ns(void)
{
    struct timespec ts;

    /* CLOCK_MONOTONIC never jumps when the wall clock is set (NTP, the user);
     * CLOCK_REALTIME does. On Linux this call is served by the vDSO: code the
     * kernel maps into every process, so no kernel entry happens. */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
/* end snippet */
#endif

static inline int64_t clock_now_us(void)
{
    return clock_now_ns() / 1000;
}

static inline int64_t clock_now_ms(void)
{
    return clock_now_ns() / 1000000;
}

static inline double clock_now_s(void)
{
    return (double)clock_now_ns() / 1e9;
}

#endif
