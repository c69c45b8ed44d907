/*
 * What the collective operations' files share (mpi_coll.c, mpi_gatherv.c,
 * mpi_nbc.c, mpi_neighbor.c, mpi_intercoll.c): a call's context, its
 * messages on the communicator's collective context id, argument checks,
 * packed views of typed buffers.  Static inline: no symbol of these leaves
 * the library (a program may have its own csend: NX's).
 */
#ifndef MPI_COLL_H
#define MPI_COLL_H

#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

struct cx {
    int rc;               /* mpi_intercoll.c's begin_rooted: its outcome */
    const char *call;
    MPI_Comm h;
    struct mcomm *c;
    uint32_t seq;
    int n, me;
};

/* Intercommunicators' collectives (mpi_intercoll.c). */
bool mpi_is_inter(MPI_Comm comm);
int mpi_inter_barrier(MPI_Comm comm);
int mpi_inter_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int mpi_inter_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                     MPI_Op op, int root, MPI_Comm comm);
int mpi_inter_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                        MPI_Op op, MPI_Comm comm);
int mpi_inter_reduce_scatter(const char *call, const void *sendbuf, void *recvbuf,
                             const int counts[], int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm);
int mpi_inter_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int mpi_inter_scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int mpi_inter_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int mpi_inter_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int mpi_inter_gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                      int root, MPI_Comm comm);
int mpi_inter_scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm);
int mpi_inter_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype, MPI_Comm comm);
int mpi_inter_alltoallw(const char *call, const void *sendbuf, const int sendcounts[],
                        const int sdispls[], const MPI_Datatype sendtypes[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[],
                        MPI_Datatype recvtype, MPI_Comm comm);

/* The general all-to-all of the nonblocking collectives (mpi_nbc.c), as a
 * schedule whose request it gives: what this rank sends and receives, per
 * entry a count, a byte displacement and a type (NULL counts: nothing).
 * Entry i is rank i (peers NULL), or peers[i] of n (MPI_PROC_NULL: no
 * message; the neighborhood collectives, mpi_neighbor.c).  The data goes
 * packed; to ranks by number, a rank's own part is copied in the call. */
/* Building a schedule (mpi_nbc.c, whose head says how one runs): its
 * messages (a tag of T_* pairs them with the peers', whatever round each
 * side is in), the local steps after a round's messages (reduce: inout =
 * in op inout; typed copy; unpack), memory freed with it, derived types
 * held while it lives (three at most), and its start. */
enum { T_BCAST = 1, T_REDUCE, T_TO_ROOT, T_SCATTER, T_SCAN, T_ALL, T_BARRIER = 16 };
struct nbc;
struct nbc *mpi_nbc_new(const struct cx *x);
void mpi_nbc_send(struct nbc *s, int tag, int peer, const void *buf, long len);
void mpi_nbc_recv(struct nbc *s, int tag, int peer, void *buf, long len);
void mpi_nbc_reduce(struct nbc *s, const void *in, void *inout, long count, MPI_Datatype t,
                    MPI_Op op);
void mpi_nbc_tcopy(struct nbc *s, const void *from, void *to, long count, MPI_Datatype t);
void mpi_nbc_unpack(struct nbc *s, const void *packed, void *to, long count, MPI_Datatype t);
void mpi_nbc_end_round(struct nbc *s);
void *mpi_nbc_alloc(struct nbc *s, long len);
/* Room for count elements of t as they lie in memory (the pointer is where
 * element 0's offset 0 goes), and one holding this rank's contribution to
 * a reduction (sendbuf, or recvbuf for MPI_IN_PLACE). */
void *mpi_nbc_typed_room(struct nbc *s, const struct mtype *t, long count);
void *mpi_nbc_contribution(struct nbc *s, const void *sendbuf, const void *recvbuf, int count,
                           MPI_Datatype dt);
void mpi_nbc_hold(struct nbc *s, MPI_Datatype t);
int mpi_nbc_launch(struct nbc *s, MPI_Request *request);
/* An in-place Iallreduce on comm's collective context under sequence
 * number seq, which the caller keeps apart from the communicator's own
 * (mpi_idup.c's agreements). */
int mpi_nbc_allreduce_at(const char *call, MPI_Comm comm, uint32_t seq, void *buf, int count,
                         MPI_Datatype datatype, MPI_Op op, MPI_Request *request);

struct nbc_side {
    const int *counts;
    const long *displs;           /* bytes */
    const MPI_Datatype *types;
    const int *peers;
    int n;
};
int mpi_nbc_exchange(struct cx *x, const void *sendbuf, struct nbc_side snd, void *recvbuf,
                     struct nbc_side rcv, MPI_Request *request);

/* Their nonblocking collectives (mpi_internbc.c); the v-, w- and plain
 * forms share one call each (counts NULL: count each). */
int mpi_inter_ibarrier(MPI_Comm comm, MPI_Request *request);
int mpi_inter_ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                     MPI_Request *request);
int mpi_inter_ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                      MPI_Op op, int root, MPI_Comm comm, MPI_Request *request);
int mpi_inter_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                         MPI_Op op, MPI_Comm comm, MPI_Request *request);
/* The same under sequence number seq, kept apart by the caller (mpi_idup.c). */
int mpi_inter_iallreduce_at(const char *call, MPI_Comm comm, uint32_t seq,
                            const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                            MPI_Op op, MPI_Request *request);
