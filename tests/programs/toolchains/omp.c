/* OpenMP (libgomp): a parallel reduction over an array must equal the
 * serial sum (the values are exact in double), and every thread the team
 * was given must have taken part. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    long n = 1 << 22;
    double *a = malloc(n * sizeof *a), s = 0, serial = 0;
    for (long i = 0; i < n; i++)
        a[i] = (double)(i % 1000) * 0.5;
    for (long i = 0; i < n; i++)
        serial += a[i];
    int seen[256] = {0}, team = 0;
#pragma omp parallel reduction(+ : s)
    {
#pragma omp single
        team = omp_get_num_threads();
#pragma omp for
        for (long i = 0; i < n; i++)
            s += a[i];
#pragma omp critical
        seen[omp_get_thread_num() & 255] = 1;
    }
    int ran = 0;
    for (int i = 0; i < 256; i++)
        ran += seen[i];
    printf("threads %d, ran %d, sum %s serial\n", team, ran, s == serial ? "==" : "!=");
    return 0;
}
