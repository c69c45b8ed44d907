/* File I/O from a compute node (tests/test_fyod.py, bench/fileio.py): an
 * ordinary program using the C library's file calls.
 *   fileio basic DIR            write, read back, seek, stat, readdir, rename,
 *                               unlink, mkdir/rmdir, chdir/getcwd in DIR
 *   fileio rankfile DIR MIB     every rank writes DIR/rank.N, reads it back:
 *                               prints crc32 of both
 *   fileio big PATH MIB BLOCK [cold]
 *                               writes MIB MiB in BLOCK-byte writes, reads it
 *                               back: crc32s and times; cold: the reading
 *                               first drops this node's cached copy
 *                               (posix_fadvise DONTNEED: a Linux NFS client
 *                               would otherwise read its own page cache)
 *   fileio open PATH MODE       open (r, w, a, d = O_WRONLY on a directory):
 *                               prints OK or the errno's name
 *   fileio errors DIR           ENOENT, EISDIR, EBADF
 *   fileio fill PATH            writes until an error: its name
 *   fileio slow PATH N          a line every 0.5 s, N times: EIO and when
 *   fileio sendfile SRC DST     sendfile: all of SRC to stdout, then SRC from
 *                               byte 100 on into DST (the offset moves, the
 *                               file position not); the counts on stderr
 *   fileio cpus                 the node's CPUs as the C library counts them
 *                               (get_nprocs, get_nprocs_conf) and what
 *                               /sys/devices/system/cpu holds
 *   fileio devnull N            N writes to /dev/null (opened as a shell's
 *                               `>` does), stdout pointed there too; what
 *                               reads, seeks, fstat and sendfile of
 *                               /dev/null and /dev/zero give
 *   fileio mmap PATH            maps a file it wrote (3 pages and 100 bytes):
 *                               private and shared read-only, from 0 and from
 *                               a page in; past the end zeros; a private
 *                               mapping's writes stay out of the file;
 *                               whether a shared writable one is made
 *   fileio space PATH [BYTES]   posix_fallocate of BYTES (1 MiB), the size; the
 *                               file system's block size and blocks by
 *                               fstatvfs and by statvfs of PATH's directory
 *   fileio vectors PATH         preadv, pwritev, preadv2, pwritev2 on a file it
 *                               writes; where the file position is after each
 *   fileio sync PATH            syncfs of a file it writes, of -1; sync
 *   fileio hold DIR N MS        opens N files in DIR and keeps them MS ms
 *   fileio ownfds               writes a line through /dev/stdout, /dev/stderr,
 *                               /proc/self/fd/1, /dev/fd/2; reads /dev/urandom
 * The rank is TERN_RANK (yod) or, on Linux nodes under mpiexec, PMI_RANK.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/sysinfo.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static const char *ename(int e)
{
    switch (e) {
    case 0: return "OK";
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case EISDIR: return "EISDIR";
    case EBADF: return "EBADF";
    case ENOSPC: return "ENOSPC";
    case EIO: return "EIO";
    case EXDEV: return "EXDEV";
    case ENOTDIR: return "ENOTDIR";
    case EEXIST: return "EEXIST";
    case ELOOP: return "ELOOP";
    case EPERM: return "EPERM";
    case EINVAL: return "EINVAL";
    case ENODEV: return "ENODEV";
    case ENXIO: return "ENXIO";
    case ENFILE: return "ENFILE";
    case EMFILE: return "EMFILE";
    default: return "OTHER";
    }
}

static uint32_t crc_table[256];
static uint32_t crc32_update(uint32_t c, const unsigned char *p, size_t n)
{
    if (!crc_table[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t v = i;
            for (int k = 0; k < 8; k++)
                v = v & 1 ? 0xEDB88320u ^ (v >> 1) : v >> 1;
            crc_table[i] = v;
        }
    c = ~c;
    while (n--)
        c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
    return ~c;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static void fill(unsigned char *b, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b[i] = (unsigned char)x;
    }
}

/* This rank's number: yod's TERN_RANK, or MPICH hydra's PMI_RANK on Linux. */
static const char *rank_env(void)
{
    const char *r = getenv("TERN_RANK");
    return r ? r : getenv("PMI_RANK");
}

