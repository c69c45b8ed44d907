/* Fixed work quantum (FWQ): many samples of the same small amount of work;
 * on a quiet OS every sample takes the same time, and the spread is noise
 * the OS adds (interrupts, daemons, ticks). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SAMPLES 20000

static uint64_t ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static uint64_t tsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static volatile uint64_t sink;

static void work(long n)
{
    uint64_t x = 1;
    for (long i = 0; i < n; i++)
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    sink = x;
}

int main(int argc, char **argv)
{
    long quantum = argc > 1 ? atol(argv[1]) : 20000;   /* loop iterations per sample */
    static uint64_t d[SAMPLES];
    work(quantum * 10);                                /* warm up */
    uint64_t t0 = ns(), c0 = tsc();
    for (int i = 0; i < SAMPLES; i++) {
        uint64_t a = tsc();
        work(quantum);
        d[i] = tsc() - a;
    }
    double ns_per_tick = (double)(ns() - t0) / (double)(tsc() - c0);
    qsort(d, SAMPLES, sizeof d[0], cmp);
    double sum = 0, sq = 0;
    for (int i = 0; i < SAMPLES; i++)
        sum += (double)d[i];
    double mean = sum / SAMPLES;
    for (int i = 0; i < SAMPLES; i++)
        sq += ((double)d[i] - mean) * ((double)d[i] - mean);
    printf("samples %d\nquantum_iterations %ld\n", SAMPLES, quantum);
    printf("min_us %.3f\nmedian_us %.3f\np99_us %.3f\nmax_us %.3f\n", d[0] * ns_per_tick / 1e3,
           d[SAMPLES / 2] * ns_per_tick / 1e3, d[SAMPLES * 99 / 100] * ns_per_tick / 1e3,
           d[SAMPLES - 1] * ns_per_tick / 1e3);
    double sd = sqrt(sq / SAMPLES);
    printf("stddev_percent %.3f\nspread_percent %.3f\n", 100 * sd / mean,
           100.0 * (double)(d[SAMPLES - 1] - d[0]) / (double)d[0]);
    return 0;
}
