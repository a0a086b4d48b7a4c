/* SPDX-License-Identifier: MIT */
/* resp-feed.h: bytes fed to the RESP parser (resp.c) as a connection's reads
 * bring them, and what the parser found: for resp-test, which cuts its
 * cases every way there is, and resp-fuzz, which cuts what a fuzzer makes.
 */
#ifndef CH15_RESP_FEED_H
#define CH15_RESP_FEED_H

#include <stddef.h>

/* What a run of the parser found: the arguments of every request, each
 * written as its length and bytes, "|" after each request; then the error
 * ("ERROR ..."), or "INCOMPLETE" if bytes are left that make no whole
 * request. `broken` names a promise of resp.h the parser did not keep. */
struct resp_outcome {
    char *text; /* '\0'-terminated; arguments may hold '\0' bytes too */
    size_t len, cap;
    const char *broken; /* NULL, or what went wrong */
};

/* Feed in[0..len) in pieces ending at the offsets cuts[0..ncuts) (rising,
 * each below len), then the rest, into one buffer that grows as a query
 * buffer does, parsing after each piece as mini-redis does after a read. */
void resp_feed(const char *in, size_t len, const size_t *cuts, size_t ncuts,
               struct resp_outcome *o);

void resp_outcome_free(struct resp_outcome *o);

#endif