static int fails;
#define CHECK(c, ...) do { if (!(c)) { printf("FAIL %s:%d: ", __func__, __LINE__); \
    printf(__VA_ARGS__); printf(" (errno %d %s)\n", errno, ename(errno)); fails++; } } while (0)

static int basic(const char *top)
{
    char a[4096], b[4096], sub[4096], dir[3000];
    const char *r = rank_env();
    snprintf(dir, sizeof dir, "%s/basic.%s", top, r ? r : "0");
    CHECK(mkdir(dir, 0755) == 0, "mkdir %s", dir);
    snprintf(a, sizeof a, "%s/basic-a.txt", dir);
    snprintf(b, sizeof b, "%s/basic-b.txt", dir);
    snprintf(sub, sizeof sub, "%s/basic-sub", dir);
    FILE *f = fopen(a, "w");
    CHECK(f, "fopen w %s", a);
    if (!f)
        return 1;
    for (int i = 0; i < 1000; i++)
        fprintf(f, "line %d\n", i);
    CHECK(fclose(f) == 0, "fclose");
    struct stat st;
    CHECK(stat(a, &st) == 0 && S_ISREG(st.st_mode), "stat");
    long want = 0;
    for (int i = 0; i < 1000; i++)
        want += snprintf(NULL, 0, "line %d\n", i);
    CHECK(st.st_size == want, "size %ld want %ld", (long)st.st_size, want);
    int fd = open(a, O_RDONLY);
    CHECK(fd >= 0, "open r");
    char buf[64];
    CHECK(lseek(fd, 7 * 10, SEEK_SET) == 70, "lseek");
    CHECK(read(fd, buf, 7) == 7 && !memcmp(buf, "line 10", 7), "read after seek");
    CHECK(pread(fd, buf, 8, 0) == 8 && !memcmp(buf, "line 0\nl", 8), "pread");
    CHECK(lseek(fd, 0, SEEK_CUR) == 77, "position after pread");
    CHECK(lseek(fd, -4, SEEK_END) == want - 4, "SEEK_END");
    CHECK(read(fd, buf, 64) == 4 && !memcmp(buf, "999\n", 4), "read tail");
    CHECK(read(fd, buf, 64) == 0, "eof");
    struct stat fst;
    CHECK(fstat(fd, &fst) == 0 && fst.st_ino == st.st_ino, "fstat");
    int fd2 = dup(fd);
    CHECK(fd2 > fd && lseek(fd2, 0, SEEK_CUR) == want, "dup shares the position");
    close(fd2);
    close(fd);
    fd = open(a, O_RDWR);
    CHECK(pwrite(fd, "LINE", 4, 0) == 4, "pwrite");
    CHECK(ftruncate(fd, 20) == 0 && fstat(fd, &fst) == 0 && fst.st_size == 20, "ftruncate");
    CHECK(read(fd, buf, 64) == 20 && !memcmp(buf, "LINE 0\n", 7), "read after pwrite");
    CHECK(fsync(fd) == 0, "fsync");
    close(fd);
    CHECK(mkdir(sub, 0755) == 0, "mkdir");
    CHECK(rename(a, b) == 0, "rename");
    CHECK(access(a, F_OK) == -1 && errno == ENOENT, "old name gone");
    CHECK(access(b, R_OK) == 0, "new name");
    int seen = 0;
    DIR *d = opendir(dir);
    CHECK(d, "opendir");
    struct dirent *e;
    while (d && (e = readdir(d)))
        seen |= (!strcmp(e->d_name, "basic-b.txt")) | (!strcmp(e->d_name, "basic-sub")) << 1;
    if (d)
        closedir(d);
    CHECK(seen == 3, "readdir saw %d", seen);
    char cwd[4096];
    CHECK(chdir(sub) == 0 && getcwd(cwd, sizeof cwd) && !strcmp(cwd, sub), "chdir %s", cwd);
    f = fopen("rel.txt", "w");
    CHECK(f && fputs("relative\n", f) >= 0 && fclose(f) == 0, "relative create");
    CHECK(chdir("..") == 0 && stat("basic-sub/rel.txt", &st) == 0 && st.st_size == 9,
          "relative stat");
    CHECK(unlink("basic-sub/rel.txt") == 0, "unlink relative");
    CHECK(rmdir(sub) == 0, "rmdir");
    CHECK(unlink(b) == 0, "unlink");
    CHECK(stat(b, &st) == -1 && errno == ENOENT, "gone");
    CHECK(rmdir(dir) == 0, "rmdir %s", dir);
    printf("basic %s: %s\n", dir, fails ? "FAILED" : "ok");
    return fails != 0;
}

