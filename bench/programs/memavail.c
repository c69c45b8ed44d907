/* Memory availability tests #1 and #2 of seed 003 (4.2): the largest single
 * allocation that succeeds, then the time to write one byte per page and
 * read them back forwards and backwards. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysinfo.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void)
{
    struct sysinfo si;
    sysinfo(&si);
    size_t total = si.totalram * si.mem_unit, lo = 0, hi = total;
    while (hi - lo > 64 * 1024) {           /* binary search to 64 KiB */
        size_t mid = lo + (hi - lo) / 2;
        void *p = malloc(mid);
        if (p) {
            free(p);
            lo = mid;
        } else {
            hi = mid;
        }
    }
    volatile unsigned char *p = malloc(lo);
    if (!p)
        return 1;
    size_t pages = lo / 4096;
    double t0 = now();
    for (size_t i = 0; i < pages; i++)
        p[i * 4096] = (unsigned char)i;
    double t1 = now();
    unsigned sum = 0;
    for (size_t i = 0; i < pages; i++)
        sum += p[i * 4096];
    double t2 = now();
    for (size_t i = pages; i-- > 0;)
        sum += p[i * 4096];
    double t3 = now();
    printf("total_ram_bytes %zu\n", total);
    printf("largest_alloc_bytes %zu\n", lo);
    printf("largest_alloc_percent %.2f\n", 100.0 * (double)lo / (double)total);
    printf("write_ns_per_page %.1f\n", (t1 - t0) * 1e9 / pages);
    printf("read_fwd_ns_per_page %.1f\n", (t2 - t1) * 1e9 / pages);
    printf("read_back_ns_per_page %.1f\n", (t3 - t2) * 1e9 / pages);
    return sum == 0xFFFFFFFF;
}
