/* Helpers for the MPI test programs (tests/mpi/): they run on the Linux-host
 * Portals (tests/test_mpi_host.py) and on Tern nodes (tests/test_mpi_tern.py). */
#ifndef MPITEST_H
#define MPITEST_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../pattern.h"

static int t_rank, t_size;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            printf("rank %d: FAILED %s:%d: ", t_rank, __FILE__, __LINE__);        \
            printf(__VA_ARGS__);                                                  \
            printf("\n");                                                         \
            fflush(stdout);                                                       \
            MPI_Abort(MPI_COMM_WORLD, 2);                                         \
        }                                                                         \
    } while (0)

#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

static inline void t_init(int *argc, char ***argv)
{
    OK(MPI_Init(argc, argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &t_rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &t_size));
}

static inline int t_count(const MPI_Status *st, MPI_Datatype t)
{
    int n = -1;
    MPI_Get_count(st, t, &n);
    return n;
}
#endif