static int rankfile(const char *dir, long mib)
{
    const char *r = rank_env();
    int rank = r ? atoi(r) : 0;
    size_t n = (size_t)mib << 20;
    unsigned char *buf = malloc(n), *back = malloc(n);
    if (!buf || !back)
        return 2;
    fill(buf, n, (uint64_t)rank + 1);
    char p[4096];
    snprintf(p, sizeof p, "%s/rank.%d", dir, rank);
    int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    CHECK(fd >= 0, "open %s", p);
    CHECK(write(fd, buf, n) == (ssize_t)n, "write");
    close(fd);
    fd = open(p, O_RDONLY);
    memset(back, 0, n);
    CHECK(read(fd, back, n) == (ssize_t)n, "read");
    close(fd);
    printf("rank %d crc %08x back %08x\n", rank, crc32_update(0, buf, n), crc32_update(0, back, n));
    return fails != 0;
}

static int big(const char *tmpl, long mib, long block, int cold)
{
    /* "%r" in the path: this rank's number */
    char path[4096];
    const char *r = rank_env(), *pr = strstr(tmpl, "%r");
    if (pr)
        snprintf(path, sizeof path, "%.*s%s%s", (int)(pr - tmpl), tmpl, r ? r : "0", pr + 2);
    else
        snprintf(path, sizeof path, "%s", tmpl);
    size_t total = (size_t)mib << 20, bs = (size_t)block;
    unsigned char *buf = malloc(bs), *pat = malloc(total < (16u << 20) ? total : (16u << 20));
    if (!buf || !pat)
        return 2;
    size_t patn = total < (16u << 20) ? total : (16u << 20);
    fill(pat, patn, 7);
    uint32_t cw = 0, cr = 0;
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    CHECK(fd >= 0, "open w");
    double t0 = now();
    for (size_t off = 0; off < total; off += bs) {
        size_t k = total - off < bs ? total - off : bs;
        const unsigned char *src = pat + (off % patn);
        if ((off % patn) + k > patn) {
            memcpy(buf, pat + (off % patn), patn - off % patn);
            src = buf;
        }
        if (write(fd, src, k) != (ssize_t)k) {
            CHECK(0, "write at %zu", off);
            break;
        }
    }
    close(fd);
    double t1 = now();
    fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "open r");
    if (cold) {
        int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        errno = e;
        CHECK(e == 0, "posix_fadvise DONTNEED");
    }
    size_t got = 0;
    double t2 = now();
    for (;;) {
        ssize_t k = read(fd, buf, bs);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    double t3 = now();
    close(fd);
    /* crc of what was written and of what came back (outside the timing) */
    for (size_t off = 0; off < total; off += patn)
        cw = crc32_update(cw, pat, total - off < patn ? total - off : patn);
    fd = open(path, O_RDONLY);
    for (ssize_t k; (k = read(fd, buf, bs)) > 0;)
        cr = crc32_update(cr, buf, (size_t)k);
    close(fd);
    printf("big bytes=%zu got=%zu write_s=%.6f read_s=%.6f crc_w=%08x crc_r=%08x\n", total, got,
           t1 - t0, t3 - t2, cw, cr);
    return fails != 0 || got != total;
}

