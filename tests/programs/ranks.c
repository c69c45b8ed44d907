/* A program for yod tests that does something depending on its rank
 * (TERN_RANK): `ranks MODE [ARG...]`.
 *   hello              "rank R of S on nid N" (N from TERN_MAP)
 *   host               "rank R on nid N: gethostname H, uname nodename U"
 *   exit R CODE        rank R exits with CODE, the others exit 0
 *   fault R            rank R dereferences NULL, the others exit 0
 *   spin [SECONDS]     print "spinning", compute until killed (or for SECONDS);
 *                      SIGUSR1 makes it print "rank R got SIGUSR1"
 *   ignore-int         like spin, but ignores SIGINT
 *   stdin              rank 0 copies stdin to stdout, then prints the byte count
 *   dirty MB           fills MB MiB of heap with a pattern
 *   clean MB           checks that MB MiB of fresh heap and all of bss are zero
 *   vdirty             fills the x87, XMM and (where usable) YMM registers with 0x5A
 *   vclean             checks that no such register holds that pattern
 *   scribble HOW       writes the pattern "TERNDIRT" where only a hostile
 *                      program would: HOW is heap (the whole heap area, never
 *                      allocated), stack (below the stack pointer, down to the
 *                      guard page), reserve (committed reserved memory,
 *                      released again), split (the same, partly released so a
 *                      2 MiB page is split), stdin (rank 0 reads its stdin
 *                      into the middle of the unallocated heap area)
 *   scan               looks for the pattern in every word of the heap area,
 *                      the free stack and bss; prints where it is found
 * (scribble and scan know Tern's layout, docs/kernel.md: the region is
 * mapped whole, the heap area runs from the break to the top mmap page,
 * a guard page, then the stack.) */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int rank, size;
static volatile sig_atomic_t usr1;
static char bss[1 << 20];

static void on_usr1(int s) { (void)s; usr1 = 1; }

static unsigned nid_of(int r)
{
    const char *m = getenv("TERN_MAP");
    for (int i = 0; m && i < r; i++) {
        m = strchr(m, ',');
        if (m)
            m++;
    }
    return m ? (unsigned)strtoul(m, NULL, 10) : 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int spin(double secs)
{
    signal(SIGUSR1, on_usr1);
    printf("rank %d spinning\n", rank);
    fflush(stdout);
    double end = now() + secs;
    volatile unsigned long x = 0;
    while (secs <= 0 || now() < end) {
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
        if (usr1) {
            usr1 = 0;
            printf("rank %d got SIGUSR1\n", rank);
            fflush(stdout);
        }
    }
    return 0;
}

/* A register image of bytes 0x5A: what vdirty leaves behind and vclean
 * must not find (the C library at start-up writes some of these registers,
 * never with this). */
static const unsigned char pat[32] __attribute__((aligned(32))) = {
    0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A,
    0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A};

static int avx_usable(void)
{
    unsigned a = 1, b, c = 0, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    if (!(c & (1u << 27)) || !(c & (1u << 28)))     /* OSXSAVE, AVX */
        return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 6) == 6;
}

#define XMM_LOAD(n) "movdqu %0, %%xmm" #n "\n"
#define YMM_LOAD(n) "vmovdqu %0, %%ymm" #n "\n"
#define YMM_UPPER(n) "vextractf128 $1, %%ymm" #n ", 16*" #n "(%0)\n"

/* Never returns: the registers go as they are to the kernel's exit. */
static void vdirty(void)
{
    int avx = avx_usable();
    printf("rank %d dirtied vector registers%s\n", rank, avx ? " (AVX too)" : "");
    fflush(stdout);
    for (int i = 0; i < 8; i++)
        __asm__ volatile("fldt %0" ::"m"(pat));
    __asm__ volatile(XMM_LOAD(0) XMM_LOAD(1) XMM_LOAD(2) XMM_LOAD(3) XMM_LOAD(4) XMM_LOAD(5)
                     XMM_LOAD(6) XMM_LOAD(7) XMM_LOAD(8) XMM_LOAD(9) XMM_LOAD(10) XMM_LOAD(11)
                     XMM_LOAD(12) XMM_LOAD(13) XMM_LOAD(14) XMM_LOAD(15) ::"m"(pat));
    if (avx)
        __asm__ volatile(YMM_LOAD(0) YMM_LOAD(1) YMM_LOAD(2) YMM_LOAD(3) YMM_LOAD(4)
                         YMM_LOAD(5) YMM_LOAD(6) YMM_LOAD(7) YMM_LOAD(8) YMM_LOAD(9)
                         YMM_LOAD(10) YMM_LOAD(11) YMM_LOAD(12) YMM_LOAD(13) YMM_LOAD(14)
                         YMM_LOAD(15) ::"m"(pat));
    __asm__ volatile("syscall" ::"a"(231), "D"(0));        /* exit_group(0) */
    __builtin_unreachable();
}

