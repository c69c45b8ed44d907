/*
 * Persistent collectives (MPI-4.0 6.13: MPI_Barrier_init ... MPI_Exscan_init).
 *
 * The init call checks the communicator and keeps the arguments (MPI-4.0:
 * buffers and arrays stay the program's, unchanged while the request
 * lives); every MPI_Start runs the nonblocking collective of the same
 * arguments (mpi_nbc.c) as the request's inner request, which Test and
 * Wait step.
 *
 * What pairs the ranks' messages is the collective sequence number, and
 * MPI-4.0 orders the init calls, not the starts (rank 0 may start a Bcast
 * then a Barrier, rank 1 the Barrier first): so the init takes the number
 * and every start runs under it.  Starts of one request reuse it safely:
 * a start waits for the last to finish here, and messages between two
 * ranks do not overtake each other.
 */
#include <stdlib.h>

#include "mpi_coll.h"

enum pkind {
    P_BARRIER, P_BCAST, P_GATHER, P_GATHERV, P_SCATTER, P_SCATTERV, P_ALLGATHER, P_ALLGATHERV,
    P_ALLTOALL, P_ALLTOALLV, P_ALLTOALLW, P_REDUCE, P_ALLREDUCE, P_REDSCAT_BLOCK, P_REDSCAT,
    P_SCAN, P_EXSCAN
};

struct pcoll {
    enum pkind kind;
    const void *sbuf;
    void *rbuf;
    int scount, rcount, root;
    const int *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Datatype stype, rtype;
    const MPI_Datatype *stypes, *rtypes;
    MPI_Op op;
    MPI_Comm comm;
    uint32_t seq;         /* the communicator's collective number, taken at init */
    bool held_s, held_r;  /* derived types held while the request lives */
    MPI_Request inner;    /* the running nonblocking collective */
};

/* The nonblocking collective of p's arguments. */
static int run(struct pcoll *p, MPI_Request *r)
{
    switch (p->kind) {
    case P_BARRIER: return MPI_Ibarrier(p->comm, r);
    case P_BCAST: return MPI_Ibcast(p->rbuf, p->rcount, p->rtype, p->root, p->comm, r);
    case P_GATHER:
        return MPI_Igather(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount, p->rtype, p->root,
                           p->comm, r);
    case P_GATHERV:
        return MPI_Igatherv(p->sbuf, p->scount, p->stype, p->rbuf, p->rcounts, p->rdispls,
                            p->rtype, p->root, p->comm, r);
    case P_SCATTER:
        return MPI_Iscatter(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount, p->rtype, p->root,
                            p->comm, r);
    case P_SCATTERV:
        return MPI_Iscatterv(p->sbuf, p->scounts, p->sdispls, p->stype, p->rbuf, p->rcount,
                             p->rtype, p->root, p->comm, r);
    case P_ALLGATHER:
        return MPI_Iallgather(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount, p->rtype,
                              p->comm, r);
    case P_ALLGATHERV:
        return MPI_Iallgatherv(p->sbuf, p->scount, p->stype, p->rbuf, p->rcounts, p->rdispls,
                               p->rtype, p->comm, r);
    case P_ALLTOALL:
        return MPI_Ialltoall(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount, p->rtype,
                             p->comm, r);
    case P_ALLTOALLV:
        return MPI_Ialltoallv(p->sbuf, p->scounts, p->sdispls, p->stype, p->rbuf, p->rcounts,
                              p->rdispls, p->rtype, p->comm, r);
    case P_ALLTOALLW:
        return MPI_Ialltoallw(p->sbuf, p->scounts, p->sdispls, p->stypes, p->rbuf, p->rcounts,
                              p->rdispls, p->rtypes, p->comm, r);
    case P_REDUCE:
        return MPI_Ireduce(p->sbuf, p->rbuf, p->rcount, p->rtype, p->op, p->root, p->comm, r);
    case P_ALLREDUCE:
        return MPI_Iallreduce(p->sbuf, p->rbuf, p->rcount, p->rtype, p->op, p->comm, r);
    case P_REDSCAT_BLOCK:
        return MPI_Ireduce_scatter_block(p->sbuf, p->rbuf, p->rcount, p->rtype, p->op, p->comm,
                                         r);
    case P_REDSCAT:
        return MPI_Ireduce_scatter(p->sbuf, p->rbuf, p->rcounts, p->rtype, p->op, p->comm, r);
    case P_SCAN: return MPI_Iscan(p->sbuf, p->rbuf, p->rcount, p->rtype, p->op, p->comm, r);
    case P_EXSCAN: return MPI_Iexscan(p->sbuf, p->rbuf, p->rcount, p->rtype, p->op, p->comm, r);
    }
    return MPI_ERR_INTERN;
}