static int try_open(const char *path, const char *mode)
{
    int flags = mode[0] == 'r' ? O_RDONLY : mode[0] == 'd' ? O_WRONLY :
                mode[0] == 'a' ? O_WRONLY | O_APPEND | O_CREAT : O_WRONLY | O_CREAT | O_TRUNC;
    errno = 0;
    int fd = open(path, flags, 0644);
    char buf[256] = "";
    if (fd >= 0 && mode[0] == 'r') {
        ssize_t k = read(fd, buf, sizeof buf - 1);
        buf[k > 0 ? k : 0] = 0;
        if (k < 0)
            printf("read %s: %s\n", path, ename(errno));
    }
    printf("open %s: %s%s%s\n", path, ename(fd >= 0 ? 0 : errno), buf[0] ? " " : "", buf);
    return 0;
}

static int errors(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/no/such/file", dir);
    errno = 0;
    printf("missing: %s\n", ename(open(p, O_RDONLY) < 0 ? errno : 0));
    errno = 0;
    printf("dir for writing: %s\n", ename(open(dir, O_WRONLY) < 0 ? errno : 0));
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    char c;
    errno = 0;
    printf("read a directory: %s\n", ename(read(fd, &c, 1) < 0 ? errno : 0));
    close(fd);
    errno = 0;
    printf("read a closed fd: %s\n", ename(read(fd, &c, 1) < 0 ? errno : 0));
    snprintf(p, sizeof p, "%s/errors-ro.txt", dir);
    fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    close(fd);
    fd = open(p, O_RDONLY);
    errno = 0;
    printf("write a read-only fd: %s\n", ename(write(fd, "x", 1) < 0 ? errno : 0));
    close(fd);
    unlink(p);
    errno = 0;
    printf("rmdir missing: %s\n", ename(rmdir(p) < 0 ? errno : 0));
    errno = 0;
    struct stat st;
    printf("stat bad pointer: %s\n", stat((char *)16, &st) < 0 && errno == EFAULT ? "EFAULT" : "?");
    return 0;
}

static int fillup(const char *path)
{
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0) {
        printf("fill: open %s\n", ename(errno));
        return 1;
    }
    static char buf[1 << 20];
    memset(buf, 'x', sizeof buf);
    size_t total = 0;
    for (int i = 0; i < 1000; i++) {
        ssize_t k = write(fd, buf, sizeof buf);
        if (k < 0) {
            printf("fill: %s after %zu bytes\n", ename(errno), total);
            close(fd);
            unlink(path);
            return 0;
        }
        total += (size_t)k;
    }
    printf("fill: no error after %zu bytes\n", total);
    return 1;
}

static int slow(const char *path, int n)
{
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0) {
        fprintf(stderr, "slow: open %s\n", ename(errno));
        return 1;
    }
    double t0 = now();
    for (int i = 0; i < n; i++) {
        char line[64];
        int k = snprintf(line, sizeof line, "line %d\n", i);
        double a = now();
        if (write(fd, line, (size_t)k) < 0) {
            int e = errno;
            double b = now();
            fprintf(stderr, "slow: write %d: %s after %.1f s (call took %.1f s)\n", i, ename(e),
                    b - t0, b - a);
            /* the next call fails at once */
            a = now();
            int e2 = write(fd, line, (size_t)k) < 0 ? errno : 0;
            fprintf(stderr, "slow: again: %s in %.1f s\n", ename(e2), now() - a);
            return 3;
        }
        fsync(fd);
        struct timespec ts = {0, 500000000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "slow: no error\n");
    return 0;
}

