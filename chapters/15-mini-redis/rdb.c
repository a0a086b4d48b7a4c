/* SPDX-License-Identifier: MIT */
/* rdb.c: writing the RDB file (rdb.h), on the loop (SAVE) or in a child
 * process (BGSAVE); rdb_load.c reads it back.
 *
 * The writer allocates nothing: it runs in the child of a fork() taken
 * from a process with other threads (chapter 10's pool), where only the
 * thread that forked exists and a lock another thread held stays locked.
 * It writes through one buffer on the stack, and the checksum follows each
 * flush. The names are Redis's (src/rdb.c, src/rdb.h at 7.0.15).
 */
#include "rdb.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RDB_VERSION       "0010" /* RDB_VERSION 10: Redis 7.0 */
#define QUICKLIST_PACKED  2      /* a node that is a listpack (QUICKLIST_NODE_CONTAINER_PACKED) */
#define LISTPACK_NODE_MAX 8192   /* list-max-listpack-size -2: 8 KiB per node, Redis's default */
#define LP_HDR_SIZE       6      /* total bytes (32 bits), element count (16 bits) */
#define OUT_BUF           (64 * 1024)

/* ---- CRC-64/Jones, reflected (src/crc64.c): a table built on first use ---- */

static uint64_t crc_table[256];

uint64_t rdb_crc64(uint64_t crc, const void *p, size_t len)
{
    const unsigned char *s = p;

    if (!crc_table[1]) /* entry 0 is 0 whatever the polynomial: test another */
        for (unsigned i = 0; i < 256; i++) {
            uint64_t c = i;
            for (int k = 0; k < 8; k++) /* 0x95ac...: 0xad93d23594c935a9 bit-reversed */
                c = c & 1 ? (c >> 1) ^ 0x95AC9329AC4BC9B5ULL : c >> 1;
            crc_table[i] = c;
        }
    while (len--)
        crc = crc_table[(crc ^ *s++) & 0xff] ^ (crc >> 8);
    return crc;
}

/* ---- the output: a buffer, its checksum, the first error ---------------------- */

struct out {
    int fd;
    int err; /* errno of the first failed write; 0: none */
    uint64_t crc;
    size_t used;
    unsigned char buf[OUT_BUF];
};

static void out__flush(struct out *o)
{
    size_t done = 0;

    o->crc = rdb_crc64(o->crc, o->buf, o->used);
    while (!o->err && done < o->used) {
        ssize_t n = write(o->fd, o->buf + done, o->used - done);
        if (n < 0 && errno != EINTR)
            o->err = errno;
        else if (n > 0)
            done += (size_t)n;
    }
    o->used = 0;
}

static void out__bytes(struct out *o, const void *p, size_t len)
{
    const unsigned char *s = p;

    while (len > 0) {
        size_t n = len < OUT_BUF - o->used ? len : OUT_BUF - o->used;
        memcpy(o->buf + o->used, s, n);
        o->used += n;
        s += n;
        len -= n;
        if (o->used == OUT_BUF)
            out__flush(o);
    }
}

static void out__byte(struct out *o, unsigned char b)
{
    out__bytes(o, &b, 1);
}

/* n bytes of v, least significant first (listpack headers, the expire time). */
static void out__le(struct out *o, uint64_t v, int n)
{
    unsigned char b[8];

    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    out__bytes(o, b, (size_t)n);
}

/* rdbSaveLen: 00|6 bits, 01|14 bits, 0x80 + 32 bits, 0x81 + 64 bits (big-endian). */
static void out__len(struct out *o, uint64_t len)
{
    unsigned char b[9];
    size_t n;

    if (len < 64) {
        b[0] = (unsigned char)len;
        n = 1;
    } else if (len < 16384) {
        b[0] = (unsigned char)(0x40 | (len >> 8));
        b[1] = (unsigned char)len;
        n = 2;
    } else {
        n = len <= UINT32_MAX ? 5 : 9;
        b[0] = n == 5 ? 0x80 : 0x81;
        for (size_t i = 1; i < n; i++)
            b[i] = (unsigned char)(len >> (8 * (n - 1 - i)));
    }
    out__bytes(o, b, n);
}

static void out__string(struct out *o, const char *s, size_t len)
{
    out__len(o, len);
    out__bytes(o, s, len);
}

static void out__aux(struct out *o, const char *name, const char *value)
{
    out__byte(o, RDB_OPCODE_AUX);
    out__string(o, name, strlen(name));
    out__string(o, value, strlen(value));
}

/* ---- lists: a quicklist of listpacks (src/listpack.c) -------------------------- */

/* A string entry: its encoding byte(s), the bytes, then "backlen", the size
 * of the first two in 7 bits a byte, read from the end (lpEncodeBacklen). */