/* The request of a persistent collective.  Only what every rank uses is
 * checked here (the communicator, the info); the rest, which depends on
 * the rank (a root's receive side ...), is checked by each start, as the
 * nonblocking call checks it. */
static int make(const char *call, const struct pcoll *a, MPI_Info info, MPI_Request *request)
{
    NEED_INIT(call);
    *request = MPI_REQUEST_NULL;
    struct mcomm *c;
    TRY(mpi_check_comm(call, a->comm, &c));
    if (info != MPI_INFO_NULL && !mpi_info_ok(info))
        return mpi_error(a->comm, MPI_ERR_INFO, call, "%#x is not an info object",
                         (unsigned)info);
    struct pcoll *p = malloc(sizeof *p);
    if (!p)
        return mpi_error(a->comm, MPI_ERR_NO_MEM, call, "no memory");
    struct mreq *r = mpi_req_new(call, a->comm);
    if (!r) {
        free(p);
        return MPI_ERR_INTERN;
    }
    *p = *a;
    p->inner = MPI_REQUEST_NULL;
    p->seq = ++c->coll_seq;
    /* A derived type the program frees before a start stays usable. */
    p->held_s = mpi_type_hold(p->stype);
    p->held_r = mpi_type_hold(p->rtype);
    r->kind = R_PCOLL;
    r->persistent = true;
    r->pcoll = p;
    *request = mpi_req_handle(r);
    return MPI_SUCCESS;
}

int mpi_pcoll_start(const char *call, struct mreq *r)
{
    struct mcomm *c;
    TRY(mpi_check_comm(call, r->pcoll->comm, &c));
    /* The nonblocking call takes the communicator's next number: make it
     * the one the init took, and put the count back after. */
    uint32_t now = c->coll_seq;
    c->coll_seq = r->pcoll->seq - 1;
    int rc = run(r->pcoll, &r->pcoll->inner);
    c->coll_seq = now;
    TRY(rc);
    r->active = true;
    r->done_now = false;
    return MPI_SUCCESS;
}

/* The inner request done: its status (empty) is the request's. */
static void finish(struct mreq *r)
{
    struct mreq *in = mpi_req_get(r->pcoll->inner);
    mpi_req_complete(in, &r->pcoll->inner, MPI_STATUS_IGNORE);
    mpi_status_empty(&r->status);
    r->done_now = true;
}

bool mpi_pcoll_test(struct mreq *r)
{
    if (mpi_req_test(mpi_req_get(r->pcoll->inner)))
        finish(r);
    return r->done_now;
}

void mpi_pcoll_wait(struct mreq *r)
{
    mpi_req_wait(mpi_req_get(r->pcoll->inner));
    finish(r);
}

void mpi_pcoll_release(struct mreq *r)
{
    struct pcoll *p = r->pcoll;
    /* Freed while started: its collective still finishes (reap_freed), as
     * the other ranks count on its messages. */
    if (p->inner != MPI_REQUEST_NULL)
        MPI_Request_free(&p->inner);
    if (p->held_s)
        mpi_type_drop(p->stype);
    if (p->held_r)
        mpi_type_drop(p->rtype);
    free(p);
    r->pcoll = NULL;
}

/* ---- the calls ---- */

#define NONE MPI_DATATYPE_NULL

int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct pcoll a = {.kind = P_BARRIER, .comm = comm, .stype = NONE, .rtype = NONE};
    return make("MPI_Barrier_init", &a, info, request);
}

int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                   MPI_Info info, MPI_Request *request)
{
    struct pcoll a = {.kind = P_BCAST, .rbuf = buffer, .rcount = count, .rtype = datatype,
                      .stype = NONE, .root = root, .comm = comm};
    return make("MPI_Bcast_init", &a, info, request);
}