static int send_file(const char *src, const char *dst)
{
    int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    struct stat st;
    if (in < 0 || out < 0 || fstat(in, &st)) {
        fprintf(stderr, "sendfile: open: %s\n", ename(errno));
        return 1;
    }
    fflush(stdout);
    ssize_t all = sendfile(1, in, NULL, (size_t)st.st_size + 10);
    off_t off = 100;
    ssize_t part = sendfile(out, in, &off, (size_t)st.st_size);
    off_t pos = lseek(in, 0, SEEK_CUR);
    errno = 0;
    int from_stdin = sendfile(out, 0, NULL, 10) < 0 ? errno : 0;
    fprintf(stderr, "to stdout %zd, to file %zd, offset now %lld, position %lld, from stdin %s\n",
            all, part, (long long)off, (long long)pos, ename(from_stdin));
    close(out);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "WHAT name name ...": a directory's entries but . and .., sorted. */
static void list_dir(const char *what, const char *path)
{
    char *names[64];
    int k = 0;
    DIR *d = opendir(path);
    for (struct dirent *e; d && k < 64 && (e = readdir(d));)
        if (e->d_name[0] != '.')
            names[k++] = strdup(e->d_name);
    if (d)
        closedir(d);
    qsort(names, (size_t)k, sizeof names[0], cmp_str);
    printf("%s", what);
    for (int i = 0; i < k; i++)
        printf(" %s", names[i]);
    printf("\n");
}

/* The CPU files are the node's own, never a file server's (the service
 * node's count would size a program's thread pool wrongly). */
static int cpus(void)
{
    const char *dir = "/sys/devices/system/cpu";
    printf("nprocs %d conf %d\n", get_nprocs(), get_nprocs_conf());
    char buf[64] = "";
    int fd = open("/sys/devices/system/cpu/online", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    buf[n > 0 ? n : 0] = 0;
    buf[strcspn(buf, "\n")] = 0;
    printf("online %s\n", n > 0 ? buf : ename(errno));
    if (fd >= 0)
        close(fd);
    list_dir("entries", dir);
    printf("write online: %s\n",
           ename(open("/sys/devices/system/cpu/online", O_WRONLY) < 0 ? errno : 0));
    struct stat st;
    int e = stat("/sys/devices/system/cpu/cpu0", &st) < 0 ? errno : 0;
    printf("cpu0: %s\n", e ? ename(e) : S_ISDIR(st.st_mode) ? "directory" : "not a directory");
    e = stat("/sys/devices/system/node", &st) < 0 ? errno : 0;
    printf("NUMA nodes: %s\n", e ? ename(e) : "a directory");
    /* What OpenMP runtimes read for OMP_PLACES=cores and sockets. */
    const char *files[] = {"thread_siblings_list", "core_siblings_list"};
    printf("cpu0 topology:");
    for (int i = 0; i < 2; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/cpu0/topology/%s", dir, files[i]);
        FILE *f = fopen(path, "r");
        char line[64] = "";
        if (!f || !fgets(line, sizeof line, f))
            snprintf(line, sizeof line, "%s", ename(errno));
        line[strcspn(line, "\n")] = 0;
        printf(" %s %s", files[i], line);
        if (f)
            fclose(f);
    }
    printf("\n");
    list_dir("cpu0/topology entries", "/sys/devices/system/cpu/cpu0/topology");
    printf("cpu1: %s\n", ename(stat("/sys/devices/system/cpu/cpu1", &st) < 0 ? errno : 0));
    return 0;
}

/* /dev/null and /dev/zero as a program uses them: a sink for output it
 * does not want (an MPI code's other ranks, freopen), and zeros. */
static int devnull(long n)
{
    int fd = open("/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) {
        printf("open /dev/null: %s\n", ename(errno));
        return 1;
    }
    char line[64];
    long bad = 0;
    for (long i = 0; i < n; i++) {
        int len = snprintf(line, sizeof line, "line %ld of output nobody wants\n", i);
        if (write(fd, line, (size_t)len) != len)
            bad++;
    }
    /* stdout into /dev/null too, as freopen does it */
    fflush(stdout);
    int saved = dup(1);
    if (saved < 0 || !freopen("/dev/null", "w", stdout))
        return 3;
    for (long i = 0; i < n; i++)
        printf("rank output nobody wants %ld\n", i);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    char buf[4096];
    memset(buf, 0x5a, sizeof buf);
    int rfd = open("/dev/null", O_RDONLY);
    long got = rfd >= 0 ? (long)read(rfd, buf, sizeof buf) : -2;
    int zfd = open("/dev/zero", O_RDWR);
    long zgot = zfd >= 0 ? (long)read(zfd, buf, sizeof buf) : -2;
    long nonzero = 0;
    for (size_t i = 0; i < sizeof buf; i++)
        nonzero += buf[i] != 0;
    long zw = zfd >= 0 ? (long)write(zfd, buf, 100) : -2;
    struct stat sn, sz;
    int okn = fstat(fd, &sn), okz = zfd >= 0 ? fstat(zfd, &sz) : -1;
    off_t pos = lseek(fd, 1000, SEEK_SET);
    int excl = open("/dev/null", O_WRONLY | O_CREAT | O_EXCL, 0666);
    int excl_err = excl < 0 ? errno : 0;
    int asdir = open("/dev/null", O_RDONLY | O_DIRECTORY);
    int asdir_err = asdir < 0 ? errno : 0;
    printf("devnull: %ld writes, %ld failed\n", n, bad);
    printf("read /dev/null: %ld\n", got);
    printf("read /dev/zero: %ld bytes, %ld not zero; write: %ld\n", zgot, nonzero, zw);
    printf("fstat: null %s chr %d %u:%u, zero %s chr %d %u:%u\n",
           ename(okn ? errno : 0), okn ? -1 : S_ISCHR(sn.st_mode) != 0,
           okn ? 0 : major(sn.st_rdev), okn ? 0 : minor(sn.st_rdev),
           ename(okz ? errno : 0), okz ? -1 : S_ISCHR(sz.st_mode) != 0,
           okz ? 0 : major(sz.st_rdev), okz ? 0 : minor(sz.st_rdev));
    printf("lseek: %ld; O_EXCL: %s; O_DIRECTORY: %s; W_OK: %s\n", (long)pos, ename(excl_err),
           ename(asdir_err), ename(access("/dev/null", W_OK) ? errno : 0));
    /* sendfile from the node's own files, as from any file */
    long sendz = zfd >= 0 ? (long)sendfile(fd, zfd, NULL, 100000) : -2;
    int sendz_err = sendz < 0 ? errno : 0;
    int cfd = open("/proc/cpuinfo", O_RDONLY);
    long sc = cfd >= 0 ? (long)sendfile(fd, cfd, NULL, 1 << 20) : -2;
    int sc_err = sc < 0 ? errno : 0;
    printf("sendfile /dev/zero to /dev/null: %ld %s; /proc/cpuinfo: %s\n", sendz, ename(sendz_err),
           sc > 0 ? "some bytes" : ename(sc_err));
    return bad != 0;
}

static int map_file(const char *path)
{
    enum { LEN = 3 * 4096 + 100 };
    static unsigned char pat[LEN];
    for (int i = 0; i < LEN; i++)
        pat[i] = (unsigned char)(i * 13 + i / 4096);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, pat, LEN) != LEN || close(fd))
        return 1;
    fd = open(path, O_RDONLY);
    unsigned char *p = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    unsigned char *s = mmap(NULL, LEN, PROT_READ, MAP_SHARED, fd, 0);
    unsigned char *o = mmap(NULL, 2 * 4096, PROT_READ, MAP_PRIVATE, fd, 4096);
    if (p == MAP_FAILED || s == MAP_FAILED || o == MAP_FAILED) {
        printf("mmap: %s\n", ename(errno));
        return 1;
    }
    int zeros = 1;
    for (int i = LEN; i < 4 * 4096; i++)
        zeros &= p[i] == 0;
    printf("private: the file's bytes %s, zeros past its end %s\n",
           memcmp(p, pat, LEN) ? "NO" : "yes", zeros ? "yes" : "NO");
    printf("shared read-only: %s; from a page in: %s\n", memcmp(s, pat, LEN) ? "NO" : "yes",
           memcmp(o, pat + 4096, 2 * 4096) ? "NO" : "yes");
    memset(p, 0x5A, 4096);
    munmap(p, 4 * 4096);
    unsigned char first[16];
    int same = pread(fd, first, 16, 0) == 16 && !memcmp(first, pat, 16);
    printf("a private mapping's writes stay out of the file: %s\n", same ? "yes" : "NO");
    munmap(s, LEN);
    munmap(o, 2 * 4096);
    close(fd);
    /* Shared and writable: its stores reach the file (sharedmap.c says
     * more). */
    fd = open(path, O_RDWR);
    unsigned char *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (w != MAP_FAILED) {
        memcpy(w, "stored", 6);
        munmap(w, 4096);
    }
    unsigned char six[6];
    printf("shared writable: %s, the store in the file after munmap: %s\n",
           w == MAP_FAILED ? ename(errno) : "mapped",
           pread(fd, six, 6, 0) == 6 && !memcmp(six, "stored", 6) ? "yes" : "NO");
    close(fd);
    return unlink(path) != 0;
}

