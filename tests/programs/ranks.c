/* A program for yod tests that does something depending on its rank
 * (TERN_RANK): `ranks MODE [ARG...]`.
 *   hello              "rank R of S on nid N" (N from TERN_MAP)
 *   exit R CODE        rank R exits with CODE, the others exit 0
 *   fault R            rank R dereferences NULL, the others exit 0
 *   spin [SECONDS]     print "spinning", compute until killed (or for SECONDS);
 *                      SIGUSR1 makes it print "rank R got SIGUSR1"
 *   ignore-int         like spin, but ignores SIGINT
 *   stdin              rank 0 copies stdin to stdout, then prints the byte count
 *   dirty MB           fills MB MiB of heap with a pattern
 *   clean MB           checks that MB MiB of fresh heap and all of bss are zero
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

int main(int argc, char **argv)
{
    rank = getenv("TERN_RANK") ? atoi(getenv("TERN_RANK")) : -1;
    size = getenv("TERN_SIZE") ? atoi(getenv("TERN_SIZE")) : -1;
    const char *mode = argc > 1 ? argv[1] : "hello";
    if (!strcmp(mode, "hello")) {
        printf("rank %d of %d on nid %u\n", rank, size, nid_of(rank));
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
    fprintf(stderr, "ranks: unknown mode %s\n", mode);
    return 2;
}