/* Gathers, scatters, all-to-alls: a send side and a receive side. */
static int two_sided(const char *call, enum pkind kind, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request)
{
    struct pcoll a = {.kind = kind, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .root = root,
                      .comm = comm};
    return make(call, &a, info, request);
}

int MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request)
{
    return two_sided("MPI_Gather_init", P_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                     recvcount, recvtype, root, comm, info, request);
}

int MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Info info, MPI_Request *request)
{
    return two_sided("MPI_Scatter_init", P_SCATTER, sendbuf, sendcount, sendtype, recvbuf,
                     recvcount, recvtype, root, comm, info, request);
}

int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Info info, MPI_Request *request)
{
    return two_sided("MPI_Allgather_init", P_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                     recvcount, recvtype, 0, comm, info, request);
}

int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    return two_sided("MPI_Alltoall_init", P_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf,
                     recvcount, recvtype, 0, comm, info, request);
}

int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct pcoll a = {.kind = P_GATHERV, .sbuf = sendbuf, .scount = sendcount,
                      .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts,
                      .rdispls = displs, .rtype = recvtype, .root = root, .comm = comm};
    return make("MPI_Gatherv_init", &a, info, request);
}

int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    struct pcoll a = {.kind = P_SCATTERV, .sbuf = sendbuf, .scounts = sendcounts,
                      .sdispls = displs, .stype = sendtype, .rbuf = recvbuf,
                      .rcount = recvcount, .rtype = recvtype, .root = root, .comm = comm};
    return make("MPI_Scatterv_init", &a, info, request);
}

int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int displs[],
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    struct pcoll a = {.kind = P_ALLGATHERV, .sbuf = sendbuf, .scount = sendcount,
                      .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts,
                      .rdispls = displs, .rtype = recvtype, .comm = comm};
    return make("MPI_Allgatherv_init", &a, info, request);
}

int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Info info, MPI_Request *request)
{
    struct pcoll a = {.kind = P_ALLTOALLV, .sbuf = sendbuf, .scounts = sendcounts,
                      .sdispls = sdispls, .stype = sendtype, .rbuf = recvbuf,
                      .rcounts = recvcounts, .rdispls = rdispls, .rtype = recvtype,
                      .comm = comm};
    return make("MPI_Alltoallv_init", &a, info, request);
}

/* The types of the arrays stay the program's to keep, as the arrays. */
int MPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                       MPI_Info info, MPI_Request *request)
{
    struct pcoll a = {.kind = P_ALLTOALLW, .sbuf = sendbuf, .scounts = sendcounts,
                      .sdispls = sdispls, .stypes = sendtypes, .stype = NONE,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls,
                      .rtypes = recvtypes, .rtype = NONE, .comm = comm};
    return make("MPI_Alltoallw_init", &a, info, request);
}

/* Reductions: one type, one operation. */
static int reduction(const char *call, enum pkind kind, const void *sendbuf, void *recvbuf,
                     int count, const int *counts, MPI_Datatype datatype, MPI_Op op, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct pcoll a = {.kind = kind, .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
                      .rcounts = counts, .rtype = datatype, .stype = NONE, .op = op,
                      .root = root, .comm = comm};
    return make(call, &a, info, request);
}

int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return reduction("MPI_Reduce_init", P_REDUCE, sendbuf, recvbuf, count, NULL, datatype, op,
                     root, comm, info, request);
}

int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return reduction("MPI_Allreduce_init", P_ALLREDUCE, sendbuf, recvbuf, count, NULL,
                     datatype, op, 0, comm, info, request);
}

int MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *request)
{
    return reduction("MPI_Reduce_scatter_block_init", P_REDSCAT_BLOCK, sendbuf, recvbuf,
                     recvcount, NULL, datatype, op, 0, comm, info, request);
}

int MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                            MPI_Request *request)
{
    return reduction("MPI_Reduce_scatter_init", P_REDSCAT, sendbuf, recvbuf, 0, recvcounts,
                     datatype, op, 0, comm, info, request);
}

int MPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return reduction("MPI_Scan_init", P_SCAN, sendbuf, recvbuf, count, NULL, datatype, op, 0,
                     comm, info, request);
}

int MPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return reduction("MPI_Exscan_init", P_EXSCAN, sendbuf, recvbuf, count, NULL, datatype, op,
                     0, comm, info, request);
}