static int space(const char *path, long bytes)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    int e = fd < 0 ? errno : posix_fallocate(fd, 0, bytes);
    struct stat st;
    long size = fd >= 0 && fstat(fd, &st) == 0 ? (long)st.st_size : -1;
    printf("posix_fallocate: %s, size %ld\n", ename(e), size);
    struct statvfs a, b;
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    int ea = fstatvfs(fd, &a) ? errno : 0, eb = statvfs(slash ? dir : ".", &b) ? errno : 0;
    if (ea || eb) {
        printf("fstatvfs: %s, statvfs: %s\n", ename(ea), ename(eb));
        return 1;
    }
    printf("fstatvfs: frsize %lu blocks %lu; statvfs: frsize %lu blocks %lu\n",
           (unsigned long)a.f_frsize, (unsigned long)a.f_blocks, (unsigned long)b.f_frsize,
           (unsigned long)b.f_blocks);
    close(fd);
    return unlink(path) != 0;
}

/* Opens DIR/h0 .. DIR/h(n-1) and holds them open for ms milliseconds:
 * how many it got and why the next failed. */
static int hold(const char *dir, int n, long ms)
{
    int got = 0, err = 0;
    char p[512];
    for (; got < n; got++) {
        snprintf(p, sizeof p, "%s/h%d", dir, got);
        if (open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644) < 0) {
            err = errno;
            break;
        }
    }
    printf("held %d of %d: %s\n", got, n, ename(err));
    fflush(stdout);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    return 0;
}

