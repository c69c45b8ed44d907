/* memcpy bandwidth for buffer sizes 1 KiB .. 16 MiB (seed 003, 4.2):
 * prints "size_bytes MB_per_s" lines, the median of repeated copies. */
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

int main(void)
{
    size_t max = 16 << 20;
    char *src = malloc(max), *dst = malloc(max);
    if (!src || !dst)
        return 1;
    memset(src, 1, max);
    memset(dst, 2, max);
    printf("# size_bytes MB_per_s\n");
    for (size_t n = 1024; n <= max; n *= 4) {
        double rates[7];
        size_t reps = (64 << 20) / n;
        if (reps < 2)
            reps = 2;
        for (int r = 0; r < 7; r++) {
            double t0 = now();
            for (size_t k = 0; k < reps; k++) {
                memcpy(dst, src, n);
                __asm__ volatile("" ::"r"(dst) : "memory");
            }
            rates[r] = (double)n * reps / (now() - t0) / 1e6;
        }
        qsort(rates, 7, sizeof rates[0], cmp);
        printf("%zu %.1f\n", n, rates[3]);
    }
    return 0;
}
