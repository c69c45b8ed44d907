/*
 * Neighborhood collectives (MPI-3.1 7.6, 7.7): MPI_(I)neighbor_allgather(v)
 * and _alltoall(v,w) on Cartesian, graph and distributed graph
 * communicators.
 *
 * Each is one round of messages to the out-neighbours and from the
 * in-neighbours (mpi_topo_neighbors gives both lists), built as a
 * nonblocking collective's schedule (mpi_nbc_exchange, mpi_nbc.c) on the
 * communicator's collective context with the call's sequence number, so
 * neighbour traffic never meets point-to-point messages or another
 * collective; the blocking calls wait for it.  Buffer block i belongs to
 * neighbour i of the list, an MPI_PROC_NULL neighbour's included (its
 * block is neither sent nor written).
 *
 * A rank may be a neighbour more than once (a periodic dimension of size 1
 * or 2, a graph's repeated edges); its messages then pair with the
 * receives in the order each side lists them, as MPI-3.1 7.6 has it for
 * graphs.  A Cartesian rank's message to its -1 neighbour in a dimension
 * is that neighbour's block from its +1 neighbour, though: so receives are
 * posted +1 first, then -1, per dimension, and the k-th message from a
 * rank (sent -1 first) still lands in the right block.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_coll.h"

/* One side of a call as the program gave it (buf: to check; the receive
 * buffer itself goes beside, as it is written): a count and type for every
 * neighbour (counts/types NULL), or one each; displacements in elements
 * (displs), bytes (bdispls), consecutive blocks of count (neither, and
 * not same), or the one block for everyone (same: allgather's send). */
struct arg {
    const void *buf;
    int count;
    MPI_Datatype type;
    const int *counts, *displs;
    const MPI_Aint *bdispls;
    const MPI_Datatype *types;
    bool same;
};

/* The entries of mpi_nbc_exchange for n neighbours, checked. */
static int entries(struct cx *x, const struct arg *a, int n, int *cnt, long *bd,
                   MPI_Datatype *tv)
{
    if (a->buf == MPI_IN_PLACE)
        return mpi_error(x->h, MPI_ERR_BUFFER, x->call, "MPI_IN_PLACE is not allowed in a "
                         "neighborhood collective");
    if (n && ((a->counts == NULL) != (a->displs == NULL && a->bdispls == NULL)))
        return mpi_error(x->h, MPI_ERR_ARG, x->call, "NULL counts or displacements");
    for (int i = 0; i < n; i++) {
        MPI_Datatype th = a->types ? a->types[i] : a->type;
        int c = a->counts ? a->counts[i] : a->count;
        struct mtype *t;
        TRY(mpi_check_type(x->call, x->h, th, &t));
        TRY(mpi_check_count(x->call, x->h, c));
        long d = a->bdispls ? a->bdispls[i]
                 : a->counts ? (long)a->displs[i] * mpi_extent(t)
                 : a->same ? 0
                           : (long)i * c * mpi_extent(t);
        TRY(mpi_check_buf(x->call, x->h, (const char *)a->buf + d, c, t));
        cnt[i] = c;
        bd[i] = d;
        tv[i] = th;
    }
    return MPI_SUCCESS;
}

static void swap_int(int *a, int *b)
{
    int t = *a;
    *a = *b;
    *b = t;
}

