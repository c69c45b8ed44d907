/* The launch benchmark's trivial program, one source for both builds: the
 * library's start-up (libnx on Tern, MPI_Init under libnx-mpi), one gsync
 * (MPI_Init's own address exchange already synchronises the MPI ranks), exit.
 * Without the gsync, 4 Tern ranks that never talk could hang in libnx's exit
 * handshake (rank 0 gave up after 10 s, the others stayed: 2026-11-21). */
#include <stdio.h>
#include <nx.h>

int main(void)
{
    gsync();
    /* What the harness waits for on Linux: an MPICH job that hangs in
     * MPI_Finalize after it is stopped (bench/ternbench/cluster_exps.py, warm_up). */
    if (mynode() == 0)
        printf("E done\n");
    return mynode() < 0 || numnodes() < 1;
}
