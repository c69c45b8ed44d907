/* Shared mappings of a file, as Linux keeps them: `sharedmap DIR` prints
 * what it sees, the same lines on Linux and on a node; `sharedmap DIR
 * exit|fault` stores "stored before the end" at the start of DIR/ended
 * through a shared mapping and ends without msync or munmap (exit, or
 * SIGSEGV), and the caller looks at the file. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { PG = 4096, LEN = 3 * PG + 100 };
static unsigned char pat[5 * PG];
static char path[4096];

static const char *yes(int ok) { return ok ? "yes" : "NO"; }

static const char *ename(int e)
{
    switch (e) {
    case 0: return "OK";
    case EACCES: return "EACCES";
    case EINVAL: return "EINVAL";
    case ENODEV: return "ENODEV";
    case ENOMEM: return "ENOMEM";
    case EBADF: return "EBADF";
    default: return strerror(e);
    }
}

/* The file as pat's first len bytes. */
static int fresh(size_t len)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, pat, len) != (ssize_t)len) {
        printf("make %s: %s\n", path, ename(errno));
        exit(1);
    }
    return fd;
}

static unsigned char *map(size_t len, int prot, int fd, off_t off)
{
    unsigned char *m = mmap(NULL, len, prot, MAP_SHARED, fd, off);
    if (m == MAP_FAILED) {
        printf("mmap: %s\n", ename(errno));
        exit(1);
    }
    return m;
}

/* Bytes [off, off + n) of the file, read through a descriptor of its own. */
static int file_has(off_t off, const void *want, size_t n)
{
    unsigned char got[64];
    int fd = open(path, O_RDONLY);
    int ok = fd >= 0 && pread(fd, got, n, off) == (ssize_t)n && !memcmp(got, want, n);
    close(fd);
    return ok;
}