int mpi_inter_ireduce_scatter(const char *call, const void *sendbuf, void *recvbuf,
                              const int counts[], int count, MPI_Datatype dt, MPI_Op op,
                              MPI_Comm comm, MPI_Request *request);
int mpi_inter_igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);
int mpi_inter_iscatter(const void *sendbuf, const int sendcounts[], const int displs[],
                       int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);
int mpi_inter_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int displs[],
                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Request *request);
int mpi_inter_ialltoall(const char *call, const void *sendbuf, const int sendcounts[],
                        const int sdispls[], const MPI_Datatype sendtypes[], int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);

static inline int begin(struct cx *x, const char *call, MPI_Comm comm)
{
    x->call = call;
    x->h = comm;
    TRY(mpi_check_comm(call, comm, &x->c));
    if (x->c->inter)
        return mpi_error(comm, MPI_ERR_COMM, call,
                         "this collective operation on intercommunicators is not in Tern's MPI");
    x->seq = ++x->c->coll_seq;
    x->n = x->c->size;
    x->me = x->c->rank;
    return MPI_SUCCESS;
}

static inline uint64_t cbits(const struct cx *x, int step)
{
    return mpi_bits(2 * x->c->ctx + 1, (int)((x->seq << 8) | ((unsigned)step & 0xFF)));
}

static inline struct msg_req *csend(const struct cx *x, int to, int step, const void *buf, long len)
{
    struct msg_req *r = msg_req_new(true);
    if (!r)
        mpi_fatal(x->call, "no engine request left for a collective's message");
    msg_isend(r, mpi_world_of(x->c, to), cbits(x, step), buf, (uint64_t)len, 0);
    return r;
}

static inline struct msg_req *crecv(const struct cx *x, int from, int step, void *buf, long len)
{
    struct msg_req *r = msg_req_new(true);
    if (!r)
        mpi_fatal(x->call, "no engine request left for a collective's message");
    msg_irecv(r, mpi_world_of(x->c, from), cbits(x, step), 0, buf, (uint64_t)len);
    return r;
}

static inline void cwait(const struct cx *x, struct msg_req *r)
{
    msg_wait(r);
    if (r->error || (r->is_recv && r->len != r->count))
        mpi_fatal(x->call, "rank %d sent %llu bytes where %llu were expected: do all ranks "
                  "call the same collectives with matching counts and types?",
                  mpi_rank_of(x->c, (int)r->src), (unsigned long long)r->len,
                  (unsigned long long)r->count);
    msg_req_free(r);
}

/* Send to one, receive from another, both finished. */
static inline void exchange(const struct cx *x, int to, const void *sbuf, long slen, int from,
                     void *rbuf, long rlen, int step)
{
    struct msg_req *r = crecv(x, from, step, rbuf, rlen);
    struct msg_req *s = csend(x, to, step, sbuf, slen);
    cwait(x, r);
    cwait(x, s);
}

static inline void *xmalloc(const struct cx *x, long n)
{
    void *p = malloc(n > 0 ? (size_t)n : 1);
    if (!p)
        mpi_fatal(x->call, "no memory for %ld bytes of collective buffer", n);
    return p;
}

/* ---- checks ---- */

static inline int check_data(const struct cx *x, const void *buf, int count, MPI_Datatype type,
                      struct mtype **t)
{
    TRY(mpi_check_type(x->call, x->h, type, t));
    TRY(mpi_check_count(x->call, x->h, count));
    if (buf != MPI_IN_PLACE)
        TRY(mpi_check_buf(x->call, x->h, buf, count, *t));
    return MPI_SUCCESS;
}

static inline int check_root(const struct cx *x, int root)
{
    if (root >= 0 && root < x->n)
        return MPI_SUCCESS;
    return mpi_error(x->h, MPI_ERR_ROOT, x->call, "root %d is not in 0..%d", root, x->n - 1);
}

/* ---- packed views of typed buffers ---- */

/* The bytes of count elements of t at buf: buf itself when contiguous,
 * else a packed copy (freed by done_view). */
static inline const void *send_view(const struct cx *x, const void *buf, long count,
                             const struct mtype *t, void **tmp)
{
    *tmp = NULL;
    if (mpi_contig(t) || !count)
        return buf;
    *tmp = xmalloc(x, count * t->size);
    mpi_pack(buf, count, t, *tmp);
    return *tmp;
}

static inline void *recv_view(const struct cx *x, void *buf, long count, const struct mtype *t,
                       void **tmp)
{
    *tmp = NULL;
    if (mpi_contig(t) || !count)
        return buf;
    *tmp = xmalloc(x, count * t->size);
    return *tmp;
}

static inline void recv_done(void *buf, long count, const struct mtype *t, void *tmp)
{
    if (tmp) {
        mpi_unpack(tmp, count, t, buf);
        free(tmp);
    }
}

#endif
