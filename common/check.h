/* SPDX-License-Identifier: MIT */
/* check.h: the checks of the course's C test programs, written once.
 *
 * A test program prints "ok - NAME" or "not ok - NAME" on stdout for each
 * test (check_report(), or CHECK_RUN() around a test function), and for each
 * failed check, on stderr, where it is and what it expected against what it
 * got. It exits with check_exit(): 0 when every check passed, 1 otherwise; a
 * program that cannot run here at all (io_uring refused, say) says why on
 * stderr and exits CHECK_SKIP, 77, which the Bats tests turn into a skip.
 *
 *   CHECK(cond)                  cond holds
 *   CHECK_MSG(cond, fmt, ...)    the same, with a message of the caller's
 *   CHECK_EQ(expected, actual)   two integers; a negative errno below -1
 *                                (-EAGAIN, as the course's functions return
 *                                them) is also printed as text
 *   CHECK_ERR(expected, actual)  two positive errno values, printed as text
 *
 * Header-only: each test program includes it once. Each check returns
 * whether it held, so a test can stop early: if (!CHECK(p)) return;
 */
#ifndef COURSE_CHECK_H
#define COURSE_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define CHECK_SKIP 77

/* mingw-w64 checks formats as its own printf does (gnu_printf, with %zu,
 * when the build asks for its ANSI stdio) */
#ifdef __MINGW_PRINTF_FORMAT
#define CHECK__PRINTF __MINGW_PRINTF_FORMAT
#else
#define CHECK__PRINTF printf
#endif

static int check_failures;

__attribute__((unused)) static void check__errno_text(long long v, int is_errno)
{
    if (is_errno && v > 0 && v < 4096)
        fprintf(stderr, " (%s)", strerror((int)v));
    else if (v < -1 && v > -4096) /* -1 is more often "failed, see errno" */
        fprintf(stderr, " (-errno: %s)", strerror((int)-v));
}

__attribute__((unused)) static int check__eq(const char *file, int line, const char *what,
                                             long long expected, long long actual, int is_errno)
{
    if (expected == actual)
        return 1;
    fprintf(stderr, "%s:%d: %s: expected %lld", file, line, what, expected);
    check__errno_text(expected, is_errno);
    fprintf(stderr, ", got %lld", actual);
    check__errno_text(actual, is_errno);
    fprintf(stderr, "\n");
    check_failures++;
    return 0;
}

__attribute__((unused, format(CHECK__PRINTF, 4, 5))) static int
check__true(const char *file, int line, int ok, const char *fmt, ...)
{
    va_list ap;

    if (ok)
        return 1;
    fprintf(stderr, "%s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    check_failures++;
    return 0;
}

#define CHECK(cond)                                                                                \
    check__true(__FILE__, __LINE__, (cond) != 0, "expected %s, but it is false", #cond)
#define CHECK_MSG(cond, ...) check__true(__FILE__, __LINE__, (cond) != 0, __VA_ARGS__)
#define CHECK_EQ(expected, actual)                                                                 \
    check__eq(__FILE__, __LINE__, #actual, (long long)(expected), (long long)(actual), 0)
#define CHECK_ERR(expected, actual)                                                                \
    check__eq(__FILE__, __LINE__, #actual, (long long)(expected), (long long)(actual), 1)

/* One test's line: "ok" when no check failed since failures_before. */
__attribute__((unused)) static void check_report(const char *name, int failures_before)
{
    printf("%s - %s\n", check_failures == failures_before ? "ok" : "not ok", name);
    fflush(stdout);
}

/* Run one test function, then report it. */
#define CHECK_RUN(fn, name)                                                                        \
    do {                                                                                           \
        int before_ = check_failures;                                                              \
        fn();                                                                                      \
        check_report(name, before_);                                                               \
    } while (0)

__attribute__((unused)) static int check_exit(void)
{
    return check_failures ? 1 : 0;
}

#endif
