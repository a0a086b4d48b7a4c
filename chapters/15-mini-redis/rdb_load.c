/* SPDX-License-Identifier: MIT */
/* rdb_load.c: reading an RDB file into the key space at start (rdb.h).
 *
 * The whole file is read into memory first and walked with a cursor that
 * checks every length against what is left, so that a truncated or
 * corrupt file is an error with its offset, never a read past the end.
 * What it reads is rdbLoadRio's subset (src/rdb.c at 7.0.15) for strings
 * and lists; the checksum is checked at the end, as Redis does, unless the
 * file carries 0 (written with rdbchecksum no).
 */
#include "rdb.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct in {
    const unsigned char *base, *p, *end;
    char *why; /* the first error */
    size_t whylen;
    bool failed;
    char num[24]; /* an integer-encoded string, written out */
};

static bool in__fail(struct in *in, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (in->failed)
        return false;
    in->failed = true;
    n = snprintf(in->why, in->whylen, "at byte %td: ", in->p - in->base);
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < in->whylen)
        vsnprintf(in->why + n, in->whylen - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

static bool in__take(struct in *in, size_t n, const unsigned char **out)
{
    *out = in->p;
    if ((size_t)(in->end - in->p) < n)
        return in__fail(in, "the file ends early (%zu bytes needed, %td left)", n, in->end - in->p);
    in->p += n;
    return true;
}

static bool in__byte(struct in *in, unsigned *b)
{
    const unsigned char *p;

    if (!in__take(in, 1, &p))
        return false;
    *b = *p;
    return true;
}

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;

    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* rdbLoadLenByRef: a length, or (*enc set) the kind of a special string. */
static bool in__len(struct in *in, uint64_t *len, int *enc)
{
    const unsigned char *p;
    unsigned b;

    *enc = -1;
    if (!in__byte(in, &b))
        return false;
    switch (b >> 6) {
    case 0:
        *len = b & 0x3f;
        return true;
    case 1:
        if (!in__take(in, 1, &p))
            return false;
        *len = (uint64_t)(b & 0x3f) << 8 | p[0];
        return true;
    case 3:
        *enc = (int)(b & 0x3f);
        return true;
    }
    if (b != 0x80 && b != 0x81)
        return in__fail(in, "unknown length encoding 0x%02x", b);
    if (!in__take(in, b == 0x80 ? 4 : 8, &p))
        return false;
    *len = 0;
    for (int i = 0; i < (b == 0x80 ? 4 : 8); i++)
        *len = *len << 8 | p[i];
    return true;
}

static bool in__plain_len(struct in *in, uint64_t *len)
{
    int enc;

    if (!in__len(in, len, &enc))
        return false;
    return enc < 0 || in__fail(in, "a length was expected, not an encoded string");
}

/* rdbGenericLoadStringObject: plain, or an integer of 8, 16 or 32 bits
 * (written out as decimal, into in->num). LZF is refused. */
static bool in__string(struct in *in, const char **s, size_t *len)
{
    const unsigned char *p;
    uint64_t n;
    int enc;

    if (!in__len(in, &n, &enc))
        return false;
    if (enc < 0) {
        if (!in__take(in, n, &p))
            return false;
        *s = (const char *)p;
        *len = n;
        return true;
    }
    if (enc > 2)
        return in__fail(in,
                        enc == 3 ? "an LZF-compressed string (save it with rdbcompression no)"
                                 : "unknown string encoding %d",
                        enc);
    if (!in__take(in, 1u << enc, &p))
        return false;
    n = le(p, 1 << enc);
    *len = (size_t)snprintf(in->num, sizeof(in->num), "%lld",
                            enc == 0   ? (long long)(int8_t)n
                            : enc == 1 ? (long long)(int16_t)n
                                       : (long long)(int32_t)n);
    *s = in->num;
    return true;
}

/* One listpack entry pushed on the list (lpGet): a string, or an integer
 * of 7, 13, 16, 24, 32 or 64 bits, written out. Then its backlen. */
static bool lp__entry(struct in *lp, struct deque *d)
{
    const unsigned char *p = lp->p, *data;
    size_t len, head;
    long long v = 0;
    unsigned b = p[0];

    if (b < 0x80) {
        v = b, head = 1, len = 0;
    } else if ((b & 0xC0) == 0x80) {
        head = 1, len = b & 0x3f;
    } else if ((b & 0xE0) == 0xC0) {
        head = 2, len = 0;
    } else if ((b & 0xF0) == 0xE0) {
        head = 2, len = 0;
    } else if (b == 0xF0) {
        head = 5, len = 0;
    } else if (b >= 0xF1 && b <= 0xF4) {
        head = b == 0xF1 ? 3 : b == 0xF2 ? 4 : b == 0xF3 ? 5 : 9, len = 0;
    } else {
        return in__fail(lp, "unknown listpack encoding 0x%02x", b);
    }
    if (!in__take(lp, head, &p))
        return false;
    if ((b & 0xE0) == 0xC0) { /* 13 bits, signed */
        v = (long long)((b & 0x1f) << 8 | p[1]);
        v = v >= 4096 ? v - 8192 : v;
    } else if ((b & 0xF0) == 0xE0) {
        len = (size_t)(b & 0x0f) << 8 | p[1];
    } else if (b == 0xF0) {
        len = (size_t)le(p + 1, 4);
    } else if (b >= 0xF1 && b <= 0xF4) { /* sign-extend from head - 1 bytes */
        int bits = (int)(head - 1) * 8;
        uint64_t u = le(p + 1, (int)head - 1);
        v = bits == 64 || !(u >> (bits - 1)) ? (long long)u : (long long)(u - (1ULL << bits));
    }
    if (!in__take(lp, len, &data))
        return false;
    if (b >= 0x80 && ((b & 0xC0) == 0x80 || (b & 0xF0) == 0xE0 || b == 0xF0)) {
        deque_push(d, DEQUE_TAIL, deque_item_new((const char *)data, len));
    } else {
        char num[24];
        int n = snprintf(num, sizeof(num), "%lld", v);
        deque_push(d, DEQUE_TAIL, deque_item_new(num, (size_t)n));
    }
    len += head;
    return in__take(lp,
                    len <= 127        ? 1
                    : len < 16383     ? 2
                    : len < 2097151   ? 3
                    : len < 268435455 ? 4
                                      : 5,
                    &data);
}

/* A listpack: its header says its size and count; entries up to 0xFF. */
static bool in__listpack(struct in *in, const char *s, size_t len, struct deque *d)
{
    const unsigned char *p = (const unsigned char *)s;
    struct in lp = {
        .base = in->base, .p = p + 6, .end = p + len, .why = in->why, .whylen = in->whylen};

    if (len < 7 || le(p, 4) != len || p[len - 1] != 0xFF)
        return in__fail(in, "a listpack whose header does not match its %zu bytes", len);
    lp.end--; /* the 0xFF */
    while (lp.p < lp.end)
        if (!lp__entry(&lp, d))
            break;
    in->failed = lp.failed;
    return !lp.failed;
}

static bool in__list(struct in *in, int type, struct deque *d)
{
    uint64_t n, container = 0;
    const char *s;
    size_t len;

    if (!in__plain_len(in, &n))
        return false;
    for (uint64_t i = 0; i < n; i++) {
        if (type == RDB_TYPE_QUICKLIST_2 && !in__plain_len(in, &container))
            return false;
        if (!in__string(in, &s, &len))
            return false;
        if (type == RDB_TYPE_LIST || container == 1) /* an element (PLAIN node) */
            deque_push(d, DEQUE_TAIL, deque_item_new(s, len));
        else if (container != 2)
            return in__fail(in, "unknown quicklist container %llu", (unsigned long long)container);
        else if (!in__listpack(in, s, len, d))
            return false;
    }
    return true;
}

/* One key: its value, then it joins the key space, unless it expired or
 * is an empty list (which Redis drops too). */
static bool in__key(struct in *in, struct db *db, unsigned type, int64_t expire, int64_t now)
{
    const char *key, *s;
    size_t klen, len;
    struct db_entry *e;
    char *k;

    if (type != RDB_TYPE_STRING && type != RDB_TYPE_LIST && type != RDB_TYPE_QUICKLIST_2)
        return in__fail(in, "a value of RDB type %u, which mini-redis does not have", type);
    if (!in__string(in, &key, &klen))
        return false;
    /* in->num may hold the key: the value may need it */
    if (!(k = malloc(klen + 1))) {
        fprintf(stderr, "mini-redis: out of memory (%zu bytes)\n", klen + 1);
        exit(1);
    }
    memcpy(k, key, klen);
    if (db_lookup(db, k, klen, now)) {
        free(k);
        return in__fail(in, "the key \"%.*s\" is there twice", (int)klen, key);
    }
    if (type == RDB_TYPE_STRING) {
        if (!in__string(in, &s, &len)) {
            free(k);
            return false;
        }
        e = db_set_string(db, k, klen, s, len, false);
    } else {
        e = db_add_list(db, k, klen);
        if (!in__list(in, (int)type, &e->val.list) || e->val.list.len == 0) {
            db_delete(db, e);
            free(k);
            return !in->failed;
        }
    }
    free(k);
    if (expire >= 0 && expire < now)
        db_delete(db, e); /* as a master does at load (rdbLoadRio: expiretime < now) */
    else if (expire >= 0)
        db_set_expire(db, e, expire);
    return true;
}

static bool in__file(struct in *in, struct db *db, int64_t now)
{
    const unsigned char *p;
    int64_t expire = -1;
    uint64_t n, m, version;
    const char *s;
    size_t len;
    unsigned op;

    if (!in__take(in, 9, &p))
        return false;
    if (memcmp(p, "REDIS", 5) != 0)
        return in__fail(in, "not an RDB file (no REDIS signature)");
    version = 0; /* four decimal digits: "0010" */
    for (int i = 5; i < 9; i++)
        version = p[i] >= '0' && p[i] <= '9' ? version * 10 + (p[i] - '0') : 1000;
    if (version < 1 || version > 10)
        return in__fail(in, "RDB version \"%.4s\": this loader knows 1 to 10", (const char *)p + 5);
    for (;;) {
        if (!in__byte(in, &op))
            return false;
        switch (op) {
        case RDB_OPCODE_EOF:
            if (version >= 5 && !in__take(in, 8, &p)) /* the checksum, from version 5 on */
                return false;
            if (version >= 5 && le(p, 8) != 0 &&
                le(p, 8) != rdb_crc64(0, in->base, (size_t)(p - in->base)))
                return in__fail(in, "wrong checksum: the file is corrupt");
            return in->p == in->end || in__fail(in, "bytes after the end");
        case RDB_OPCODE_AUX: /* a name and a value: only for information */
            if (!in__string(in, &s, &len) || !in__string(in, &s, &len))
                return false;
            break;
        case RDB_OPCODE_SELECTDB:
            if (!in__plain_len(in, &n))
                return false;
            if (n != 0)
                return in__fail(in, "database %llu: mini-redis has only database 0",
                                (unsigned long long)n);
            break;
        case RDB_OPCODE_RESIZEDB:
            if (!in__plain_len(in, &n) || !in__plain_len(in, &m))
                return false;
            break;
        case RDB_OPCODE_EXPIRETIME_MS:
        case RDB_OPCODE_EXPIRETIME:
            if (!in__take(in, op == RDB_OPCODE_EXPIRETIME ? 4 : 8, &p))
                return false;
            expire = op == RDB_OPCODE_EXPIRETIME ? (int64_t)le(p, 4) * 1000 : (int64_t)le(p, 8);
            break;
        case RDB_OPCODE_IDLE: /* LRU and LFU hints for the next key: nothing here uses them */
            if (!in__plain_len(in, &n))
                return false;
            break;
        case RDB_OPCODE_FREQ:
            if (!in__take(in, 1, &p))
                return false;
            break;
        case RDB_OPCODE_FUNCTION2:
        case RDB_OPCODE_MODULE_AUX:
            return in__fail(in, "%s, which mini-redis does not have",
                            op == RDB_OPCODE_FUNCTION2 ? "a function library" : "module data");
        default:
            if (!in__key(in, db, op, expire, now))
                return false;
            expire = -1;
        }
    }
}

int rdb_load(struct db *db, const char *dir, const char *name, int64_t now_ms, char *why,
             size_t whylen)
{
    char path[PATH_MAX], reason[256];
    unsigned char *buf = NULL;
    struct stat st;
    size_t got = 0;
    int fd, ret = -1;
    struct in in = {.why = why, .whylen = whylen};

    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
        snprintf(why, whylen, "%s/%s: %s", dir, name, strerror(ENAMETOOLONG));
        return -1;
    }
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        int err = errno;
        /* no file yet: a start from nothing; no folder: where would SAVE write? */
        if (err == ENOENT && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
            return 1;
        snprintf(why, whylen, "open(%s): %s", path, strerror(err));
        return -1;
    }
    if (fstat(fd, &st) < 0) {
        snprintf(why, whylen, "fstat(%s): %s", path, strerror(errno));
        goto out;
    }
    if (!(buf = malloc((size_t)st.st_size + 1))) {
        snprintf(why, whylen, "%s: no memory for its %lld bytes", path, (long long)st.st_size);
        goto out;
    }
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(why, whylen, "read(%s): %s", path, n < 0 ? strerror(errno) : "it shrank");
            goto out;
        }
        got += (size_t)n;
    }
    in.base = in.p = buf;
    in.end = buf + got;
    if (in__file(&in, db, now_ms))
        ret = 0;
    else { /* the reason, with the file's name in front */
        snprintf(reason, sizeof(reason), "%s", why);
        snprintf(why, whylen, "%s: %s", path, reason);
    }
out:
    free(buf);
    close(fd);
    return ret;
}
