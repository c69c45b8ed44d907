/* 64 MiB messages: rank 0 sends one to rank 1 (Send/Recv, then Isend/Irecv
 * back), in a contiguous and in a vector type; each byte checked.  Other
 * ranks take part in a 64 MiB Bcast.  Prints "bigmsg ok". */
#include "mpitest.h"

#define BIG (64L << 20)

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    unsigned char *a = malloc(BIG), *b = malloc(BIG);
    CHECK(a && b, "no memory for 2 x 64 MiB");
    if (t_rank == 0) {
        fill(a, BIG, 11);
        OK(MPI_Send(a, (int)BIG, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
        MPI_Request rq;
        MPI_Status st;
        memset(b, 0, BIG);
        OK(MPI_Irecv(b, (int)(BIG / 8), MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, &rq));
        OK(MPI_Wait(&rq, &st));
        CHECK(t_count(&st, MPI_DOUBLE) == BIG / 8, "count back");
        long bad = first_bad(b, BIG, 12);
        CHECK(bad < 0, "byte %ld of the reply wrong", bad);
    } else if (t_rank == 1) {
        MPI_Status st;
        memset(b, 0, BIG);
        OK(MPI_Recv(b, (int)BIG, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st));
        CHECK(t_count(&st, MPI_BYTE) == BIG, "count");
        long bad = first_bad(b, BIG, 11);
        CHECK(bad < 0, "byte %ld wrong", bad);
        fill(a, BIG, 12);
        MPI_Request rq;
        OK(MPI_Isend(a, (int)(BIG / 8), MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
    /* 32 MiB of every other 8 bytes out of 64 MiB: a vector both ways */
    MPI_Datatype half;
    OK(MPI_Type_vector((int)(BIG / 16), 1, 2, MPI_DOUBLE, &half));
    OK(MPI_Type_commit(&half));
    if (t_rank < 2) {
        int peer = 1 - t_rank;
        fill(a, BIG, 20 + t_rank);
        memset(b, 0, BIG);
        OK(MPI_Sendrecv(a, 1, half, peer, 3, b, 1, half, peer, 3, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        for (long i = 0; i < BIG; i++)
            if ((i / 8) % 2 == 0)
                CHECK(b[i] == pattern(20 + peer, i), "vector byte %ld", i);
            else
                CHECK(b[i] == 0, "vector hole %ld written", i);
    }
    OK(MPI_Type_free(&half));
    if (t_rank == 0)
        fill(a, BIG, 30);
    OK(MPI_Bcast(a, (int)BIG, MPI_BYTE, 0, MPI_COMM_WORLD));
    CHECK(first_bad(a, BIG, 30) < 0, "bcast");
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0)
        printf("bigmsg ok\n");
    OK(MPI_Finalize());
    return 0;
}
