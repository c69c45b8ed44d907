/* The profiling interface (MPI-3.1 14.2): this program defines MPI_Init,
 * MPI_Send, MPI_Recv, MPI_Bcast and MPI_Allreduce itself, counting the
 * calls and passing each to its PMPI_ name, as a tool (mpiP, a tracer)
 * does.  Its own calls reach its wrappers and do their work; the
 * library's internal messages (Sendrecv's, Bcast's, Allreduce's) do not
 * reach the wrappers.  PMPI_ calls made directly work too.  Prints
 * "profile ok on N ranks". */
#include "mpitest.h"

static int inits, sends, recvs, bcasts, allreduces;

int MPI_Init(int *argc, char ***argv)
{
    inits++;
    return PMPI_Init(argc, argv);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    sends++;
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    recvs++;
    return PMPI_Recv(buf, count, type, source, tag, comm, status);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    bcasts++;
    return PMPI_Bcast(buf, count, type, root, comm);
}

int MPI_Allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    allreduces++;
    return PMPI_Allreduce(in, out, count, type, op, comm);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv); /* MPI_Init: through the wrapper */
    CHECK(inits == 1, "MPI_Init's wrapper ran %d times", inits);
    int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    /* A ring by Send and Recv, 5 times (even ranks send first). */
    for (int i = 0; i < 5; i++) {
        int out = t_rank * 10 + i, in = -1;
        if (t_size == 1) {
            in = out;
        } else if (t_rank % 2 == 0) {
            OK(MPI_Send(&out, 1, MPI_INT, right, i, MPI_COMM_WORLD));
            OK(MPI_Recv(&in, 1, MPI_INT, left, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            OK(MPI_Recv(&in, 1, MPI_INT, left, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            OK(MPI_Send(&out, 1, MPI_INT, right, i, MPI_COMM_WORLD));
        }
        CHECK(in == left * 10 + i, "ring step %d: %d", i, in);
    }
    int want_p2p = t_size == 1 ? 0 : 5;
    CHECK(sends == want_p2p && recvs == want_p2p, "after the ring: %d sends, %d recvs", sends,
          recvs);
    /* Calls the program did not wrap, whose work is messages: the
     * wrappers see none of them. */
    int out = t_rank, in = -1;
    OK(MPI_Sendrecv(&out, 1, MPI_INT, right, 99, &in, 1, MPI_INT, left, 99, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    CHECK(in == left, "sendrecv %d", in);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int v = t_rank == 0 ? 4242 : 0, sum = 0;
    OK(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD));
    OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(v == 4242 && sum == 4242 * t_size, "bcast %d, allreduce %d", v, sum);
    CHECK(sends == want_p2p && recvs == want_p2p && bcasts == 1 && allreduces == 1,
          "after the collectives: %d sends, %d recvs, %d bcasts, %d allreduces", sends, recvs,
          bcasts, allreduces);
    /* PMPI_ directly: no wrapper counts it. */
    int r = -1;
    OK(PMPI_Comm_rank(MPI_COMM_WORLD, &r));
    OK(PMPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    CHECK(r == t_rank && sum == 4242 && allreduces == 1, "PMPI_: rank %d, max %d", r, sum);
    MPI_Fint f = PMPI_Comm_c2f(MPI_COMM_WORLD);
    CHECK(PMPI_Comm_f2c(f) == MPI_COMM_WORLD, "PMPI_Comm_c2f/f2c");
    OK(PMPI_Pcontrol(1));
    if (t_rank == 0)
        printf("profile ok on %d ranks\n", t_size);
    MPI_Finalize();
    return 0;
}
