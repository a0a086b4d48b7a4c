/* SPDX-License-Identifier: MIT */
/* load-opts.h: echo-load's command line. */
#ifndef COURSE_LOAD_OPTS_H
#define COURSE_LOAD_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOAD_MAX_LEN (16u << 20)

struct load_opts {
    const char *addr;
    int port;
    unsigned conns;
    uint64_t requests; /* per connection; 0 with -d */
    double duration_s; /* -d; 0 when not given */
    size_t len;
    uint64_t vary_seed; /* --vary SEED: each connection's length drawn from 1..len */
    bool vary;
    unsigned depth;
    double timeout_s;
    bool csv, idle;
    bool eager; /* --eager: each connection starts once connected, not once all are */
};

/* Parse echo-load's arguments into `o`. Prints the usage and exits 0 on -h;
 * prints what is wrong and the usage on stderr and exits 2 on a bad argument. */
void load_opts_parse(struct load_opts *o, int argc, char **argv);

#endif
