/* SPDX-License-Identifier: MIT */
/* disk.c: a read from the page cache vs a read from the device.
 *
 * The kernel keeps recently used file data in RAM (the page cache), so most
 * reads never reach the disk: read() copies from memory. To time a real
 * device read we must get around that cache, in one of two ways:
 *
 *   O_DIRECT          the read goes straight to the device into our buffer.
 *                     The buffer, offset and length must be aligned (4 KiB is
 *                     safe) and the filesystem must support it: tmpfs has no
 *                     device and older kernels refuse it with EINVAL.
 *   POSIX_FADV_DONTNEED  after fsync(), asks the kernel to drop the file's
 *                     clean pages; the next read must fetch them again. We
 *                     check with mincore() that the page really left.
 *
 * On a virtual machine the "device" is a file on the host, which the host may
 * well have in its own page cache: the figure is what this machine sees.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "clock.h"
#include "latency.h"
#include "net.h"

#define DISK_BLOCK 4096

const char *disk_fs_name(const char *dir)
{
    struct statfs sf;

    if (statfs(dir, &sf) < 0)
        return "unknown";
    switch ((unsigned long)sf.f_type) {
    case 0xef53:
        return "ext4"; /* ext2/3/4 share the magic number */
    case 0x58465342:
        return "xfs";
    case 0x9123683e:
        return "btrfs";
    case 0x01021994:
        return "tmpfs";
    case 0x858458f6:
        return "ramfs";
    case 0x794c7630:
        return "overlayfs";
    case 0x2fc12fc1:
        return "zfs";
    case 0x6969:
        return "nfs";
    case 0x65735546:
        return "fuse";
    case 0xf2f52010:
        return "f2fs";
    default:
        return "other";
    }
}

/* n random block-aligned offsets inside the file, the same for every run. */
static off_t *disk__offsets(size_t n, size_t file_bytes)
{
    off_t *off = malloc(n * sizeof(*off));
    uint64_t seed = 7;

    if (!off)
        net_die(ENOMEM, "malloc(%zu offsets)", n);
    for (size_t i = 0; i < n; i++)
        off[i] = (off_t)(bench_rand_below(&seed, file_bytes / DISK_BLOCK) * DISK_BLOCK);
    return off;
}

/* Time each pread on its own: a device read is long enough (microseconds)
 * that the clock's own cost does not matter, and it lets the fadvise variant
 * drop the page outside the timed part. Returns the median, or -errno. */
static double disk__timed_reads(int fd, void *buf, const off_t *off, size_t n, int drop_first)
{
    double *t = malloc(n * sizeof(*t));
    double median;

    if (!t)
        net_die(ENOMEM, "malloc(%zu timings)", n);
    for (size_t i = 0; i < n; i++) {
        int64_t t0;
        ssize_t got;

        if (drop_first) {
            /* The whole file, not just this block: the page cache may hold
             * it in large folios, and DONTNEED only drops whole folios. */
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            t0 = clock_now_ns();
        } else {
            t0 = clock_now_ns();
        }
        while ((got = pread(fd, buf, DISK_BLOCK, off[i])) < 0 && errno == EINTR)
            ;
        t[i] = (double)(clock_now_ns() - t0);
        if (got != DISK_BLOCK) {
            int err = got < 0 ? errno : EIO;
            free(t);
            return -err;
        }
    }
    median = bench_median(t, n);
    free(t);
    return median;
}

/* Does dropping a page with POSIX_FADV_DONTNEED really evict it here? On
 * tmpfs it cannot: the page cache is the only copy of the file. */
static int disk__fadvise_evicts(int fd, size_t file_bytes)
{
    unsigned char resident = 1;
    void *map = mmap(NULL, file_bytes, PROT_READ, MAP_SHARED, fd, 0);

    if (map == MAP_FAILED)
        return 0;
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (mincore(map, DISK_BLOCK, &resident) < 0)
        resident = 1;
    munmap(map, file_bytes);
    return !(resident & 1);
}

