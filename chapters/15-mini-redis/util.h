/* SPDX-License-Identifier: MIT */
/* util.h: the conversions and the glob matcher that mini-redis's commands
 * share, each written to give exactly the answer Redis 7.0 gives, since a
 * client sees the difference ("10 " is not an integer to Redis; 3.0 comes
 * back from INCRBYFLOAT as "3"). Their models, in redis's src/util.c at tag
 * 7.0.15: string2ll, string2ld, ld2string (LD_STR_HUMAN), stringmatchlen.
 */
#ifndef CH15_UTIL_H
#define CH15_UTIL_H

#include <stdbool.h>
#include <stddef.h>

/* The whole of s[0..len) is a decimal long long: no sign but '-', no
 * leading zero, no space, no overflow. */
bool util_str_to_ll(const char *s, size_t len, long long *out);
/* The whole of s[0..len) is a finite number strtold() reads (no leading
 * space, not NaN). */
bool util_str_to_ld(const char *s, size_t len, long double *out);
/* value as INCRBYFLOAT writes it: "%.17Lf", trailing zeros (and a lone
 * point) removed, "-0" made "0". Returns the length written to buf. */
size_t util_ld_to_str(char *buf, size_t size, long double value);
/* Does string[0..slen) match the glob pattern[0..plen)? * ? [a-z] [^ab] and
 * \ escapes, as KEYS and SCAN MATCH see them. pattern[plen] must be '\0'. */
bool util_glob_match(const char *pattern, size_t plen, const char *string, size_t slen);

#endif