static int vclean(void)
{
    static unsigned char fx[512] __attribute__((aligned(16))), up[16 * 16];
    __asm__ volatile("fxsave %0" : "=m"(fx));
    int bad = 0;
    for (int i = 0; i < 8; i++)
        if (!memcmp(fx + 32 + 16 * i, pat, 10)) {
            printf("rank %d: st(%d) holds the previous job's value\n", rank, i);
            bad = 1;
        }
    for (int i = 0; i < 16; i++)
        if (!memcmp(fx + 160 + 16 * i, pat, 16)) {
            printf("rank %d: xmm%d holds the previous job's value\n", rank, i);
            bad = 1;
        }
    if (avx_usable()) {
        __asm__ volatile(YMM_UPPER(0) YMM_UPPER(1) YMM_UPPER(2) YMM_UPPER(3) YMM_UPPER(4)
                         YMM_UPPER(5) YMM_UPPER(6) YMM_UPPER(7) YMM_UPPER(8) YMM_UPPER(9)
                         YMM_UPPER(10) YMM_UPPER(11) YMM_UPPER(12) YMM_UPPER(13)
                         YMM_UPPER(14) YMM_UPPER(15) ::"r"(up) : "memory");
        for (int i = 0; i < 16; i++)
            if (!memcmp(up + 16 * i, pat, 16)) {
                printf("rank %d: the upper half of ymm%d holds the previous job's value\n",
                       rank, i);
                bad = 1;
            }
    }
    if (!bad)
        printf("rank %d vector registers clean\n", rank);
    return bad;
}

/* "TERNDIRT" as a little-endian word, made at run time so that the
 * program's own file (which a node stages in the heap area) never holds it. */
static volatile uint64_t not_pattern = ~0x545249444E524554ULL;

/* The heap area [*lo, *hi) and the stack's free part [*slo, *shi). */
static void layout(uintptr_t *lo, uintptr_t *hi, uintptr_t *slo, uintptr_t *shi)
{
    *lo = ((uintptr_t)syscall(SYS_brk, 0) + 4095) & ~(uintptr_t)4095;
    void *top = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *hi = (uintptr_t)top;                  /* the page itself is fresh: zeroed */
    *slo = *hi + 2 * 4096;                 /* the top mmap page, the guard */
    volatile char here;
    *shi = ((uintptr_t)&here - 64 * 1024) & ~(uintptr_t)4095;
}

static void fill(uintptr_t lo, uintptr_t hi, uint64_t pattern)
{
    for (uint64_t *w = (uint64_t *)lo; w < (uint64_t *)hi; w++)
        *w = pattern;
}

static int find(const char *what, uintptr_t lo, uintptr_t hi, uint64_t pattern)
{
    for (const volatile uint64_t *w = (const uint64_t *)lo; w < (const uint64_t *)hi; w++)
        if (*w == pattern) {
            printf("rank %d: the pattern is in the %s at offset 0x%lx\n", rank, what,
                   (unsigned long)((uintptr_t)w - lo));
            return 1;
        }
    return 0;
}

