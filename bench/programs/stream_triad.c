/* STREAM-like triad, a[i] = b[i] + s * c[i], in OpenMP (issue 17): the
 * memory bandwidth a node's threads get together.  Built with
 * gcc -fopenmp -static (glibc: musl has no libgomp); the same file runs on a
 * Tern node and on a Linux node.  The team size comes from OMP_NUM_THREADS.
 *
 *     stream_triad [ELEMENTS [REPS]]     (default 2097152 doubles, 10 reps)
 *
 * Prints "key value" lines (bench/node.py's parse_kv): the CPUs the node
 * gives the program (omp_get_num_procs: the affinity mask), the team size, the
 * best and the median of REPS timed triads in MB/s (24 bytes moved per
 * element, as STREAM counts them: two loads, one store), then a line that
 * says whether every a[i] holds the exact answer.  Exit status 1 when it
 * does not, or when fewer threads ran than were asked for. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Small integers and a power-of-two scalar: every b[i] + s * c[i] is exact
 * in double, so the check can ask for equality. */
static double b_at(long i) { return (double)(i % 1000); }
static double c_at(long i) { return (double)(i % 7) + 1.0; }

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2097152;
    int reps = argc > 2 ? atoi(argv[2]) : 10;
    const double s = 4.0;
    if (n < 1 || reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: stream_triad [ELEMENTS [REPS (1..1000)]]\n");
        return 2;
    }
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    if (!a || !b || !c) {
        fprintf(stderr, "stream_triad: cannot allocate 3 x %ld doubles\n", n);
        return 2;
    }
    int asked = omp_get_max_threads(), team = 0;
    /* First touch by the thread that will use each page, with the triad's
     * own static schedule. */
#pragma omp parallel
    {
#pragma omp single
        team = omp_get_num_threads();
#pragma omp for schedule(static)
        for (long i = 0; i < n; i++) {
            a[i] = 0.0;
            b[i] = b_at(i);
            c[i] = c_at(i);
        }
    }
    double rates[1000];
    for (int r = 0; r < reps; r++) {
        double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            a[i] = b[i] + s * c[i];
        double t = omp_get_wtime() - t0;
        rates[r] = 24.0 * n / (t > 0 ? t : 1e-9) / 1e6;
    }
    long bad = 0;
    for (long i = 0; i < n; i++)
        bad += a[i] != b_at(i) + s * c_at(i);
    qsort(rates, reps, sizeof rates[0], cmp);
    printf("# stream triad: %ld doubles per array, %.1f MiB in all, %d reps\n", n,
           3.0 * n * sizeof(double) / (1 << 20), reps);
    printf("cpus %d\n", omp_get_num_procs());
    printf("threads %d\n", team);
    printf("triad_best_MBps %.1f\n", rates[reps - 1]);
    printf("triad_median_MBps %.1f\n", (rates[(reps - 1) / 2] + rates[reps / 2]) / 2);
    if (bad || team != asked) {
        printf("triad check FAILED: %ld of %ld elements wrong, %d of %d threads ran\n", bad, n,
               team, asked);
        return 1;
    }
    printf("triad check ok: %ld elements, %d threads\n", n, team);
    return 0;
}
