/* SPDX-License-Identifier: MIT */
/* util.c: numbers and patterns, exactly as Redis 7.0 reads and writes them
 * (see util.h; each function names its model in redis's src/util.c).
 */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LL_STR_MAX 21         /* LONG_STR_SIZE: "-9223372036854775808" and its NUL */
#define LD_STR_MAX (5 * 1024) /* MAX_LONG_DOUBLE_CHARS */

/* string2ll: strict, so that GET's answer and INCR's reading of the same
 * bytes always agree ("007" stays a string of three characters). */
bool util_str_to_ll(const char *s, size_t len, long long *out)
{
    unsigned long long v;
    bool negative = false;
    size_t i = 0;

    if (len == 0 || len >= LL_STR_MAX)
        return false;
    if (len == 1 && s[0] == '0') {
        *out = 0;
        return true;
    }
    if (s[0] == '-') {
        negative = true;
        if (++i == len)
            return false;
    }
    if (s[i] < '1' || s[i] > '9')
        return false;
    v = (unsigned long long)(s[i++] - '0');
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > ULLONG_MAX / 10 || v * 10 > ULLONG_MAX - d)
            return false;
        v = v * 10 + d;
    }
    if (i < len)
        return false;
    if (negative) {
        if (v > (unsigned long long)LLONG_MAX + 1)
            return false;
        *out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
    } else {
        if (v > LLONG_MAX)
            return false;
        *out = (long long)v;
    }
    return true;
}

/* string2ld */
bool util_str_to_ld(const char *s, size_t len, long double *out)
{
    char buf[LD_STR_MAX];
    long double v;
    char *end;

    if (len == 0 || len >= sizeof(buf))
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    v = strtold(buf, &end);
    if (isspace((unsigned char)buf[0]) || *end != '\0' || (size_t)(end - buf) != len ||
        (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || fpclassify(v) == FP_ZERO)) ||
        errno == EINVAL || isnan(v))
        return false;
    *out = v;
    return true;
}

/* ld2string in LD_STR_HUMAN mode: 17 digits after the point are enough for
 * a long double to give back most short decimals as they were typed. */
size_t util_ld_to_str(char *buf, size_t size, long double value)
{
    int n = snprintf(buf, size, "%.17Lf", value);
    size_t len;

    if (n < 0 || (size_t)n + 1 > size) {
        buf[0] = '\0';
        return 0;
    }
    len = (size_t)n;
    if (strchr(buf, '.')) {
        while (buf[len - 1] == '0')
            len--;
        if (buf[len - 1] == '.')
            len--;
    }
    if (len == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        len = 1;
    }
    buf[len] = '\0';
    return len;
}

/* stringmatchlen, with its guard against exponential backtracking: once the
 * rest of the pattern after a '*' matched nowhere in the rest of the
 * string, an earlier '*' cannot help either (*skip). */
static bool util__glob(const char *p, size_t plen, const char *s, size_t slen, bool *skip)
{
    while (plen && slen) {
        switch (p[0]) {
        case '*':
            while (plen && p[1] == '*') {
                p++;
                plen--;
            }
            if (plen == 1)
                return true;
            while (slen) {
                if (util__glob(p + 1, plen - 1, s, slen, skip))
                    return true;
                if (*skip)
                    return false;
                s++;
                slen--;
            }
            *skip = true;
            return false;
        case '?':
            s++;
            slen--;
            break;
        case '[': {
            bool not, match = false;

            p++;
            plen--;
            not = p[0] == '^';
            if (not ) {
                p++;
                plen--;
            }
            for (;;) {
                if (p[0] == '\\' && plen >= 2) {
                    p++;
                    plen--;
                    if (p[0] == s[0])
                        match = true;
                } else if (p[0] == ']') {
                    break;
                } else if (plen == 0) { /* no ']': the '[' runs to the end */
                    p--;
                    plen++;
                    break;
                } else if (plen >= 3 && p[1] == '-') {
                    int start = p[0], end = p[2], c = s[0];
                    if (start > end) {
                        int t = start;
                        start = end;
                        end = t;
                    }
                    p += 2;
                    plen -= 2;
                    if (c >= start && c <= end)
                        match = true;
                } else if (p[0] == s[0]) {
                    match = true;
                }
                p++;
                plen--;
            }
            if (not )
                match = !match;
            if (!match)
                return false;
            s++;
            slen--;
            break;
        }
        case '\\':
            if (plen >= 2) {
                p++;
                plen--;
            }
            /* fall through */
        default:
            if (p[0] != s[0])
                return false;
            s++;
            slen--;
            break;
        }
        p++;
        plen--;
        if (slen == 0) {
            while (*p == '*') {
                p++;
                plen--;
            }
            break;
        }
    }
    return plen == 0 && slen == 0;
}

bool util_glob_match(const char *pattern, size_t plen, const char *string, size_t slen)
{
    bool skip = false;

    return util__glob(pattern, plen, string, slen, &skip);
}
