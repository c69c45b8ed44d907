/* The launch benchmark's trivial program, one source for both builds: the
 * library's start-up (libnx on Tern, MPI_Init under libnx-mpi), then exit. */
#include <nx.h>

int main(void)
{
    return mynode() < 0 || numnodes() < 1;
}
