/* The launch benchmark's trivial program, one source for both builds: the
 * library's start-up (libnx on Tern, MPI_Init under libnx-mpi), one gsync
 * (MPI_Init's own address exchange already synchronises the MPI ranks), exit.
 * Without the gsync, 4 Tern ranks that never talk could hang in libnx's exit
 * handshake (rank 0 gave up after 10 s, the others stayed: 2026-11-21). */
#include <nx.h>

int main(void)
{
    gsync();
    return mynode() < 0 || numnodes() < 1;
}