static int end_without_unmapping(const char *dir, int fault)
{
    snprintf(path, sizeof path, "%s/ended", dir);
    int fd = fresh(LEN);
    unsigned char *m = map(LEN, PROT_READ | PROT_WRITE, fd, 0);
    close(fd);                        /* the mapping keeps the file */
    memcpy(m + PG + 7, "stored before the end", 21);
    if (fault) {
        volatile int *nowhere = (volatile int *)(uintptr_t)atoi("16");
        *nowhere = 1;
    }
    exit(0);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    for (int i = 0; i < 5 * PG; i++)
        pat[i] = (unsigned char)(i * 13 + i / PG);
    if (argc > 2)
        return end_without_unmapping(argv[1], strcmp(argv[2], "fault") == 0);
    mkdir(argv[1], 0755);
    snprintf(path, sizeof path, "%s/shared", argv[1]);

    /* Stores reach the file: at msync, and for any reader before it. */
    int fd = fresh(LEN);
    unsigned char *m = map(4 * PG, PROT_READ | PROT_WRITE, fd, 0);
    printf("the file's bytes: %s\n", yes(!memcmp(m, pat, LEN)));
    memcpy(m + 10, "first", 5);
    memcpy(m + 2 * PG + 50, "third", 5);
    int r = msync(m, 4 * PG, MS_SYNC);
    printf("msync: %s; a reader sees both stores: %s\n", ename(r ? errno : 0),
           yes(file_has(10, "first", 5) && file_has(2 * PG + 50, "third", 5)));
    memcpy(m + PG + 1, "no msync", 8);
    unsigned char got[8];
    printf("without msync, pread of the same descriptor: %s, of another: %s\n",
           yes(pread(fd, got, 8, PG + 1) == 8 && !memcmp(got, "no msync", 8)),
           yes(file_has(PG + 1, "no msync", 8)));

    /* Writes to the file show in the mapping. */
    r = pwrite(fd, "pwrite", 6, 2 * PG + 9);
    lseek(fd, 3 * PG, SEEK_SET);
    int w = write(fd, "write", 5);
    printf("pwrite and write show in the mapping: %s\n",
           yes(r == 6 && w == 5 && !memcmp(m + 2 * PG + 9, "pwrite", 6) &&
               !memcmp(m + 3 * PG, "write", 5)));
    int other = open(path, O_RDWR | O_APPEND);
    w = write(other, "append", 6);
    printf("write through another descriptor, at the end: %s\n",
           yes(w == 6 && !memcmp(m + LEN, "append", 6)));
    close(other);

    /* A store past the end stays out of the file. */
    m[LEN + 6 + 20] = 'X';
    msync(m, 4 * PG, MS_SYNC);
    struct stat st;
    fstat(fd, &st);
    printf("past the end: size %ld\n", (long)st.st_size);

    /* Another mapping of the file, made from another open. */
    other = open(path, O_RDWR);
    unsigned char *b = map(PG, PROT_READ | PROT_WRITE, other, PG);
    memcpy(m + PG + 100, "via a", 5);
    msync(m, 4 * PG, MS_SYNC);
    int seen = !memcmp(b + 100, "via a", 5);
    memcpy(b + 200, "via b", 5);
    msync(b, PG, MS_SYNC);
    printf("two mappings, after msync each sees the other: %s %s\n", yes(seen),
           yes(!memcmp(m + PG + 200, "via b", 5)));
    munmap(b, PG);
    close(other);

    /* madvise(MADV_DONTNEED) keeps a shared mapping's stores. */
    memcpy(m + 20, "kept", 4);
    r = madvise(m, 4 * PG, MADV_DONTNEED);
    printf("MADV_DONTNEED: %s, the store kept: %s\n", ename(r ? errno : 0),
           yes(!memcmp(m + 20, "kept", 4) && file_has(20, "kept", 4)));

    /* munmap of the middle page; the pages around go on. */
    r = munmap(m + PG, PG);
    memcpy(m + 30, "left", 4);
    memcpy(m + 2 * PG + 30, "right", 5);
    munmap(m, 4 * PG);
    printf("munmap of the middle: %s; stores on either side reach the file: %s\n",
           ename(r ? errno : 0), yes(file_has(30, "left", 4) && file_has(2 * PG + 30, "right", 5)));
    close(fd);

    /* Read-only, while another descriptor writes (LMDB reads its pages
     * through such a mapping and writes them with pwrite). */
    fd = fresh(2 * PG);
    int ro = open(path, O_RDONLY);
    unsigned char *v = map(2 * PG, PROT_READ, ro, 0);
    r = pwrite(fd, "seen by a reader", 16, PG + 5);
    printf("read-only mapping, pwrite elsewhere: %s\n",
           yes(r == 16 && !memcmp(v + PG + 5, "seen by a reader", 16)));
    /* mremap: what grows is the file's next bytes. */
    r = pwrite(fd, pat + 2 * PG, 3 * PG, 2 * PG);
    unsigned char *g = mremap(v, 2 * PG, 5 * PG, MREMAP_MAYMOVE);
    printf("mremap to 5 pages: %s, the new pages the file's: %s\n",
           ename(g == MAP_FAILED ? errno : 0),
           yes(g != MAP_FAILED && !memcmp(g + 2 * PG, pat + 2 * PG, 3 * PG)));
    if (g != MAP_FAILED)
        munmap(g, 5 * PG);
    /* Writable and shared needs a descriptor open for reading and writing. */
    errno = 0;
    void *bad = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0);
    printf("shared writable from O_RDONLY: %s\n", ename(bad == MAP_FAILED ? errno : 0));
    unsigned char *later = map(PG, PROT_READ, ro, 0);
    r = mprotect(later, PG, PROT_READ | PROT_WRITE);
    printf("mprotect to writable, from O_RDONLY: %s\n", ename(r ? errno : 0));
    munmap(later, PG);
    /* Made writable later, from a descriptor that may write: stores reach
     * the file. */
    later = map(PG, PROT_READ, fd, 0);
    r = mprotect(later, PG, PROT_READ | PROT_WRITE);
    if (!r)
        memcpy(later + 3, "later", 5);
    munmap(later, PG);
    printf("mprotect to writable: %s, the store in the file: %s\n", ename(r ? errno : 0),
           yes(file_has(3, "later", 5)));
    close(ro);
    close(fd);
    unlink(path);
    return 0;
}
