/* SPDX-License-Identifier: MIT */
/* resp-fuzz.c: a fuzz target for the RESP parser (resp.c).
 *
 * Whatever the bytes, the parser must not crash, read or write outside its
 * buffer, or leak; it must keep resp.h's promises (every argument inside
 * its request and followed by a '\0'; an error always says something); and
 * it must find the same requests, or the same error, however the stream is
 * cut: whole, in pieces at cut points drawn from the input itself, and one
 * byte at a time. That last oracle is what a parser that "resumes" must
 * hold, and what no example-based test can try on every input.
 *
 * With clang's libFuzzer (make -C chapters/15-mini-redis fuzz builds it,
 * with AddressSanitizer and UndefinedBehaviorSanitizer):
 *
 *     build/chapters/15-mini-redis/fuzz/resp-fuzz -max_len=4096 -max_total_time=60 \
 *         CORPUS_COPY chapters/15-mini-redis/corpus
 *
 * Built with the course's compiler as an ordinary program (make builds it),
 * it runs the same checks on the files named, one input each; make test
 * runs it over every file of the committed corpus (corpus/), so the inputs
 * that ever found something stay checked:
 *
 *     build/chapters/15-mini-redis/resp-fuzz chapters/15-mini-redis/corpus/multibulk
 *
 * Exit status of the ordinary build: 0, every input held; 1, one did not
 * (on stderr, which and how); 2, a file could not be read. libFuzzer aborts
 * on the first input that does not hold, and writes it to crash-*.
 */
#include "resp-feed.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUTS_MAX 8

/* The cut points of the second feed, drawn from the input with splitmix64,
 * so that the fuzzer, changing the bytes, also changes where they are cut. */
static size_t draw_cuts(const uint8_t *data, size_t size, size_t *cuts)
{
    uint64_t x = 0x9e3779b97f4a7c15ull ^ size;
    size_t n = 0;

    for (size_t i = 0; i < size && i < 64; i++)
        x = (x ^ data[i]) * 0x100000001b3ull;
    for (size_t k = 0; k < CUTS_MAX && size > 1; k++) {
        uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        size_t c;

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        c = 1 + (size_t)((z ^ (z >> 31)) % (size - 1));
        if (n == 0 || c > cuts[n - 1]) /* rising: a cut below the last is dropped */
            cuts[n++] = c;
    }
    return n;
}

/* 0 when the input holds, else what failed (and the outcomes on stderr). */
static const char *check_input(const uint8_t *data, size_t size)
{
    struct resp_outcome whole = {0}, pieces = {0}, bytes = {0};
    size_t cuts[CUTS_MAX], ncuts = draw_cuts(data, size, cuts);
    size_t *every = malloc((size ? size : 1) * sizeof(*every));
    const char *why = NULL;

    if (!every) {
        fprintf(stderr, "resp-fuzz: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i + 1 < size; i++)
        every[i] = i + 1;
    resp_feed((const char *)data, size, NULL, 0, &whole);
    resp_feed((const char *)data, size, cuts, ncuts, &pieces);
    resp_feed((const char *)data, size, every, size ? size - 1 : 0, &bytes);
    if (whole.broken || pieces.broken || bytes.broken)
        why = whole.broken ? whole.broken : pieces.broken ? pieces.broken : bytes.broken;
    else if (whole.len != pieces.len || memcmp(whole.text, pieces.text, whole.len) != 0)
        why = "cut in pieces, the stream parses otherwise than whole";
    else if (whole.len != bytes.len || memcmp(whole.text, bytes.text, whole.len) != 0)
        why = "byte by byte, the stream parses otherwise than whole";
    if (why)
        fprintf(stderr, "resp-fuzz: %s\n  whole:  %.300s\n  pieces: %.300s\n  bytes:  %.300s\n",
                why, whole.text, pieces.text, bytes.text);
    resp_outcome_free(&whole);
    resp_outcome_free(&pieces);
    resp_outcome_free(&bytes);
    free(every);
    return why;
}

#ifdef RESP_FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (check_input(data, size))
        abort(); /* libFuzzer saves the input as crash-* */
    return 0;
}
#else
int main(int argc, char **argv)
{
    int failed = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: resp-fuzz FILE...\n"
                        "Check the RESP parser on each file's bytes (the fuzz target's checks).\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        static uint8_t data[1 << 20];
        size_t n;

        if (!f) {
            perror(argv[i]);
            return 2;
        }
        n = fread(data, 1, sizeof(data), f);
        if (ferror(f) || !feof(f)) {
            fprintf(stderr, "resp-fuzz: %s: %s\n", argv[i],
                    ferror(f) ? "read error" : "over 1 MiB, not a corpus file");
            fclose(f);
            return 2;
        }
        fclose(f);
        if (check_input(data, n)) {
            fprintf(stderr, "resp-fuzz: %s does not hold\n", argv[i]);
            failed = 1;
        }
    }
    printf("resp-fuzz: %d input%s, %s\n", argc - 1, argc == 2 ? "" : "s",
           failed ? "FAILED" : "every one held");
    return failed;
}
#endif