/* The program's own descriptors by name, and the random devices. */
static int own_fds(void)
{
    const char *names[] = {"/dev/stdout", "/dev/stderr", "/proc/self/fd/1", "/dev/fd/2"};
    for (int i = 0; i < 4; i++) {
        FILE *f = fopen(names[i], "a");
        if (!f) {
            printf("%s: %s\n", names[i], ename(errno));
            continue;
        }
        fprintf(f, "via %s\n", names[i]);
        fclose(f);
    }
    int fd = open("/dev/fd/9", O_RDONLY);
    printf("/dev/fd/9: %s\n", fd < 0 ? ename(errno) : "opened");
    unsigned char a[32], b[32];
    fd = open("/dev/urandom", O_RDONLY);
    struct stat st;
    int dev = fd >= 0 && fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
              minor(st.st_rdev) == 9;
    int got = fd >= 0 && read(fd, a, sizeof a) == sizeof a && read(fd, b, sizeof b) == sizeof b;
    printf("/dev/urandom: read %s, two reads differ %s, character device 1:9 %s\n",
           got ? "yes" : ename(errno), got && memcmp(a, b, sizeof a) ? "yes" : "NO",
           dev ? "yes" : "NO");
    return 0;
}

/* The "2" forms by number: musl 1.2.3 has no wrapper. */
#ifndef RWF_DSYNC
#define RWF_DSYNC 2
#endif
static long rw2(long nr, int fd, const struct iovec *v, int n, long off, int flags)
{
    return syscall(nr, fd, v, n, off, 0L, flags);
}

/* preadv, pwritev and their "2" forms: at an offset the file position
 * stays; preadv2's -1 is the position. */