static size_t lp__entry_size(size_t len)
{
    size_t enc = len < 64 ? 1 : len < 4096 ? 2 : 5, l = enc + len;

    return l + (l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5);
}

static void lp__entry(struct out *o, const struct deque_item *it)
{
    size_t len = it->len, l;
    unsigned char back[5];
    int nb = 0;

    if (len < 64) { /* 10xxxxxx */
        out__byte(o, (unsigned char)(0x80 | len));
        l = 1 + len;
    } else if (len < 4096) { /* 1110xxxx xxxxxxxx */
        out__byte(o, (unsigned char)(0xE0 | (len >> 8)));
        out__byte(o, (unsigned char)len);
        l = 2 + len;
    } else { /* 0xF0, then 32 bits */
        out__byte(o, 0xF0);
        out__le(o, len, 4);
        l = 5 + len;
    }
    out__bytes(o, it->data, len);
    /* backlen: the high group first, every byte but the first flagged 128 */
    for (int shift = (l <= 127        ? 0
                      : l < 16383     ? 7
                      : l < 2097151   ? 14
                      : l < 268435455 ? 21
                                      : 28);
         shift >= 0; shift -= 7, nb++)
        back[nb] = (unsigned char)(((l >> shift) & 127) | (nb ? 128 : 0));
    out__bytes(o, back, (size_t)nb);
}

/* The elements [from, to) that make one node, as quicklist fills them: up
 * to 8 KiB, and at least one element however large. Returns `to`. */
static size_t lp__node_end(const struct deque *d, size_t from, size_t *bytes)
{
    size_t to = from, size = LP_HDR_SIZE + 1;

    while (to < d->len) {
        size_t e = lp__entry_size(deque_at(d, to)->len);
        if (to > from && size + e > LISTPACK_NODE_MAX)
            break;
        size += e;
        to++;
    }
    *bytes = size;
    return to;
}

static void out__list(struct out *o, const struct deque *d)
{
    size_t nodes = 0, bytes;

    for (size_t i = 0; i < d->len; i = lp__node_end(d, i, &bytes))
        nodes++;
    out__len(o, nodes);
    for (size_t i = 0, end; i < d->len; i = end) {
        end = lp__node_end(d, i, &bytes);
        out__len(o, QUICKLIST_PACKED);
        out__len(o, bytes); /* the listpack, as one string */
        out__le(o, bytes, 4);
        out__le(o, end - i, 2); /* at most ~4,000 elements of 2 bytes fit in 8 KiB */
        for (size_t j = i; j < end; j++)
            lp__entry(o, deque_at(d, j));
        out__byte(o, 0xFF);
    }
}

/* ---- the file ------------------------------------------------------------------- */

struct save_walk {
    struct out *o;
    int64_t now;
};

/* One key (rdbSaveKeyValuePair); one already expired is left out. */
static void save__key(struct db_entry *e, void *arg)
{
    struct save_walk *w = arg;

    if (db_expired(e, w->now))
        return;
    if (e->expire_ms >= 0) {
        out__byte(w->o, RDB_OPCODE_EXPIRETIME_MS);
        out__le(w->o, (uint64_t)e->expire_ms, 8);
    }
    out__byte(w->o, e->val.type == DB_STRING ? RDB_TYPE_STRING : RDB_TYPE_QUICKLIST_2);
    out__string(w->o, e->key, e->klen);
    if (e->val.type == DB_STRING)
        out__string(w->o, e->val.str, e->val.len);
    else
        out__list(w->o, &e->val.list);
}

static void save__body(struct out *o, struct db *db, int64_t now)
{
    char num[24];
    struct save_walk w = {o, now};
    unsigned char crc[8];

    out__bytes(o, "REDIS" RDB_VERSION, 9);
    /* The aux fields of rdbSaveInfoAuxFields, but for used-mem: mini-redis
     * does not count its memory. The version is that of the format. */
    out__aux(o, "redis-ver", "7.0.15");
    snprintf(num, sizeof(num), "%zu", sizeof(void *) * 8);
    out__aux(o, "redis-bits", num);
    snprintf(num, sizeof(num), "%lld", (long long)(now / 1000));
    out__aux(o, "ctime", num);
    out__aux(o, "aof-base", "0");
    out__byte(o, RDB_OPCODE_SELECTDB);
    out__len(o, 0);
    out__byte(o, RDB_OPCODE_RESIZEDB); /* sizes to make the tables at: a hint */
    out__len(o, db->count);
    out__len(o, db->nttl);
    db_foreach(db, save__key, &w);
    out__byte(o, RDB_OPCODE_EOF);
    out__flush(o); /* the checksum covers everything up to here */
    for (int i = 0; i < 8; i++)
        crc[i] = (unsigned char)(o->crc >> (8 * i));
    out__bytes(o, crc, 8);
    out__flush(o);
}

