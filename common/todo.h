/* SPDX-License-Identifier: MIT */
/* todo.h: TODO("task") marks the part of an exercise the learner writes.
 *
 * `make exercises` turns every EXERCISE BEGIN/END block of a solution into a
 * TODO("task") call. Reaching it prints "TODO at file:line: task" on stderr
 * and exits with status 99, so an unfinished exercise fails its tests loudly
 * and for the right reason, never by crashing or hanging.
 *
 * When COURSE_TODO_LOG names a file, the same line is appended to it: the
 * course's own tests use that to prove an untouched exercise stopped at TODO.
 */
#ifndef COURSE_TODO_H
#define COURSE_TODO_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TODO_EXIT_STATUS 99

__attribute__((unused)) _Noreturn static void todo__reached(const char *file, int line,
                                                            const char *task)
{
    char msg[512];
    const char *log = getenv("COURSE_TODO_LOG");
    int len = snprintf(msg, sizeof(msg), "TODO at %s:%d: %s\n", file, line, task);

    if (len < 0)
        len = 0;
    if ((size_t)len >= sizeof(msg))
        len = (int)sizeof(msg) - 1;
    /* write(2), not stdio: this may run on any thread of a server that other
     * threads are still using, and _exit() below skips stdio flushing. */
    if (write(STDERR_FILENO, msg, (size_t)len) < 0) {
        /* nothing more useful to do */
    }
    if (log && *log) {
        int fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644);
        if (fd >= 0) {
            if (write(fd, msg, (size_t)len) < 0) {
                /* the exit status still tells */
            }
            close(fd);
        }
    }
    _exit(TODO_EXIT_STATUS);
}

#define TODO(task) todo__reached(__FILE__, __LINE__, task)

#endif
