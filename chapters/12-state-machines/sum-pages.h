/* SPDX-License-Identifier: MIT */
/* sum-pages.h: what sum-pages.c (the program) and sum-pages-sm.c (the state
 * machine, the exercise) share. */
#ifndef CH12_SUM_PAGES_H
#define CH12_SUM_PAGES_H

#include "loop.h"
#include "task.h"

#include <stddef.h>

/* SumPagesAsync(baseUrl, pages, delayMs): a Task<long>, the words of pages
 * 1..pages of base_url added up (t->value). */
struct task *sum_pages_async(struct loop *l, const char *base_url, int pages, int delay_ms);

/* Words in s: runs of characters that are not spaces or newlines. */
long count_words(const char *s, size_t len);

#endif
