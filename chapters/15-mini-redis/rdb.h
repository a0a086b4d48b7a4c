/* SPDX-License-Identifier: MIT */
/* rdb.h: the key space on disk, in Redis's RDB format (version 10, what
 * Redis 7.0 writes), and the child process that writes it off the loop.
 *
 *     "REDIS0010"                                  magic and version
 *     FA redis-ver 7.0.15, FA redis-bits 64 ...    aux fields: name, value
 *     FE 00  FB <keys> <keys with a TTL>           SELECTDB 0, RESIZEDB
 *     [FC <ms, 8 bytes LE>] <type> <key> <value>   each key
 *     FF <crc64, 8 bytes LE>                       EOF, checksum of all before
 *
 * Strings are written as they are (no integer encoding, no LZF); lists as
 * a quicklist of listpacks (RDB_TYPE_LIST_QUICKLIST_2), the encoding Redis
 * 7.0 itself writes and loads. Loading reads those, plus the integer
 * encodings of strings and listpack entries and the plain list type
 * (RDB_TYPE_LIST); any other type or encoding is refused, with its name.
 */
#ifndef CH15_RDB_H
#define CH15_RDB_H

#include "db.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The opcodes and value types of the format (Redis's src/rdb.h), the
 * writer's (rdb.c) and the loader's (rdb_load.c). */
enum {
    RDB_TYPE_STRING = 0,
    RDB_TYPE_LIST = 1,
    RDB_TYPE_QUICKLIST_2 = 18,
    RDB_OPCODE_FUNCTION2 = 245,
    RDB_OPCODE_MODULE_AUX = 247,
    RDB_OPCODE_IDLE = 248,
    RDB_OPCODE_FREQ = 249,
    RDB_OPCODE_AUX = 250,
    RDB_OPCODE_RESIZEDB = 251,
    RDB_OPCODE_EXPIRETIME_MS = 252,
    RDB_OPCODE_EXPIRETIME = 253,
    RDB_OPCODE_SELECTDB = 254,
    RDB_OPCODE_EOF = 255,
};

/* Write every key of db not expired at now_ms to DIR/temp-<pid>.rdb, fsync
 * it, rename it to DIR/NAME and fsync DIR, as Redis's rdbSave does. 0, or
 * -1 with the reason in why (the temp file removed). */
int rdb_save(struct db *db, const char *dir, const char *name, int64_t now_ms, char *why,
             size_t whylen);

/* For the tests: every save (SAVE on the loop, BGSAVE's child) waits ms
 * more before its rename, its temp file written, so that a test sees the
 * loop during a save of a known length instead of racing a fast disk.
 * 0, the default, in normal use (mini-redis reads MINI_REDIS_SAVE_PAUSE_MS). */
void rdb_set_save_pause(long ms);

/* Load DIR/NAME into db (empty), dropping the keys expired at now_ms. 0;
 * 1 if there is no such file (an empty key space, as for redis-server);
 * -1 with the reason in why, for a file that is unreadable, truncated,
 * corrupt, or holds what mini-redis has no type for. */
int rdb_load(struct db *db, const char *dir, const char *name, int64_t now_ms, char *why,
             size_t whylen);

/* BGSAVE: fork a child that runs rdb_save() on its copy-on-write view of
 * db and exits 0 (saved) or 1. Returns the child's pid, or -errno. */
pid_t rdb_save_child(struct db *db, const char *dir, const char *name);

/* Whether the child is done, without blocking (or, with stop, after killing
 * it and waiting for it): 0 running; 1 saved; -1 failed or killed, its
 * temp file removed. */
int rdb_reap_child(pid_t pid, const char *dir, bool stop);

/* Redis's CRC-64 (Jones polynomial, reflected; src/crc64.c), continued
 * from crc over p[0..len). */
uint64_t rdb_crc64(uint64_t crc, const void *p, size_t len);

#endif
