/* SPDX-License-Identifier: MIT */
/* blocking-cat.c: copy files to standard output with blocking read() and write().
 *
 * The simplest I/O a program does: ask the kernel for bytes and wait until it
 * has them. While read() waits, this thread is asleep inside the kernel; it
 * runs again when the bytes are in the page cache (a regular file) or have
 * arrived (a pipe, a terminal). The loop below is what every read-a-file API
 * does underneath, File.ReadAllBytes included.
 *
 * Two rules the loop keeps, because the kernel is allowed to:
 *   - read() may return fewer bytes than asked. That is not EOF; only 0 is.
 *   - write() may take fewer bytes than offered. net_write_all() loops for the rest.
 * Both calls may also fail with EINTR when a signal handler runs; that is a
 * retry, not an error.
 *
 * Build and run, from the repository root:
 *     make -C chapters/01-blocking
 *     build/chapters/01-blocking/blocking-cat /etc/hostname /etc/os-release
 *     build/chapters/01-blocking/blocking-cat -      # standard input: type, then Ctrl-D
 *
 * Exit status: 0 all files copied, 1 an error (named on stderr), 2 bad arguments.
 */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CAT_BUF_SIZE (64 * 1024)

enum cat_result { CAT_OK, CAT_INPUT_FAILED, CAT_OUTPUT_FAILED };

static char cat__buf[CAT_BUF_SIZE];

static void cat__usage(FILE *to)
{
    fprintf(to, "usage: blocking-cat FILE...\n"
                "Copy each FILE to standard output with blocking read() and write().\n"
                "A FILE of - means standard input.\n"
                "  -h        show this help\n");
}

/* Copy one open file to standard output. An input error ends this file only;
 * an output error ends the program, since nothing more can be written. */
/* snippet: copy-loop */
static enum cat_result cat_copy(int in, const char *name)
{
    /* EXERCISE BEGIN cat-loop: read until 0 (EOF), retry EINTR, write every byte read */
    for (;;) {
        ssize_t n = read(in, cat__buf, sizeof(cat__buf));
        if (n == 0)
            return CAT_OK; /* end of file: the only meaning of 0 */
        if (n < 0) {
            if (errno == EINTR)
                continue; /* a signal handler ran; nothing was read */
            fprintf(stderr, "blocking-cat: read(%s): %s\n", name, strerror(errno));
            return CAT_INPUT_FAILED;
        }
        /* n may be less than we asked for: write what we got, then read again. */
        ssize_t w = net_write_all(STDOUT_FILENO, cat__buf, (size_t)n);
        if (w < 0) {
            fprintf(stderr, "blocking-cat: write(stdout): %s\n", strerror((int)-w));
            return CAT_OUTPUT_FAILED;
        }
    }
    /* EXERCISE END */
}
/* end snippet */

static enum cat_result cat_file(const char *path)
{
    enum cat_result res;
    int fd;

    if (strcmp(path, "-") == 0)
        return cat_copy(STDIN_FILENO, "stdin");
    do {
        fd = open(path, O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR); /* open() of a FIFO can wait, and be interrupted */
    if (fd < 0) {
        fprintf(stderr, "blocking-cat: open(%s): %s\n", path, strerror(errno));
        return CAT_INPUT_FAILED;
    }
    res = cat_copy(fd, path);
    close(fd);
    return res;
}

int main(int argc, char **argv)
{
    int status = 0, opt, i;

    opterr = 0; /* our own message below, in the same shape as the others */
    while ((opt = getopt(argc, argv, "h")) != -1) {
        if (opt == 'h') {
            cat__usage(stdout);
            return 0;
        }
        fprintf(stderr, "blocking-cat: unknown option -%c\n", optopt);
        cat__usage(stderr);
        return 2;
    }
    if (optind == argc) {
        fprintf(stderr, "blocking-cat: no FILE given\n");
        cat__usage(stderr);
        return 2;
    }
    /* Like cat(1): a file that cannot be read is reported and skipped. */
    for (i = optind; i < argc; i++) {
        enum cat_result res = cat_file(argv[i]);
        if (res == CAT_OUTPUT_FAILED)
            return 1;
        if (res == CAT_INPUT_FAILED)
            status = 1;
    }
    return status;
}