static int save__fail(char *why, size_t whylen, const char *what, const char *path, int err)
{
    snprintf(why, whylen, "%s(%s): %s", what, path, strerror(err));
    return -1;
}

/* fsyncFileDir (src/config.c): the rename itself reaches the disk. */
static int save__sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

    if (fd < 0)
        return -errno;
    err = fsync(fd) < 0 ? -errno : 0;
    close(fd);
    return err;
}

static long save_pause_ms; /* rdb_set_save_pause(): 0 but in the tests */

void rdb_set_save_pause(long ms)
{
    save_pause_ms = ms;
}

int rdb_save(struct db *db, const char *dir, const char *name, int64_t now_ms, char *why,
             size_t whylen)
{
    char tmp[PATH_MAX], path[PATH_MAX];
    struct out o = {.fd = -1};
    int err;

    if (snprintf(tmp, sizeof(tmp), "%s/temp-%d.rdb", dir, (int)getpid()) >= (int)sizeof(tmp) ||
        snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return save__fail(why, whylen, "snprintf", dir, ENAMETOOLONG);
    if ((o.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        return save__fail(why, whylen, "open", tmp, errno);
    save__body(&o, db, now_ms);
    if (o.err) {
        save__fail(why, whylen, "write", tmp, o.err);
        goto close;
    }
    if (fsync(o.fd) < 0) { /* as rdbSave: the data is on disk before the name moves */
        save__fail(why, whylen, "fsync", tmp, errno);
        goto close;
    }
    err = close(o.fd) < 0 ? errno : 0;
    if (err) {
        save__fail(why, whylen, "close", tmp, err);
        goto unlink;
    }
    if (save_pause_ms > 0) {
        struct timespec t = {save_pause_ms / 1000, save_pause_ms % 1000 * 1000000L};
        while (nanosleep(&t, &t) < 0 && errno == EINTR)
            ;
    }
    if (rename(tmp, path) < 0) {
        save__fail(why, whylen, "rename", path, errno);
        goto unlink;
    }
    if ((err = save__sync_dir(dir)) < 0)
        return save__fail(why, whylen, "fsync", dir, -err); /* the file is in place */
    return 0;
close:
    close(o.fd);
unlink:
    unlink(tmp);
    return -1;
}

/* ---- BGSAVE's child --------------------------------------------------------------- */

pid_t rdb_save_child(struct db *db, const char *dir, const char *name)
{
    int64_t now = db_now_ms();
    char why[PATH_MAX + 64];
    sigset_t none;
    pid_t pid = fork();

    if (pid != 0)
        return pid < 0 ? -errno : pid;
    /* The child. Its copy of every fd goes first: the io_uring ring (which
     * it must never submit to), the listener, the clients' sockets (a
     * client the parent closes would otherwise stay open until the child
     * exits), the signalfd. Then SIGINT and SIGTERM, which the parent
     * blocks for its signalfd, may end it as they end any process. */
    if (close_range(3, ~0U, 0) < 0) {
        fprintf(stderr, "mini-redis: close_range: %s\n", strerror(errno));
        _exit(1);
    }
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (rdb_save(db, dir, name, now, why, sizeof(why)) < 0) {
        fprintf(stderr, "mini-redis: background save: %s\n", why);
        _exit(1);
    }
    _exit(0); /* not exit(): the parent's stdio buffers and atexit handlers are not ours */
}

int rdb_reap_child(pid_t pid, const char *dir, bool stop)
{
    char tmp[PATH_MAX];
    int status;
    pid_t r;

    if (stop && kill(pid, SIGKILL) < 0 && errno != ESRCH)
        fprintf(stderr, "mini-redis: kill(%d): %s\n", (int)pid, strerror(errno));
    while ((r = waitpid(pid, &status, stop ? 0 : WNOHANG)) < 0 && errno == EINTR)
        ;
    if (r == 0)
        return 0;
    if (r < 0) { /* ECHILD: nobody else reaps it, so it cannot happen; say so if it does */
        fprintf(stderr, "mini-redis: waitpid(%d): %s\n", (int)pid, strerror(errno));
        return -1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 1;
    /* A child that died left its temp file (rdbRemoveTempFile). */
    if (snprintf(tmp, sizeof(tmp), "%s/temp-%d.rdb", dir, (int)pid) < (int)sizeof(tmp) &&
        unlink(tmp) < 0 && errno != ENOENT)
        fprintf(stderr, "mini-redis: unlink(%s): %s\n", tmp, strerror(errno));
    if (!stop)
        fprintf(stderr, "mini-redis: background saving %s %d\n",
                WIFSIGNALED(status) ? "terminated by signal" : "failed with status",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    return -1;
}
