/* The cancel of a send whose receiver has ended without receiving it:
 * rank 1 starts a rendezvous-sized Isend to rank 0, which finalizes and
 * exits without a receive.  Once rank 0 is gone, rank 1's MPI_Cancel and
 * MPI_Wait return, cancelled (the message was never taken whole), and
 * rank 1 finalizes (the Wait hung when the gone receiver's missing answer
 * was taken for "not cancelled": a rendezvous send then waits for a pull
 * that never comes).  A short (eager) send, which the gone rank may have
 * received, completes not cancelled. */
#include <time.h>
#include "mpitest.h"

#define BIG (1 << 20)

static char buf[BIG];

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    CHECK(t_size == 2, "needs 2 ranks");
    MPI_Request big, small;
    int x = 0;
    if (t_rank == 0) {
        OK(MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Finalize()); /* and exit, tags 2 and 3 never received */
        return 0;
    }
    OK(MPI_Isend(buf, BIG, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &big));
    OK(MPI_Isend(&x, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &small));
    OK(MPI_Send(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
    /* Let rank 0 announce its exit and go (progress meanwhile: it waits
     * for our acknowledgement of its EXITING). */
    double end = MPI_Wtime() + 2;
    while (MPI_Wtime() < end) {
        int flag;
        OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    MPI_Status st;
    int flag = -1;
    OK(MPI_Cancel(&small));
    OK(MPI_Cancel(&big));
    OK(MPI_Wait(&small, &st));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0, "the short send to a gone rank says cancelled");
    OK(MPI_Wait(&big, &st));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "the unreceived long send to a gone rank is not cancelled");
    printf("cancelgone ok\n");
    OK(MPI_Finalize());
    return 0;
}
