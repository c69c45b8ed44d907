/* Thousands of unexpected messages: every rank but 0 sends PER messages of
 * 8..64 bytes (tags cycling) to rank 0 before rank 0 receives any (it waits
 * in a barrier the senders reach only after sending); then rank 0 takes them
 * with MPI_ANY_SOURCE / MPI_ANY_TAG and checks every sender's messages arrive
 * complete and in order.  Prints "unexpected ok: N messages". */
#include "mpitest.h"

#define PER 2000

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    long msg[8];
    if (t_rank) {
        for (long i = 0; i < PER; i++) {
            msg[0] = t_rank;
            msg[1] = i;
            for (int k = 2; k < 8; k++)
                msg[k] = t_rank * 1000003L + i * 7 + k;
            OK(MPI_Send(msg, (int)(2 + i % 7), MPI_LONG, 0, (int)(i % 5), MPI_COMM_WORLD));
        }
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0) {
        long *next = calloc((size_t)t_size, sizeof *next);
        for (long k = 0; k < (long)PER * (t_size - 1); k++) {
            MPI_Status st;
            OK(MPI_Recv(msg, 8, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            long src = st.MPI_SOURCE, i = msg[1];
            CHECK(msg[0] == src && i == next[src], "from %ld: message %ld, expected %ld", src, i,
                  next[src]);
            CHECK(st.MPI_TAG == i % 5 && t_count(&st, MPI_LONG) == 2 + i % 7, "status");
            for (int j = 2; j < 2 + i % 7; j++)
                CHECK(msg[j] == src * 1000003L + i * 7 + j, "data");
            next[src]++;
        }
        printf("unexpected ok: %ld messages\n", (long)PER * (t_size - 1));
        free(next);
    }
    OK(MPI_Finalize());
    return 0;
}