static int neighbor(const char *call, struct arg snd, struct arg rcv, void *recvbuf,
                    MPI_Comm comm, MPI_Request *request)
{
    struct cx x;
    if (request)
        *request = MPI_REQUEST_NULL;
    TRY(begin(&x, call, comm));
    int nin, nout, *in, *out;
    TRY(mpi_topo_neighbors(call, comm, x.c, &nin, &in, &nout, &out));
    int *cnt = xmalloc(&x, (long)sizeof(int) * (nin + nout));
    long *bd = xmalloc(&x, (long)sizeof(long) * (nin + nout));
    MPI_Datatype *tv = xmalloc(&x, (long)sizeof(MPI_Datatype) * (nin + nout));
    int rc = entries(&x, &snd, nout, cnt, bd, tv);
    if (!rc)
        rc = entries(&x, &rcv, nin, cnt + nout, bd + nout, tv + nout);
    if (!rc && x.c->cart)
        /* Receive order: +1, then -1 (see the top); every entry keeps its
         * own block. */
        for (int k = nout; k + 1 < nout + nin; k += 2) {
            swap_int(&in[k - nout], &in[k - nout + 1]);
            swap_int(&cnt[k], &cnt[k + 1]);
            long b = bd[k];
            bd[k] = bd[k + 1];
            bd[k + 1] = b;
            MPI_Datatype t = tv[k];
            tv[k] = tv[k + 1];
            tv[k + 1] = t;
        }
    if (!rc) {
        struct nbc_side s = {.counts = cnt, .displs = bd, .types = tv, .peers = out, .n = nout};
        struct nbc_side r = {.counts = cnt + nout, .displs = bd + nout, .types = tv + nout,
                             .peers = in, .n = nin};
        MPI_Request req;
        rc = mpi_nbc_exchange(&x, snd.buf, s, recvbuf, r, &req);
        if (!rc && request)
            *request = req;
        else if (!rc)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    free(cnt);
    free(bd);
    free(tv);
    free(in);
    free(out);
    return rc;
}

/* ---- the calls: each blocking one is its nonblocking one, waited for ---- */

static int allgather(const char *call, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                     const int *displs, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    struct arg s = {.buf = sendbuf, .count = sendcount, .type = sendtype, .same = true};
    struct arg r = {.buf = recvbuf, .count = recvcount, .type = recvtype,
                    .counts = recvcounts, .displs = displs};
    return neighbor(call, s, r, recvbuf, comm, request);
}

int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather("MPI_Neighbor_allgather", sendbuf, sendcount, sendtype, recvbuf, NULL,
                     NULL, recvcount, recvtype, comm, NULL);
}

int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    return allgather("MPI_Ineighbor_allgather", sendbuf, sendcount, sendtype, recvbuf, NULL,
                     NULL, recvcount, recvtype, comm, request);
}

int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather("MPI_Neighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf,
                     recvcounts, displs, 0, recvtype, comm, NULL);
}

int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return allgather("MPI_Ineighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf,
                     recvcounts, displs, 0, recvtype, comm, request);
}

static int alltoall(const char *call, const void *sendbuf, const int *sendcounts,
                    const int *sdispls, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int *recvcounts, const int *rdispls, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    struct arg s = {.buf = sendbuf, .count = sendcount, .type = sendtype,
                    .counts = sendcounts, .displs = sdispls};
    struct arg r = {.buf = recvbuf, .count = recvcount, .type = recvtype,
                    .counts = recvcounts, .displs = rdispls};
    return neighbor(call, s, r, recvbuf, comm, request);
}

int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall("MPI_Neighbor_alltoall", sendbuf, NULL, NULL, sendcount, sendtype, recvbuf,
                    NULL, NULL, recvcount, recvtype, comm, NULL);
}

int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request)
{
    return alltoall("MPI_Ineighbor_alltoall", sendbuf, NULL, NULL, sendcount, sendtype,
                    recvbuf, NULL, NULL, recvcount, recvtype, comm, request);
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall("MPI_Neighbor_alltoallv", sendbuf, sendcounts, sdispls, 0, sendtype,
                    recvbuf, recvcounts, rdispls, 0, recvtype, comm, NULL);
}

int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    return alltoall("MPI_Ineighbor_alltoallv", sendbuf, sendcounts, sdispls, 0, sendtype,
                    recvbuf, recvcounts, rdispls, 0, recvtype, comm, request);
}

static int alltoallw(const char *call, const void *sendbuf, const int *sendcounts,
                     const MPI_Aint *sdispls, const MPI_Datatype *sendtypes, void *recvbuf,
                     const int *recvcounts, const MPI_Aint *rdispls,
                     const MPI_Datatype *recvtypes, MPI_Comm comm, MPI_Request *request)
{
    struct arg s = {.buf = sendbuf, .counts = sendcounts, .bdispls = sdispls,
                    .types = sendtypes};
    struct arg r = {.buf = recvbuf, .counts = recvcounts, .bdispls = rdispls,
                    .types = recvtypes};
    return neighbor(call, s, r, recvbuf, comm, request);
}

int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                           const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                           void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                           const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return alltoallw("MPI_Neighbor_alltoallw", sendbuf, sendcounts, sdispls, sendtypes,
                     recvbuf, recvcounts, rdispls, recvtypes, comm, NULL);
}

int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                            void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request *request)
{
    return alltoallw("MPI_Ineighbor_alltoallw", sendbuf, sendcounts, sdispls, sendtypes,
                     recvbuf, recvcounts, rdispls, recvtypes, comm, request);
}
