/* memcpy bandwidth for buffer sizes 1 KiB .. 16 MiB (seed 003, 4.2):
 * prints "size_bytes MB_per_s" lines, the median of repeated copies.
 *
 *     memcpy_bw [KIB_PER_SAMPLE [SAMPLES]]
 *
 * Each sample copies about KIB_PER_SAMPLE KiB (default 65536: 64 MiB; at
 * least two copies of the size), SAMPLES samples (odd, default 7) per size.
 * The defaults make the figures (make bench); smaller ones make a run that
 * only shows the program works (run_all.py --smoke), seconds instead of a
 * minute under TCG. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define MAX_SAMPLES 99

int main(int argc, char **argv)
{
    long kib = argc > 1 ? atol(argv[1]) : 65536;
    int samples = argc > 2 ? atoi(argv[2]) : 7;
    if (kib < 1 || kib > (1L << 30) || samples < 1 || samples > MAX_SAMPLES ||
        samples % 2 == 0) {
        fprintf(stderr, "usage: memcpy_bw [KIB_PER_SAMPLE (1..2^30) [SAMPLES (odd, 1..%d)]]\n",
                MAX_SAMPLES);
        return 2;
    }
    size_t max = 16 << 20;
    char *src = malloc(max), *dst = malloc(max);
    if (!src || !dst)
        return 1;
    memset(src, 1, max);
    memset(dst, 2, max);
    printf("# size_bytes MB_per_s\n");
    for (size_t n = 1024; n <= max; n *= 4) {
        double rates[MAX_SAMPLES];
        size_t reps = (size_t)kib * 1024 / n;
        if (reps < 2)
            reps = 2;
        for (int r = 0; r < samples; r++) {
            double t0 = now();
            for (size_t k = 0; k < reps; k++) {
                memcpy(dst, src, n);
                __asm__ volatile("" ::"r"(dst) : "memory");
            }
            rates[r] = (double)n * reps / (now() - t0) / 1e6;
        }
        qsort(rates, (size_t)samples, sizeof rates[0], cmp);
        printf("%zu %.1f\n", n, rates[samples / 2]);
    }
    return 0;
}
