/* Hybrid MPI + OpenMP, as users bring it: MPI_Init_thread(FUNNELED), an
 * OpenMP team per rank that sums a share of a series and notes the cores it
 * ran on, then MPI_Allreduce.  Built by the test with `tern-mpicc -fopenmp`
 * (tests/test_yod_ppn.py); prints each rank's view and rank 0 the total,
 * which must be the series' sum whatever the team sizes:
 *   rank R of N: thread level L, team T, cpus C,D...
 *   total S: ok */
#define _GNU_SOURCE
#include <mpi.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>

#define TERMS 2000000L

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long local = 0;
    int team = 0;
    unsigned long long cpus = 0;
#pragma omp parallel reduction(+ : local)
    {
#pragma omp single
        team = omp_get_num_threads();
        int c = sched_getcpu();
#pragma omp critical
        if (c >= 0 && c < 64)
            cpus |= 1ULL << c;
#pragma omp for
        for (long i = rank; i < TERMS; i += size)
            local += i % 1000;
    }
    char where[256] = "";
    int len = 0;
    for (int c = 0; c < 64; c++)
        if (cpus >> c & 1)
            len += snprintf(where + len, sizeof where - (size_t)len, "%s%d", len ? "," : "", c);
    printf("rank %d of %d: thread level %d, team %d, cpus %s\n", rank, size, provided, team,
           where);
    long total = 0;
    MPI_Allreduce(&local, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    long want = (TERMS / 1000) * (999L * 1000 / 2);
    if (rank == 0)
        printf("total %ld: %s\n", total, total == want ? "ok" : "WRONG");
    MPI_Finalize();
    return total == want ? 0 : 1;
}