/* snippet: uncached */
static void disk__uncached(int fd, int direct_fd, int direct_err, void *buf, const off_t *off,
                           size_t n, struct disk_cost *out)
{
    double ns = -EINVAL;

    if (direct_fd >= 0) {
        ns = disk__timed_reads(direct_fd, buf, off, n, 0);
        snprintf(out->method, sizeof(out->method), "O_DIRECT");
    }
    if (ns < 0) {
        /* O_DIRECT refused at open() or at the first read(): fall back. */
        snprintf(out->why, sizeof(out->why), "O_DIRECT refused: %s",
                 strerror(direct_fd >= 0 ? (int)-ns : direct_err));
        fsync(fd);                                  /* DONTNEED drops clean pages only */
        posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM); /* no read-ahead of neighbours */
        if (disk__fadvise_evicts(fd, out->file_bytes)) {
            ns = disk__timed_reads(fd, buf, off, n, 1);
            snprintf(out->method, sizeof(out->method), "fadvise DONTNEED");
        } else {
            size_t len = strlen(out->why);
            snprintf(out->why + len, sizeof(out->why) - len,
                     "; POSIX_FADV_DONTNEED left the page cached");
        }
    }
    out->uncached_ns = ns;
}
/* end snippet */

void disk_measure(const struct lat_cfg *cfg, struct disk_cost *out)
{
    char path[4096];
    size_t n_cached = cfg->quick ? 2000 : 20000, n_uncached = cfg->quick ? 200 : 2000;
    int fd, direct_fd, direct_err = 0;
    const char *fs = disk_fs_name(cfg->dir);
    void *buf;
    off_t *off;

    memset(out, 0, sizeof(*out));
    out->file_bytes = (cfg->quick ? 4u : 16u) << 20;
    out->read_bytes = DISK_BLOCK;
    out->uncached_ns = -1;

    snprintf(path, sizeof(path), "%s/latency-XXXXXX", cfg->dir);
    if ((fd = mkstemp(path)) < 0)
        net_die(errno, "mkstemp(%s)", path);
    /* Open the O_DIRECT descriptor now, then unlink: the file is gone from
     * the directory even if we are killed half-way. */
    direct_fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (direct_fd < 0)
        direct_err = errno;
    unlink(path);

    /* O_DIRECT wants an aligned buffer; random bytes, so that a compressing
     * filesystem cannot shrink the file. */
    if (posix_memalign(&buf, DISK_BLOCK, 1u << 20) != 0)
        net_die(ENOMEM, "posix_memalign(1 MiB)");
    for (size_t done = 0; done < out->file_bytes; done += 1u << 20) {
        uint64_t seed = done, *words = buf;
        ssize_t w;

        for (size_t i = 0; i < (1u << 20) / sizeof(*words); i++)
            words[i] = bench_rand(&seed);
        if ((w = net_write_all(fd, buf, 1u << 20)) < 0)
            net_die((int)-w, "write(%s/latency-*, 1 MiB)", cfg->dir);
    }
    if (fsync(fd) < 0)
        net_die(errno, "fsync(%s/latency-*)", cfg->dir);

    /* Writing put every page in the cache; read it all once more, like a
     * program that just read the file, so the figure is a warm one. */
    for (off_t pos = 0; pos < (off_t)out->file_bytes; pos += 1 << 20)
        if (pread(fd, buf, 1u << 20, pos) < 0)
            net_die(errno, "pread(%s/latency-*)", cfg->dir);
    off = disk__offsets(n_cached, out->file_bytes);
    out->cached_ns = disk__timed_reads(fd, buf, off, n_cached, 0);
    if (out->cached_ns < 0)
        net_die((int)-out->cached_ns, "pread(%s/latency-*)", cfg->dir);

    /* Older kernels refuse O_DIRECT on tmpfs, newer ones accept it; either
     * way the data can only come from RAM. The row says which happened. */
    if (strcmp(fs, "tmpfs") == 0 || strcmp(fs, "ramfs") == 0)
        snprintf(
            out->why, sizeof(out->why), "%s keeps files in RAM only: no device; O_DIRECT %s%s", fs,
            direct_fd >= 0 ? "accepted" : "refused: ", direct_fd >= 0 ? "" : strerror(direct_err));
    else
        disk__uncached(fd, direct_fd, direct_err, buf, off, n_uncached, out);

    free(off);
    free(buf);
    if (direct_fd >= 0)
        close(direct_fd);
    close(fd);
}