static int scribble(const char *how)
{
    uint64_t pattern = ~not_pattern;
    uintptr_t lo, hi, slo, shi;
    layout(&lo, &hi, &slo, &shi);
    if (!strcmp(how, "heap"))
        fill(lo, hi, pattern);
    else if (!strcmp(how, "stack"))
        fill(slo, shi, pattern);
    else if (!strcmp(how, "reserve") || !strcmp(how, "split")) {
        /* 2 MiB aligned addresses, so the commit gets 2 MiB pages */
        size_t len = 8u << 20;
        char *r = mmap(NULL, len + (2u << 20), PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (r == MAP_FAILED)
            return 2;
        char *a = (char *)(((uintptr_t)r + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
        if (mprotect(a, len, PROT_READ | PROT_WRITE))
            return 3;
        fill((uintptr_t)a, (uintptr_t)a + len, pattern);
        if (how[0] == 'r')
            munmap(r, len + (2u << 20));
        else
            munmap(a + 4096, 4096);        /* the rest stays, in 4 KiB pages now */
    } else if (!strcmp(how, "stdin")) {
        if (rank != 0)
            return 0;
        char *p = (char *)(((lo + hi) / 2) & ~(uintptr_t)4095);
        ssize_t n, total = 0;
        while ((n = read(0, p + total, 65536)) > 0)
            total += n;
        printf("rank 0 read %zd bytes\n", total);
    } else {
        fprintf(stderr, "ranks: scribble where? %s\n", how);
        return 2;
    }
    printf("rank %d scribbled on its %s\n", rank, how);
    return 0;
}

static int scan(void)
{
    uint64_t pattern = ~not_pattern;
    uintptr_t lo, hi, slo, shi;
    layout(&lo, &hi, &slo, &shi);
    if (find("heap area", lo, hi, pattern) || find("stack", slo, shi, pattern) ||
        find("bss", (uintptr_t)bss, (uintptr_t)bss + sizeof bss, pattern))
        return 1;
    printf("rank %d found no pattern in %lu KiB\n", rank,
           (unsigned long)((hi - lo) + (shi - slo) + sizeof bss) >> 10);
    return 0;
}

int main(int argc, char **argv)
{
    rank = getenv("TERN_RANK") ? atoi(getenv("TERN_RANK")) : -1;
    size = getenv("TERN_SIZE") ? atoi(getenv("TERN_SIZE")) : -1;
    const char *mode = argc > 1 ? argv[1] : "hello";
    if (!strcmp(mode, "hello")) {
        printf("rank %d of %d on nid %u\n", rank, size, nid_of(rank));
        return 0;
    }
    if (!strcmp(mode, "host")) {
        char h[65] = "";
        struct utsname u;
        int e1 = gethostname(h, sizeof h), e2 = uname(&u);
        printf("rank %d on nid %u: gethostname %s, uname nodename %s\n", rank, nid_of(rank),
               e1 ? "FAILED" : h, e2 ? "FAILED" : u.nodename);
        return 0;
    }
    if (!strcmp(mode, "exit") && argc > 3)
        return rank == atoi(argv[2]) ? atoi(argv[3]) : 0;
    if (!strcmp(mode, "fault") && argc > 2) {
        if (rank == atoi(argv[2]))
            *(volatile int *)0 = 1;
        return 0;
    }
    if (!strcmp(mode, "spin"))
        return spin(argc > 2 ? atof(argv[2]) : 0);
    if (!strcmp(mode, "ignore-int")) {
        signal(SIGINT, SIG_IGN);
        return spin(0);
    }
    if (!strcmp(mode, "stdin")) {
        if (rank != 0)
            return 0;
        char buf[4096];
        long total = 0;
        ssize_t n;
        while ((n = read(0, buf, sizeof buf)) > 0) {
            fwrite(buf, 1, (size_t)n, stdout);
            total += n;
        }
        printf("stdin: %ld bytes\n", total);
        return n < 0;
    }
    if ((!strcmp(mode, "dirty") || !strcmp(mode, "clean")) && argc > 2) {
        size_t n = (size_t)atol(argv[2]) << 20;
        unsigned char *p = malloc(n);
        if (!p)
            return 2;
        if (mode[0] == 'd') {
            memset(p, 0xA5, n);
            memset(bss, 0x5A, sizeof bss);
            printf("rank %d dirtied %zu MiB\n", rank, n >> 20);
            return 0;
        }
        for (size_t i = 0; i < n; i++)
            if (p[i]) {
                printf("rank %d: heap byte %zu is 0x%02x\n", rank, i, p[i]);
                return 1;
            }
        for (size_t i = 0; i < sizeof bss; i++)
            if (bss[i]) {
                printf("rank %d: bss byte %zu is 0x%02x\n", rank, i, bss[i]);
                return 1;
            }
        printf("rank %d clean\n", rank);
        return 0;
    }
    if (!strcmp(mode, "vdirty"))
        vdirty();
    if (!strcmp(mode, "vclean"))
        return vclean();
    if (!strcmp(mode, "scribble") && argc > 2)
        return scribble(argv[2]);
    if (!strcmp(mode, "scan"))
        return scan();
    fprintf(stderr, "ranks: unknown mode %s\n", mode);
    return 2;
}