static int vectors(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "0123456789", 10) != 10) {
        printf("create %s: %s\n", path, ename(errno));
        return 1;
    }
    char a[8] = "", b[8] = "";
    struct iovec w[2] = {{"ab", 2}, {"cd", 2}}, r[2] = {{a, 3}, {b, 4}};
    long n = pwritev(fd, w, 2, 3);
    printf("pwritev at 3: %ld, position %ld\n", n, (long)lseek(fd, 0, SEEK_CUR));
    n = preadv(fd, r, 2, 2);
    printf("preadv at 2: %ld, '%s' '%s', position %ld\n", n, a, b, (long)lseek(fd, 0, SEEK_CUR));
    lseek(fd, 0, SEEK_SET);
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    r[1].iov_len = 2;
    n = rw2(SYS_preadv2, fd, r, 2, -1, 0);
    printf("preadv2 at -1: %ld, '%s' '%s', position %ld\n", n, a, b, (long)lseek(fd, 0, SEEK_CUR));
    n = rw2(SYS_pwritev2, fd, w, 1, 10, RWF_DSYNC);
    struct stat st;
    fstat(fd, &st);
    printf("pwritev2 RWF_DSYNC at 10: %ld, size %ld\n", n, (long)st.st_size);
    n = preadv(fd, r, 2, -5);
    printf("preadv at -5: %s\n", n < 0 ? ename(errno) : "read");
    printf("posix_fadvise SEQUENTIAL: %s, advice 99: %s; readahead: %s\n",
           ename(posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)), ename(posix_fadvise(fd, 0, 0, 99)),
           ename(readahead(fd, 0, 4096) ? errno : 0));
    n = preadv(1, r, 2, 0);
    printf("preadv of stdout: %s\n", n < 0 ? (errno == ESPIPE ? "ESPIPE" : ename(errno)) : "read");
    close(fd);
    return unlink(path) != 0;
}

/* syncfs of a file's file system and of a bad descriptor; sync. */
static int syncs(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "kept\n", 5) != 5) {
        printf("create %s: %s\n", path, ename(errno));
        return 1;
    }
    const char *a = ename(syncfs(fd) ? errno : 0), *b = ename(syncfs(-1) ? errno : 0);
    sync();
    printf("syncfs: %s; of -1: %s; sync: returned\n", a, b);
    close(fd);
    return unlink(path) != 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && !strcmp(argv[1], "hold"))
        return hold(argv[2], atoi(argv[3]), atol(argv[4]));
    if (argc >= 2 && !strcmp(argv[1], "ownfds"))
        return own_fds();
    if (argc >= 3 && !strcmp(argv[1], "sync"))
        return syncs(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "vectors"))
        return vectors(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "space"))
        return space(argv[2], argc >= 4 ? atol(argv[3]) : 1 << 20);
    if (argc >= 3 && !strcmp(argv[1], "mmap"))
        return map_file(argv[2]);
    if (argc >= 2 && !strcmp(argv[1], "cpus"))
        return cpus();
    if (argc >= 3 && !strcmp(argv[1], "devnull"))
        return devnull(atol(argv[2]));
    if (argc >= 4 && !strcmp(argv[1], "sendfile"))
        return send_file(argv[2], argv[3]);
    if (argc >= 3 && !strcmp(argv[1], "basic"))
        return basic(argv[2]);
    if (argc >= 4 && !strcmp(argv[1], "rankfile"))
        return rankfile(argv[2], atol(argv[3]));
    if (argc >= 5 && !strcmp(argv[1], "big"))
        return big(argv[2], atol(argv[3]), atol(argv[4]), argc >= 6 && !strcmp(argv[5], "cold"));
    if (argc >= 4 && !strcmp(argv[1], "open"))
        return try_open(argv[2], argv[3]);
    if (argc >= 3 && !strcmp(argv[1], "errors"))
        return errors(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "fill"))
        return fillup(argv[2]);
    if (argc >= 4 && !strcmp(argv[1], "slow"))
        return slow(argv[2], atoi(argv[3]));
    fprintf(stderr, "usage: see tests/programs/fileio.c\n");
    return 2;
}
