/* Address-space reservations: PROT_NONE mappings take addresses, not
 * memory; making part of one accessible takes memory for that part.
 *   map      the steps below, one line each (compared by the test)
 *   touch    touches a reserved page that was never made accessible
 *   io       a system call reads into and writes from reserved memory
 *   scatter  commits a page in every 2 MiB of 1 TiB until refused, releases
 *            it all, commits again: page tables run out before memory does */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#define MiB (1UL << 20)
#define GiB (1UL << 30)

static long free_mib(void)
{
    struct sysinfo si;
    sysinfo(&si);
    return (long)(si.freeram * si.mem_unit / MiB);
}

/* errno by name: the libcs word their messages differently */
static const char *err(void) { return errno == ENOMEM ? "ENOMEM" : errno == EEXIST ? "EEXIST" : errno == EFAULT ? "EFAULT" : "other"; }
static const char *res(void *p) { return p == MAP_FAILED ? err() : "ok"; }

static int fill_and_check(unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i += 4096)
        if (p[i] != 0)
            return 0;                 /* committed memory starts zeroed */
    for (size_t i = 0; i < len; i += 512)
        p[i] = (unsigned char)(i >> 9);
    for (size_t i = 0; i < len; i += 512)
        if (p[i] != (unsigned char)(i >> 9))
            return 0;
    return 1;
}

static int map(void)
{
    long before = free_mib();
    /* Far more than the node has: only addresses. */
    unsigned char *r = mmap(NULL, 16 * GiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    printf("reserve 16 GiB: %s\n", res(r));
    if (r == MAP_FAILED)
        return 1;
    printf("free memory unchanged: %s\n", before - free_mib() <= 1 ? "yes" : "no");
    printf("mprotect 1 MiB at 0: %d\n", mprotect(r, MiB, PROT_READ | PROT_WRITE));
    printf("mprotect 4 MiB at 5 GiB: %d\n", mprotect(r + 5 * GiB, 4 * MiB, PROT_READ | PROT_WRITE));
    printf("committed memory zeroed and usable: %s\n",
           fill_and_check(r, MiB) && fill_and_check(r + 5 * GiB, 4 * MiB) ? "yes" : "no");
    long used = before - free_mib();
    printf("free memory down by 5 MiB: %s\n", used >= 5 && used <= 6 ? "yes" : "no");
    /* The Go runtime's way: mmap MAP_FIXED read-write over the reservation. */
    unsigned char *f = mmap(r + 8 * GiB, 2 * MiB, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    printf("mmap fixed over it: %s, at the address asked: %s\n", res(f), f == r + 8 * GiB ? "yes" : "no");
    printf("usable: %s\n", f != MAP_FAILED && fill_and_check(f, 2 * MiB) ? "yes" : "no");
    void *n = mmap(r + 8 * GiB, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    printf("MAP_FIXED_NOREPLACE over it: %s\n", res(n));
    /* More than the node has: refused, never faked. */
    printf("mprotect 4 GiB read-write: %s\n",
           mprotect(r + 10 * GiB, 4 * GiB, PROT_READ | PROT_WRITE) ? err() : "ok");
    void *big = mmap(r + 10 * GiB, 4 * GiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    printf("mmap fixed 4 GiB read-write: %s\n", res(big));
    printf("mprotect past the reservation: %s\n",
           mprotect(r + 16 * GiB - MiB, 2 * MiB, PROT_READ) ? err() : "ok");
    printf("munmap all: %d\n", munmap(r, 16 * GiB));
    printf("free memory back: %s\n", before - free_mib() <= 1 ? "yes" : "no");
    /* A hint is taken when the addresses are free. */
    void *want = (void *)0x00c000000000UL;
    void *h = mmap(want, 64 * MiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("hint 0xc000000000 taken: %s\n", h == want ? "yes" : "no");
    void *h2 = mmap(want, 64 * MiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("the same hint again: elsewhere: %s\n", h2 != MAP_FAILED && h2 != want ? "yes" : "no");
    return 0;
}

static int touch(void)
{
    unsigned char *r = mmap(NULL, 64 * MiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED || mprotect(r, 4096, PROT_READ | PROT_WRITE))
        return 1;
    r[0] = 1;
    printf("first page ok\n");
    fflush(stdout);
    r[MiB] = 1;                        /* never made accessible */
    printf("FAIL: no fault\n");
    return 1;
}

static int io(void)
{
    unsigned char *r = mmap(NULL, 64 * MiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED || mprotect(r, 2 * MiB, PROT_READ | PROT_WRITE))
        return 1;
    char *msg = (char *)r + MiB - 5;   /* across a page boundary */
    memcpy(msg, "written from reserved memory\n", 29);
    if (write(1, msg, 29) != 29)
        return 1;
    printf("getrandom into it: %zd\n", getrandom(r + 4000, 200, 0));
    errno = 0;
    ssize_t n = write(1, r + 3 * MiB, 10);
    printf("write from its uncommitted part: %zd %s\n", n, err());
    return 0;
}

static int scatter(void)
{
    unsigned long span = 1UL << 40;
    char *r = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED)
        return 1;
    long n = 0;
    unsigned long off;
    for (off = 0; off < span; off += 2 * MiB, n++) {
        if (mprotect(r + off, 4096, PROT_READ | PROT_WRITE))
            break;
        r[off] = 1;
    }
    printf("commits stopped with %s after more than 50: %s\n", off < span ? err() : "none",
           n > 50 ? "yes" : "no");
    printf("munmap: %d\n", munmap(r, span));
    char *p = mmap(NULL, 64 * MiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("commit elsewhere afterwards: %d\n", mprotect(p + 32 * MiB, 4096, PROT_READ | PROT_WRITE));
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "map";
    if (!strcmp(mode, "map"))
        return map();
    if (!strcmp(mode, "touch"))
        return touch();
    if (!strcmp(mode, "io"))
        return io();
    if (!strcmp(mode, "scatter"))
        return scatter();
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
